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
pub const MEMORY_SIDE_TABLES: [&str; 5] = [
    "memory_embeddings",
    "memory_files",
    "memory_modules",
    "memory_keyword_rows",
    "memory_origins",
];

/// Deletes a retired memory (`?1` id, `?2` project, `?3` when it was retired).
pub const DELETE_RETIRED_MEMORY: &str = "DELETE FROM memories WHERE id = ?1 AND project_id = ?2 \
AND deprecated = 1 AND deprecated_at = ?3";

/// The confidence after `?3` more uncorrected uses: one step (`?6`) per boundary of `?7`
/// uses crossed, up to the ceiling (`?5`); a confidence already at or above it stays.
macro_rules! reinforced_confidence {
    () => {
        "CASE WHEN confidence < ?5 THEN \
min(?5, confidence + ?6 * ((uncorrected_uses + ?3) / ?7 - uncorrected_uses / ?7)) \
ELSE confidence END"
    };
}

/// Adds `?3` uses nobody corrected to the live memories in `?2` (a JSON array of ids) of
/// project `?1`, used at `?4`: confidence by `reinforced_confidence!`, review cleared at
/// `?8` uses, except a stale memory's (its code changed: use does not make it true again).
pub const REINFORCE: &str = concat!(
    "UPDATE memories SET access_count = access_count + ?3, \
uncorrected_uses = uncorrected_uses + ?3, last_accessed_at = ?4, confidence = ",
    reinforced_confidence!(),
    ", needs_review = CASE WHEN uncorrected_uses + ?3 >= ?8 AND stale_reason IS NULL THEN 0 \
ELSE needs_review END \
WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2)) AND deprecated = 0"
);

/// The history entries of [`REINFORCE`] (same parameters, run before it): one for each
/// memory whose confidence the uses raise or whose review they clear.
pub const REINFORCE_HISTORY: &str = concat!(
    "INSERT INTO memory_history \
(memory_id, project_id, action, before, after, reason, actor, related_id, at) \
SELECT id, project_id, 'reinforced', \
json_object('confidence', confidence, 'needsReview', json(CASE WHEN needs_review = 1 \
THEN 'true' ELSE 'false' END), 'uncorrectedUses', uncorrected_uses), \
json_object('confidence', ",
    reinforced_confidence!(),
    ", 'needsReview', json(CASE WHEN needs_review = 1 AND (uncorrected_uses + ?3 < ?8 \
OR stale_reason IS NOT NULL) THEN 'true' ELSE 'false' END), \
'uncorrectedUses', uncorrected_uses + ?3), \
(uncorrected_uses + ?3) || ' uses nobody corrected', 'engram', NULL, ?4 \
FROM memories WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2)) \
AND deprecated = 0 AND ((confidence < ?5 AND (uncorrected_uses + ?3) / ?7 > \
uncorrected_uses / ?7) OR (needs_review = 1 AND stale_reason IS NULL \
AND uncorrected_uses + ?3 >= ?8))"
);

/// The live memories of project `?1` about any file in `?2` (a JSON array) or targeting a
/// node of one, each once.
#[cfg(feature = "code")]
pub fn memories_citing() -> String {
    format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.project_id = ?1 AND m.deprecated = 0 \
AND (m.id IN (SELECT memory_id FROM memory_files WHERE project_id = ?1 \
AND path IN (SELECT value FROM json_each(?2))) \
OR (m.target_node_id IS NOT NULL AND (CASE WHEN m.target_node_id LIKE 'file:%' \
THEN substr(m.target_node_id, 6) ELSE substr(m.target_node_id, 1, \
instr(m.target_node_id, '#') - 1) END) IN (SELECT value FROM json_each(?2))))"
    )
}

/// Flags a live memory stale (`?1` id, `?2` project, `?3` reason, `?4` now): it needs
/// review and keeps the reason; one already stale keeps its first.
pub const MARK_STALE: &str = "UPDATE memories SET needs_review = 1, stale_reason = ?3, \
stale_at = ?4, updated_at = ?4 WHERE id = ?1 AND project_id = ?2 AND deprecated = 0 \
AND stale_reason IS NULL";

/// Gives a memory the paths and target of its renamed files (`?1` id, `?2` project, `?3`
/// JSON array of paths, `?4` target node, `?5` now).
#[cfg(feature = "code")]
pub const RENAME_MEMORY_FILES: &str = "UPDATE memories SET related_files = ?3, \
target_node_id = ?4, updated_at = ?5 WHERE id = ?1 AND project_id = ?2";

/// A memory's rows in the file index (`?1` project, `?2` memory).
#[cfg(feature = "code")]
pub const DELETE_MEMORY_FILES: &str =
    "DELETE FROM memory_files WHERE project_id = ?1 AND memory_id = ?2";
