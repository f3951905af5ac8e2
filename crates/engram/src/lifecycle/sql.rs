//! SQL of the memory lifecycle. Every value is a bound parameter.

use crate::sql::MEMORY_COLUMNS;

/// The live memory of a project and type with this content key (`?1` project, `?2` type,
/// `?3` key).
pub fn candidate_by_key() -> String {
    format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.project_id = ?1 AND m.type = ?2 \
AND m.content_key = ?3 AND m.deprecated = 0 LIMIT 1"
    )
}

/// The live memories of a project, type and visibility nearest a vector, with their
/// cosine (`?1` project, `?2` type, `?3` visibility, `?4` vector, `?5` model, `?6` dims,
/// `?7` limit).
pub fn nearest_candidates() -> String {
    format!(
        "SELECT {MEMORY_COLUMNS}, 1.0 - vector_distance_cos(e.embedding, ?4) AS similarity \
FROM memory_embeddings e JOIN memories m ON m.id = e.memory_id \
WHERE m.project_id = ?1 AND m.type = ?2 AND m.visibility = ?3 AND m.deprecated = 0 \
AND m.chunk_type IS NULL AND e.model_id = ?5 AND e.dims = ?6 \
ORDER BY similarity DESC LIMIT ?7"
    )
}

/// The live memories of a project, type and visibility that best match an FTS5 query,
/// for judging without vectors (`?1` project, `?2` type, `?3` visibility, `?4` query,
/// `?5` limit).
pub fn keyword_candidates() -> String {
    format!(
        "SELECT {MEMORY_COLUMNS} FROM memories_fts f JOIN memories m ON m.id = f.memory_id \
WHERE memories_fts MATCH ?4 AND m.project_id = ?1 AND m.type = ?2 AND m.visibility = ?3 \
AND m.deprecated = 0 AND m.chunk_type IS NULL ORDER BY bm25(memories_fts) LIMIT ?5"
    )
}

/// Folds a repeated memory into a live one (`?1` id, `?2` project, `?3` confidence, `?4`
/// tags, `?5` files, `?6` modules, `?7` provenance sessions, each a JSON array to add,
/// `?8` now): one more occurrence, the lists unioned, used now.
pub const MERGE_MEMORY: &str = "UPDATE memories SET occurrences = occurrences + 1, \
confidence = max(confidence, ?3), \
tags = (SELECT json_group_array(value) FROM (SELECT value FROM json_each(memories.tags) \
UNION SELECT value FROM json_each(?4))), \
related_files = (SELECT json_group_array(value) FROM (SELECT value FROM \
json_each(memories.related_files) UNION SELECT value FROM json_each(?5))), \
related_modules = (SELECT json_group_array(value) FROM (SELECT value FROM \
json_each(memories.related_modules) UNION SELECT value FROM json_each(?6))), \
provenance_session_ids = (SELECT json_group_array(value) FROM (SELECT value FROM \
json_each(memories.provenance_session_ids) UNION SELECT value FROM json_each(?7))), \
last_accessed_at = ?8, updated_at = ?8 \
WHERE id = ?1 AND project_id = ?2 AND deprecated = 0";

/// Gives a live memory the wording of a memory merged into it that says more (`?1` id,
/// `?2` project, `?3` content, `?4` its content key).
pub const ADOPT_WORDING: &str = "UPDATE memories SET content = ?3, content_key = ?4 \
WHERE id = ?1 AND project_id = ?2 AND deprecated = 0";

/// Brings a merged memory's keyword row up to its content and unioned tags and files
/// (`?1` id).
pub const MERGE_KEYWORD_ROW: &str = "UPDATE memories_fts SET \
content = (SELECT content FROM memories WHERE id = ?1), \
tags = (SELECT coalesce(group_concat(t.value, ' '), '') FROM memories m, json_each(m.tags) t \
WHERE m.id = ?1), \
related_files = (SELECT coalesce(group_concat(f.value, ' '), '') FROM memories m, \
json_each(m.related_files) f WHERE m.id = ?1) \
WHERE rowid = (SELECT keyword_rowid FROM memory_keyword_rows WHERE memory_id = ?1)";

/// Retires a live memory that another replaced (`?1` id, `?2` project, `?3` now, `?4` the
/// replacing memory).
pub const SUPERSEDE_MEMORY: &str = "UPDATE memories SET deprecated = 1, deprecated_at = ?3, \
superseded_by = ?4, updated_at = ?3 WHERE id = ?1 AND project_id = ?2 AND deprecated = 0";

/// Appends a history entry (`?1` memory, `?2` project, `?3` action, `?4` before, `?5`
/// after, `?6` reason, `?7` actor, `?8` related memory, `?9` now), only when the memory
/// exists in the project.
pub const INSERT_HISTORY: &str = "INSERT INTO memory_history \
(memory_id, project_id, action, before, after, reason, actor, related_id, at) \
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 \
WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?1 AND project_id = ?2)";

/// A memory's history, oldest first (`?1` memory, `?2` project).
pub const SELECT_HISTORY: &str = "SELECT memory_id, action, before, after, reason, actor, \
related_id, at FROM memory_history WHERE memory_id = ?1 AND project_id = ?2 ORDER BY id";

/// A memory of the project whatever its state, live, retired or superseded (`?1` id,
/// `?2` project).
pub fn select_any_memory() -> String {
    format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ?1 AND m.project_id = ?2")
}

/// A project's live memories (`?1` project), for pruning.
pub fn live_memories() -> String {
    format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.project_id = ?1 AND m.deprecated = 0")
}

/// A project's retired memories (`?1` project): `id`, `deprecated_at`, `user_verified`,
/// `pinned`, `superseded_by`.
pub const RETIRED_MEMORIES: &str = "SELECT id, deprecated_at, user_verified, pinned, \
superseded_by FROM memories WHERE project_id = ?1 AND deprecated = 1";

/// The tables keyed by `memory_id` that a deleted memory leaves (its history stays).
pub const MEMORY_SIDE_TABLES: [&str; 4] = [
    "memory_embeddings",
    "memory_files",
    "memory_modules",
    "memory_keyword_rows",
];

/// Deletes a retired memory (`?1` id, `?2` project, `?3` when it was retired).
pub const DELETE_RETIRED_MEMORY: &str = "DELETE FROM memories WHERE id = ?1 AND project_id = ?2 \
AND deprecated = 1 AND deprecated_at = ?3";
