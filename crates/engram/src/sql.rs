//! SQL text used by the API. Every value is a bound parameter; no user text is ever
//! spliced into SQL or into FTS5 query syntax.

/// The memory columns, in the order [`crate::row`] decodes them.
pub const MEMORY_COLUMNS: &str = "m.id, m.project_id, m.type, m.content, m.confidence, m.tags, \
m.related_files, m.related_modules, m.created_at, m.last_accessed_at, m.access_count, m.scope, \
m.visibility, m.phase, m.source, m.session_id, m.commit_sha, m.provenance_session_ids, \
m.work_unit_ref, m.methodology, m.relations, m.decay_half_life_days, m.needs_review, \
m.user_verified, m.pinned, m.contaminated, m.secret_scan_skipped, m.citation_text, \
m.chunk_type, m.chunk_start_line, m.chunk_end_line, m.context_prefix, m.embedding_model_id, \
m.deprecated, m.target_node_id, m.occurrences, m.superseded_by, m.stale_reason";

/// Inserts a memory; parameters in [`MEMORY_COLUMNS`] order without `embedding_model_id`,
/// `deprecated` and the lifecycle columns, then `target_node_id` and `content_key` (the
/// creation time is its `updated_at` too).
pub const INSERT_MEMORY: &str = "INSERT INTO memories (id, project_id, type, content, confidence, \
tags, related_files, related_modules, created_at, last_accessed_at, access_count, scope, \
visibility, phase, source, session_id, commit_sha, provenance_session_ids, work_unit_ref, \
methodology, relations, decay_half_life_days, needs_review, user_verified, pinned, contaminated, \
secret_scan_skipped, citation_text, chunk_type, chunk_start_line, chunk_end_line, context_prefix, target_node_id, \
content_key, updated_at) \
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, \
?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?9)";

/// Records a memory's related files for the graph path and file-filtered searches (`?1`
/// project, `?2` memory id, `?3` JSON array of paths).
pub const INSERT_MEMORY_FILES: &str = "INSERT OR IGNORE INTO memory_files \
(project_id, path, memory_id) SELECT ?1, value, ?2 FROM json_each(?3)";

/// Records a memory's modules for module-filtered searches (`?1` project, `?2` memory id,
/// `?3` JSON array of modules).
pub const INSERT_MEMORY_MODULES: &str = "INSERT OR IGNORE INTO memory_modules \
(project_id, module, memory_id) SELECT ?1, value, ?2 FROM json_each(?3)";

/// Indexes a memory for keyword search (`?1` id, `?2` content, `?3` tags, `?4` files, `?5`
/// project), at the next rowid of its project's range (schema v9: the memory's insert,
/// earlier in the same transaction, counted it in `projects.added`).
pub const INSERT_FTS: &str =
    "INSERT INTO memories_fts (rowid, memory_id, content, tags, related_files) \
SELECT key * 1099511627776 + added, ?1, ?2, ?3, ?4 FROM projects WHERE project_id = ?5";

/// Reads one live memory (`?1` id, `?2` project).
pub fn select_memory() -> String {
    format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ?1 AND m.project_id = ?2 AND m.deprecated = 0"
    )
}

/// Soft-deletes a memory (`?1` id, `?2` project, `?3` now).
pub const FORGET_MEMORY: &str = "UPDATE memories SET deprecated = 1, deprecated_at = ?3 \
WHERE id = ?1 AND project_id = ?2 AND deprecated = 0";

/// Removes a forgotten memory from the keyword index (`?1` id).
pub const DELETE_FTS: &str = "DELETE FROM memories_fts WHERE rowid = \
(SELECT keyword_rowid FROM memory_keyword_rows WHERE memory_id = ?1)";

/// Records which keyword row holds a memory (`?1` id, `?2` project): the row
/// [`INSERT_FTS`] just wrote, whose rowid the same expression gives.
pub const INSERT_KEYWORD_ROW: &str = "INSERT OR REPLACE INTO memory_keyword_rows \
(memory_id, keyword_rowid) SELECT ?1, key * 1099511627776 + added FROM projects \
WHERE project_id = ?2";

/// Drops the keyword-row record of a memory that is no longer live (`?1` id).
pub const DELETE_KEYWORD_ROW: &str = "DELETE FROM memory_keyword_rows WHERE memory_id = ?1 \
AND NOT EXISTS (SELECT 1 FROM memories WHERE id = ?1 AND deprecated = 0)";

/// Stores a memory's vector (`?1` id, `?2` F32 blob, `?3` model, `?4` dims, `?5` now),
/// replacing one of an older model.
pub const UPSERT_EMBEDDING: &str = "INSERT OR REPLACE INTO memory_embeddings \
(memory_id, embedding, model_id, dims, created_at) VALUES (?1, ?2, ?3, ?4, ?5)";

/// Records which model embedded a memory (`?1` id, `?2` model).
pub const SET_EMBEDDING_MODEL: &str = "UPDATE memories SET embedding_model_id = ?2 WHERE id = ?1";

/// Live memories of a project without a vector of the current model (`?1` project,
/// `?2` model, `?3` limit), oldest first so a re-embed job makes steady progress.
pub fn pending_embeddings() -> String {
    format!(
        "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.project_id = ?1 AND m.deprecated = 0 \
AND NOT EXISTS (SELECT 1 FROM memory_embeddings e WHERE e.memory_id = m.id AND e.model_id = ?2) \
ORDER BY m.created_at, m.id LIMIT ?3"
    )
}

/// How many live memories still lack a vector of the current model (`?1` project, `?2` model).
pub const COUNT_PENDING: &str = "SELECT count(*) FROM memories m WHERE m.project_id = ?1 \
AND m.deprecated = 0 AND NOT EXISTS (SELECT 1 FROM memory_embeddings e \
WHERE e.memory_id = m.id AND e.model_id = ?2)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keyword_insert_spells_the_project_range() {
        let spelled = engram_core::schema::PROJECT_ROWIDS.to_string();
        assert!(INSERT_FTS.contains(&format!("key * {spelled} + added")));
        assert!(INSERT_KEYWORD_ROW.contains(&format!("key * {spelled} + added")));
    }
}
