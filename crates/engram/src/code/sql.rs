//! SQL of the code graph. Bulk writes pass one JSON array per statement and expand it with
//! `json_each`, so a re-index is a handful of statements whatever its size, every value is
//! bound, and the same text runs on every engine.

/// The index state and the files' hashes (`?1` project).
pub const SELECT_STATE: &str =
    "SELECT generation, closure_depth FROM graph_index_state WHERE project_id = ?1";

/// The index state for status output (`?1` project).
pub const SELECT_STATUS: &str = "SELECT generation, last_indexed_at, file_count, node_count, \
edge_count, closure_count, closure_depth FROM graph_index_state WHERE project_id = ?1";

/// Every indexed file with its outline (`?1` project).
pub const SELECT_FILES: &str =
    "SELECT path, hash, outline FROM code_files WHERE project_id = ?1 ORDER BY path";

/// Upserts files from `?2`: `[{path, language, hash, lines, bytes, outline}]`.
pub const UPSERT_FILES: &str = "INSERT INTO code_files \
(project_id, path, language, hash, lines, bytes, outline, indexed_at) \
SELECT ?1, json_extract(value, '$.path'), json_extract(value, '$.language'), \
json_extract(value, '$.hash'), json_extract(value, '$.lines'), json_extract(value, '$.bytes'), \
json_extract(value, '$.outline'), ?3 FROM json_each(?2) WHERE true \
ON CONFLICT (project_id, path) DO UPDATE SET language = excluded.language, \
hash = excluded.hash, lines = excluded.lines, bytes = excluded.bytes, \
outline = excluded.outline, indexed_at = excluded.indexed_at";

/// Deletes files whose paths are in the JSON array `?2`.
pub const DELETE_FILES: &str = "DELETE FROM code_files WHERE project_id = ?1 \
AND path IN (SELECT value FROM json_each(?2))";

/// Upserts nodes from `?2`: `[[id, type, label, path, language, start, end, hash]]`; `?3`
/// now. Clears staleness: the node was just rebuilt.
pub const UPSERT_NODES: &str = "INSERT INTO graph_nodes \
(project_id, id, type, label, file_path, language, start_line, end_line, layer, source, \
confidence, hash, created_at, updated_at, stale_at) \
SELECT ?1, json_extract(value, '$[0]'), json_extract(value, '$[1]'), \
json_extract(value, '$[2]'), json_extract(value, '$[3]'), json_extract(value, '$[4]'), \
json_extract(value, '$[5]'), json_extract(value, '$[6]'), 1, 'tree-sitter', 'extracted', \
json_extract(value, '$[7]'), ?3, ?3, NULL FROM json_each(?2) WHERE true \
ON CONFLICT (project_id, id) DO UPDATE SET type = excluded.type, label = excluded.label, \
file_path = excluded.file_path, language = excluded.language, \
start_line = excluded.start_line, end_line = excluded.end_line, hash = excluded.hash, \
updated_at = excluded.updated_at, stale_at = NULL";

/// Deletes nodes whose ids are in `?2`.
pub const DELETE_NODES: &str = "DELETE FROM graph_nodes WHERE project_id = ?1 \
AND id IN (SELECT value FROM json_each(?2))";

/// Upserts edges from `?2`: `[[from, type, to, weight]]`; `?3` now.
pub const UPSERT_EDGES: &str = "INSERT INTO graph_edges \
(project_id, from_id, type, to_id, layer, weight, source, created_at, updated_at, stale_at) \
SELECT ?1, json_extract(value, '$[0]'), json_extract(value, '$[1]'), \
json_extract(value, '$[2]'), 1, json_extract(value, '$[3]'), 'tree-sitter', ?3, ?3, NULL \
FROM json_each(?2) WHERE true \
ON CONFLICT (project_id, from_id, type, to_id) DO UPDATE SET weight = excluded.weight, \
updated_at = excluded.updated_at, stale_at = NULL";

/// Deletes edges listed in `?2`: `[[from, type, to]]`.
pub const DELETE_EDGES: &str = "DELETE FROM graph_edges WHERE project_id = ?1 \
AND (from_id, type, to_id) IN (SELECT json_extract(value, '$[0]'), \
json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?2))";

/// Deletes the closure rows of the ancestors in `?2`.
pub const DELETE_CLOSURE: &str = "DELETE FROM graph_closure WHERE project_id = ?1 \
AND ancestor_id IN (SELECT value FROM json_each(?2))";

/// Inserts closure rows from `?2`: `[[ancestor, descendant, depth, via, kinds, weight]]`
/// (the nodes between the ends and the edge kinds as JSON text).
pub const INSERT_CLOSURE: &str = "INSERT OR REPLACE INTO graph_closure \
(project_id, ancestor_id, descendant_id, depth, via, edge_types, total_weight) \
SELECT ?1, json_extract(value, '$[0]'), json_extract(value, '$[1]'), \
json_extract(value, '$[2]'), json_extract(value, '$[3]'), json_extract(value, '$[4]'), \
json_extract(value, '$[5]') FROM json_each(?2)";

/// Clears staleness of the nodes of files in `?2` that were looked at and did not change.
pub const CLEAR_STALE_NODES: &str = "UPDATE graph_nodes SET stale_at = NULL \
WHERE project_id = ?1 AND stale_at IS NOT NULL AND file_path IN (SELECT value FROM json_each(?2))";

/// Clears staleness of the edges out of those files' nodes.
pub const CLEAR_STALE_EDGES: &str = "UPDATE graph_edges SET stale_at = NULL \
WHERE project_id = ?1 AND stale_at IS NOT NULL AND from_id IN \
(SELECT id FROM graph_nodes WHERE project_id = ?1 AND file_path IN (SELECT value FROM json_each(?2)))";

/// Marks the nodes of the files in `?2` stale at `?3`.
pub const MARK_STALE_NODES: &str = "UPDATE graph_nodes SET stale_at = ?3 \
WHERE project_id = ?1 AND stale_at IS NULL AND file_path IN (SELECT value FROM json_each(?2))";

/// Marks the edges out of those files' nodes stale at `?3`.
pub const MARK_STALE_EDGES: &str = "UPDATE graph_edges SET stale_at = ?3 \
WHERE project_id = ?1 AND stale_at IS NULL AND from_id IN \
(SELECT id FROM graph_nodes WHERE project_id = ?1 AND file_path IN (SELECT value FROM json_each(?2)))";

/// Flags live memories for review: those targeting a node in `?2`, or about a file in `?3`.
/// Returns what it flagged, with the target and files to explain why.
pub const FLAG_MEMORIES: &str = "UPDATE memories SET needs_review = 1 \
WHERE project_id = ?1 AND deprecated = 0 AND needs_review = 0 AND ( \
target_node_id IN (SELECT value FROM json_each(?2)) \
OR EXISTS (SELECT 1 FROM json_each(memories.related_files) f \
WHERE f.value IN (SELECT value FROM json_each(?3)))) \
RETURNING id, target_node_id, related_files";

/// Records the new index state (`?2` generation, `?3` now, `?4` files, `?5` nodes,
/// `?6` edges, `?7` closure depth) before the closure rows of the ancestors in `?8` are
/// replaced: their rows are subtracted here, the new ones added by [`ADD_CLOSURE_COUNT`]
/// (cheaper than counting the table on every re-index).
pub const UPSERT_STATE: &str = "INSERT INTO graph_index_state \
(project_id, generation, last_indexed_at, file_count, node_count, edge_count, closure_count, \
closure_depth) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, ?7) \
ON CONFLICT (project_id) DO UPDATE SET generation = excluded.generation, \
last_indexed_at = excluded.last_indexed_at, file_count = excluded.file_count, \
node_count = excluded.node_count, edge_count = excluded.edge_count, \
closure_depth = excluded.closure_depth, closure_count = closure_count - \
(SELECT count(*) FROM graph_closure WHERE project_id = ?1 \
AND ancestor_id IN (SELECT value FROM json_each(?8)))";

/// Adds the closure rows just written (`?2`) to the count.
pub const ADD_CLOSURE_COUNT: &str =
    "UPDATE graph_index_state SET closure_count = closure_count + ?2 WHERE project_id = ?1";
