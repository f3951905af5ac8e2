//! SQL of the code graph. Rows are written as multi-row `VALUES` lists of bound parameters
//! (a few hundred rows per statement: no per-row JSON to parse, far below every engine's
//! parameter limit); lists of keys to delete travel as one JSON array expanded with
//! `json_each`. Every value is bound; the SQL text holds only placeholders.

// Without the `code` feature only the reads and the stale marks are used.
#![cfg_attr(not(feature = "code"), allow(dead_code))]

/// The index state and the files' hashes (`?1` project).
pub const SELECT_STATE: &str =
    "SELECT generation, closure_depth FROM graph_index_state WHERE project_id = ?1";

/// The index state for status output (`?1` project).
pub const SELECT_STATUS: &str = "SELECT generation, last_indexed_at, file_count, node_count, \
edge_count, closure_count, closure_depth FROM graph_index_state WHERE project_id = ?1";

/// Every indexed file with its outline (`?1` project).
pub const SELECT_FILES: &str =
    "SELECT path, hash, outline FROM code_files WHERE project_id = ?1 ORDER BY path";

/// Upserts files from `?3`: `[{path, language, hash, lines, bytes, outline}]`; `?2` now.
pub const UPSERT_FILES: &str = "INSERT INTO code_files \
(project_id, path, language, hash, lines, bytes, outline, indexed_at) \
SELECT ?1, json_extract(value, '$.path'), json_extract(value, '$.language'), \
json_extract(value, '$.hash'), json_extract(value, '$.lines'), json_extract(value, '$.bytes'), \
json_extract(value, '$.outline'), ?2 FROM json_each(?3) WHERE true \
ON CONFLICT (project_id, path) DO UPDATE SET language = excluded.language, \
hash = excluded.hash, lines = excluded.lines, bytes = excluded.bytes, \
outline = excluded.outline, indexed_at = excluded.indexed_at";

/// Deletes files whose paths are in the JSON array `?2`.
pub const DELETE_FILES: &str = "DELETE FROM code_files WHERE project_id = ?1 \
AND path IN (SELECT value FROM json_each(?2))";

/// Deletes nodes whose ids are in `?2`.
pub const DELETE_NODES: &str = "DELETE FROM graph_nodes WHERE project_id = ?1 \
AND id IN (SELECT value FROM json_each(?2))";

/// Deletes edges listed in `?2`: `[[from, type, to]]`.
pub const DELETE_EDGES: &str = "DELETE FROM graph_edges WHERE project_id = ?1 \
AND (from_id, type, to_id) IN (SELECT json_extract(value, '$[0]'), \
json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?2))";

/// Deletes the closure rows of the ancestors in `?2`.
pub const DELETE_CLOSURE: &str = "DELETE FROM graph_closure WHERE project_id = ?1 \
AND ancestor_id IN (SELECT value FROM json_each(?2))";

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

/// Marks the file links from or to the files in `?2` stale at `?3`.
pub const MARK_STALE_LINKS: &str = "UPDATE graph_file_links SET stale_at = ?3 \
WHERE project_id = ?1 AND stale_at IS NULL AND (file_a IN (SELECT value FROM json_each(?2)) \
OR file_b IN (SELECT value FROM json_each(?2)))";

/// Deletes file links listed in `?2`: `[[file_a, file_b]]`.
pub const DELETE_FILE_LINKS: &str = "DELETE FROM graph_file_links WHERE project_id = ?1 \
AND (file_a, file_b) IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') \
FROM json_each(?2))";

/// Re-derives the staleness of the file links from or to the files in `?3` (after their
/// nodes' staleness was cleared): a link is stale while a node of either file is, since
/// `?2` when it was not already.
pub const REFRESH_STALE_LINKS: &str = "WITH stale AS (SELECT DISTINCT file_path FROM graph_nodes \
INDEXED BY idx_gn_stale WHERE project_id = ?1 AND stale_at IS NOT NULL) \
UPDATE graph_file_links SET stale_at = CASE WHEN file_a IN stale OR file_b IN stale \
THEN coalesce(stale_at, ?2) END \
WHERE project_id = ?1 AND (file_a IN (SELECT value FROM json_each(?3)) \
OR file_b IN (SELECT value FROM json_each(?3)))";

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

/// `(?b, ?b+1, …)` placeholder lists for `rows` rows of `width` values starting at `?first`,
/// each shaped by `tuple`.
fn rows_sql(
    rows: usize,
    width: usize,
    first: usize,
    tuple: impl Fn(&[String]) -> String,
) -> String {
    (0..rows)
        .map(|r| {
            let params: Vec<String> = (0..width)
                .map(|c| format!("?{}", first + r * width + c))
                .collect();
            tuple(&params)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Upserts `rows` nodes: `?1` project, `?2` now, then per row id, type, label, path,
/// language, start, end, hash. Clears staleness: the node was just rebuilt.
pub fn upsert_nodes(rows: usize) -> String {
    format!(
        "INSERT INTO graph_nodes (project_id, id, type, label, file_path, language, start_line, \
end_line, layer, source, confidence, hash, created_at, updated_at, stale_at) VALUES {} \
ON CONFLICT (project_id, id) DO UPDATE SET type = excluded.type, label = excluded.label, \
file_path = excluded.file_path, language = excluded.language, \
start_line = excluded.start_line, end_line = excluded.end_line, hash = excluded.hash, \
updated_at = excluded.updated_at, stale_at = NULL",
        rows_sql(rows, NODE_WIDTH, 3, |p| format!(
            "(?1, {}, {}, {}, {}, {}, {}, {}, 1, 'tree-sitter', 'extracted', {}, ?2, ?2, NULL)",
            p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]
        ))
    )
}

/// Values per node row of [`upsert_nodes`].
pub const NODE_WIDTH: usize = 8;

/// Upserts `rows` edges: `?1` project, `?2` now, then per row from, type, to, weight.
pub fn upsert_edges(rows: usize) -> String {
    format!(
        "INSERT INTO graph_edges (project_id, from_id, type, to_id, layer, weight, source, \
created_at, updated_at, stale_at) VALUES {} \
ON CONFLICT (project_id, from_id, type, to_id) DO UPDATE SET weight = excluded.weight, \
updated_at = excluded.updated_at, stale_at = NULL",
        rows_sql(rows, EDGE_WIDTH, 3, |p| format!(
            "(?1, {}, {}, {}, 1, {}, 'tree-sitter', ?2, ?2, NULL)",
            p[0], p[1], p[2], p[3]
        ))
    )
}

/// Values per edge row of [`upsert_edges`].
pub const EDGE_WIDTH: usize = 4;

/// Inserts `rows` file links (`?1` project, then per row the two files); links already
/// stored stay as they are.
pub fn insert_file_links(rows: usize) -> String {
    format!(
        "INSERT OR IGNORE INTO graph_file_links (project_id, file_a, file_b, stale_at) VALUES {}",
        rows_sql(rows, LINK_WIDTH, 2, |p| format!(
            "(?1, {}, {}, NULL)",
            p[0], p[1]
        ))
    )
}

/// Values per link row of [`insert_file_links`].
pub const LINK_WIDTH: usize = 2;

/// Inserts `rows` closure rows: `?1` project, then per row ancestor, descendant, depth,
/// via (the nodes between the ends, JSON), edge kinds (JSON), total weight.
pub fn insert_closure(rows: usize) -> String {
    format!(
        "INSERT OR REPLACE INTO graph_closure (project_id, ancestor_id, descendant_id, depth, \
via, edge_types, total_weight) VALUES {}",
        rows_sql(rows, CLOSURE_WIDTH, 2, |p| format!(
            "(?1, {}, {}, {}, {}, {}, {})",
            p[0], p[1], p[2], p[3], p[4], p[5]
        ))
    )
}

/// Values per closure row of [`insert_closure`].
pub const CLOSURE_WIDTH: usize = 6;

/// The nodes a target names: a file path (the file and everything in it), a node id, or a
/// qualified name (`Store.get`); a class or impl brings its members along. `?1` project,
/// `?2` target.
const TARGETS: &str = "t AS (SELECT type, file_path, start_line, end_line FROM graph_nodes \
WHERE project_id = ?1 AND (id = ?2 OR label = ?2)), \
targets AS (SELECT n.id, n.file_path FROM graph_nodes n JOIN t ON n.project_id = ?1 \
AND n.file_path = t.file_path AND (t.type = 'file' OR (n.type <> 'file' \
AND n.start_line >= t.start_line AND n.end_line <= t.end_line)))";

/// The nodes `?3` hops or fewer downstream of the target `?2`, with how they are reached.
pub fn impacted() -> String {
    format!(
        "WITH {TARGETS} SELECT c.ancestor_id, c.descendant_id, c.depth, c.via, c.edge_types, \
c.total_weight, n.type, n.label, n.file_path, n.start_line, n.end_line, n.stale_at \
FROM graph_closure c JOIN graph_nodes n ON n.project_id = c.project_id AND n.id = c.descendant_id \
WHERE c.project_id = ?1 AND c.depth <= ?3 AND c.ancestor_id IN (SELECT id FROM targets) \
AND c.descendant_id NOT IN (SELECT id FROM targets) \
ORDER BY c.depth, c.total_weight DESC, c.descendant_id"
    )
}

/// The target's own nodes, as rows shaped like [`impacted`]'s.
pub fn targets() -> String {
    format!(
        "WITH {TARGETS} SELECT n.id, n.id, 0, '[]', '[]', 1.0, n.type, n.label, n.file_path, \
n.start_line, n.end_line, n.stale_at FROM graph_nodes n \
WHERE n.project_id = ?1 AND n.id IN (SELECT id FROM targets) ORDER BY n.file_path, n.start_line, n.id"
    )
}

/// The live memories attached to the target or to what it impacts, at most `limit`.
pub fn impacted_memories(limit: u32) -> String {
    format!(
        "WITH {TARGETS}, impacted AS (SELECT id, file_path FROM targets UNION \
SELECT c.descendant_id, n.file_path FROM graph_closure c JOIN graph_nodes n \
ON n.project_id = c.project_id AND n.id = c.descendant_id \
WHERE c.project_id = ?1 AND c.depth <= ?3 AND c.ancestor_id IN (SELECT id FROM targets)) \
SELECT m.id, m.type, m.content, m.confidence, m.needs_review, m.target_node_id, m.related_files \
FROM memories m WHERE m.project_id = ?1 AND m.deprecated = 0 AND ( \
m.target_node_id IN (SELECT id FROM impacted) OR EXISTS (SELECT 1 FROM json_each(m.related_files) f \
WHERE f.value IN (SELECT file_path FROM impacted))) \
ORDER BY m.confidence DESC, m.id LIMIT {limit}"
    )
}

/// The nodes of a file (`?2`) as descendants: what they depend on, up to `?3` hops.
pub const DEPENDENCIES: &str =
    "SELECT c.descendant_id, c.ancestor_id, c.depth, c.via, c.edge_types, \
c.total_weight, n.type, n.label, n.file_path, n.start_line, n.end_line, n.stale_at \
FROM graph_closure c JOIN graph_nodes n ON n.project_id = c.project_id AND n.id = c.ancestor_id \
WHERE c.project_id = ?1 AND c.depth <= ?3 AND c.descendant_id IN \
(SELECT id FROM graph_nodes WHERE project_id = ?1 AND file_path = ?2) \
AND n.file_path <> ?2 ORDER BY c.depth, c.total_weight DESC, c.ancestor_id";

/// Files one live dependency edge away from the files in `?2`, both directions.
pub const NEIGHBOURS: &str = "SELECT b.file_path, 'depends_on', sum(e.weight) FROM graph_nodes a \
JOIN graph_edges e ON e.project_id = ?1 AND e.from_id = a.id AND e.stale_at IS NULL \
AND e.type IN ('imports', 'calls', 'extends', 'implements') \
JOIN graph_nodes b ON b.project_id = ?1 AND b.id = e.to_id \
WHERE a.project_id = ?1 AND a.file_path IN (SELECT value FROM json_each(?2)) \
AND b.file_path NOT IN (SELECT value FROM json_each(?2)) GROUP BY b.file_path \
UNION ALL SELECT a.file_path, 'dependent', sum(e.weight) FROM graph_nodes b \
JOIN graph_edges e ON e.project_id = ?1 AND e.to_id = b.id AND e.stale_at IS NULL \
AND e.type IN ('imports', 'calls', 'extends', 'implements') \
JOIN graph_nodes a ON a.project_id = ?1 AND a.id = e.from_id \
WHERE b.project_id = ?1 AND b.file_path IN (SELECT value FROM json_each(?2)) \
AND a.file_path NOT IN (SELECT value FROM json_each(?2)) GROUP BY a.file_path";
