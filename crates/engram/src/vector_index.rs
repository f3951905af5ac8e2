//! The libSQL vector index (DiskANN, `libsql_vector_idx` / `vector_top_k`) for servers and
//! files that have it; the brute-force `vector_distance_cos` scan is used everywhere else.
//!
//! An ANN index needs a column of one fixed type (`F32_BLOB(dims)`) while
//! `memory_embeddings` holds vectors of any model, so each (model, dims) gets its own table,
//! named by a hash of both — the name is never built from user text.
//!
//! The index's options are chosen, not libSQL's defaults. By default each node of the
//! graph stores a full-precision copy of every neighbour's vector, up to 51 of them at 384
//! dimensions: about 80 KB per memory (a 10K-memory database grew from 38 to 878 MB), and a
//! search reads a node's whole block for every node it visits. With the neighbours stored
//! as 8-bit vectors and at most 32 of them (libSQL's default is 3 × (√dims + 1), capped by
//! size), a node takes about a fifth of the space and a search reads about a fifth of the
//! bytes; the node's own vector stays `f32`, so the distances a search ranks by are exact. 1-bit neighbours were smaller still but lost the
//! way: sentence embeddings share a large common component, so the signs of their
//! coordinates say little about which of two neighbours is nearer (see [`INDEX_OPTIONS`]).

use sha2::{Digest, Sha256};

use engram_store::{Statement, Value};

/// Candidates fetched from the index per wanted result: the index knows nothing of projects,
/// types or forgotten memories, which are filtered after it.
const OVERFETCH: u32 = 8;
/// Most candidates asked of the index.
const MAX_CANDIDATES: u32 = 1000;
/// Below this many live memories in a project the exact scan answers its searches, not the
/// vector index ([`crate::Engram::enable_vector_index`]).
/// A DiskANN search costs about 8–10 ms from 1,000 to 10,000 vectors (it visits a few
/// hundred nodes of 18.5 KB), while the exact scan grows by about 2.7 µs a vector from
/// about 2.5 ms.
/// Measured side by side with `search_bench` (embedded file, p50 of a hybrid search):
///
/// | memories | exact scan | index |
/// |---|---|---|
/// | 1,000 | 4.98 ms | 9.36 ms |
/// | 2,000 | 6.96 ms | 9.50 ms |
/// | 3,000 | 11.57 ms | 10.67 ms |
/// | 5,000 | 15.71 ms | 8.42 ms |
pub const VECTOR_INDEX_MIN_MEMORIES: u64 = 3_000;
/// The options of every index this module creates. Measured by
/// `scripts/vector-index-options.py` on 10,000 real MiniLM vectors (the eval corpora's)
/// with the eval's 500 CoSQA queries, asking 240 neighbours and re-ranking them exactly as
/// the dense path does (recall of the exact top 30, mean and worst query):
///
/// | neighbours | size per vector | built in | search p50 | recall@30 |
/// |---|---|---|---|---|
/// | `f32`, at most 51 (libSQL's defaults) | 84 KB | 125 s | 12.9 ms | 0.9993 (0.93) |
/// | 8-bit, at most 32 | 18.5 KB | 35 s | 5.5 ms | 0.9988 (0.93) |
/// | 1-bit, at most 32 | 6.2 KB | 14 s | 3.7 ms | 0.961 (0.40) |
///
/// against 16–19 ms for the exact scan. At 20,000 vectors the 8-bit index kept 0.998
/// (worst 0.90) and the 1-bit one fell to 0.939 (worst 0.10); at 50,000 the 8-bit index
/// searched in 6.7 ms against 98 ms for the exact scan, with recall 0.993 (worst 0.73).
const INDEX_OPTIONS: &str = "'metric=cosine', 'compress_neighbors=float8', 'max_neighbors=32'";
/// The suffix of the index's name. Indexes created before [`INDEX_OPTIONS`] were chosen
/// are named with [`LEGACY_SUFFIX`] and dropped when the index is enabled.
const INDEX_SUFFIX: &str = "_ann8";
/// The suffix of an index with libSQL's default options (full-precision neighbours).
const LEGACY_SUFFIX: &str = "_ann";

/// The index table of one model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VectorIndex {
    table: String,
    dims: usize,
    min_memories: u64,
}

impl VectorIndex {
    /// The index for `model` at `dims`, consulted for projects of at least `min_memories`
    /// live memories.
    pub(crate) fn for_model(model: &str, dims: usize, min_memories: u64) -> Self {
        let digest = Sha256::digest(format!("{model}:{dims}").as_bytes());
        let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
        VectorIndex {
            table: format!("vector_index_{hex}"),
            dims,
            min_memories,
        }
    }

    /// Creates the table, its index and the triggers that keep it in step with
    /// `memory_embeddings`, and copies in the vectors this model already stored. Fails on
    /// engines without the libSQL vector index.
    ///
    /// The triggers make every writer keep the index current: another process, a host that
    /// never enabled the index (a Worker, the npm package) and older builds alike. Without
    /// them a long-lived instance would miss whatever others stored after it enabled the
    /// index, and re-score a replaced vector from its stale copy.
    pub(crate) fn create(&self, model: &str) -> Vec<Statement> {
        let table = &self.table;
        let index = self.index_name();
        // A trigger's text cannot bind parameters: the model id is quoted as a literal.
        let quoted = model.replace('\'', "''");
        let of_this_model =
            |row: &str| format!("{row}.model_id = '{quoted}' AND {row}.dims = {}", self.dims);
        let (new_row, old_row) = (of_this_model("new"), of_this_model("old"));
        let mut statements = vec![
            Statement::new(format!(
                "CREATE TABLE IF NOT EXISTS {table} (memory_id TEXT PRIMARY KEY, \
embedding F32_BLOB({}) NOT NULL)",
                self.dims
            )),
            Statement::new(format!("DROP INDEX IF EXISTS {table}{LEGACY_SUFFIX}")),
            Statement::new(format!(
                "CREATE INDEX IF NOT EXISTS {index} ON {table} \
(libsql_vector_idx(embedding, {INDEX_OPTIONS}))"
            )),
            // Once the triggers exist they have kept the table complete, so only the first
            // enabling (or the first since a build without them) reads every vector.
            Statement::with_params(
                format!(
                    "INSERT OR IGNORE INTO {table} (memory_id, embedding) \
SELECT e.memory_id, e.embedding FROM memory_embeddings e \
WHERE NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = '{table}_insert') \
AND e.model_id = ?1 AND e.dims = ?2 \
AND NOT EXISTS (SELECT 1 FROM {table} v WHERE v.memory_id = e.memory_id)"
                ),
                vec![Value::from(model), Value::Integer(self.dims as i64)],
            ),
        ];
        let insert = format!(
            "CREATE TRIGGER IF NOT EXISTS {table}_insert AFTER INSERT ON memory_embeddings \
WHEN {new_row} BEGIN INSERT OR REPLACE INTO {table} (memory_id, embedding) \
VALUES (new.memory_id, new.embedding); END"
        );
        let update = format!(
            "CREATE TRIGGER IF NOT EXISTS {table}_update AFTER UPDATE ON memory_embeddings \
BEGIN DELETE FROM {table} WHERE memory_id = old.memory_id AND {old_row}; \
INSERT OR REPLACE INTO {table} (memory_id, embedding) \
SELECT new.memory_id, new.embedding WHERE {new_row}; END"
        );
        let delete = format!(
            "CREATE TRIGGER IF NOT EXISTS {table}_delete AFTER DELETE ON memory_embeddings \
WHEN {old_row} BEGIN DELETE FROM {table} WHERE memory_id = old.memory_id; END"
        );
        statements.extend([insert, update, delete].map(Statement::new));
        statements
    }

    /// The vector table's name (`vector_index_` and a hex hash; never user text).
    pub(crate) fn table(&self) -> &str {
        &self.table
    }

    /// The name of the DiskANN index on [`VectorIndex::table`], for `vector_top_k`.
    pub(crate) fn index_name(&self) -> String {
        format!("{}{INDEX_SUFFIX}", self.table)
    }

    /// The `FROM` item of the index's `k` nearest neighbours of `vector`, as rows `t(id)`,
    /// `id` being the rowid in [`VectorIndex::table`]; `vector`, `k` and `project` are the
    /// numbers of the statement's parameters. Unless the index always answers, it is searched only when the project
    /// holds the threshold's count of live memories: the exact scan reads the project's
    /// vectors alone, so its cost is the project's size, whatever the rest of the database
    /// holds (a small tenant beside large ones keeps the fast scan and skips a search whose
    /// neighbours would mostly be other projects'). The count is one seek in
    /// `projects`, kept by triggers. The test is a one-row gate joined before the search,
    /// which takes its `k` from it: as a `WHERE` term it would be tested only after the
    /// search had run. Neither is `k` ever 0: `vector_top_k` with `k = 0` crashed a
    /// libSQL build (a double free).
    pub(crate) fn nearest(&self, vector: usize, k: usize, project: usize) -> String {
        let index = self.index_name();
        if self.min_memories == 0 {
            return format!("vector_top_k('{index}', ?{vector}, ?{k}) AS t");
        }
        let min = self.min_memories;
        format!(
            "(SELECT ?{k} AS k WHERE coalesce((SELECT live FROM projects \
WHERE project_id = ?{project}), 0) >= {min}) AS gate \
CROSS JOIN vector_top_k('{index}', ?{vector}, gate.k) AS t"
        )
    }

    /// How many neighbours to ask the ANN index for so that `limit` survive the project,
    /// type and liveness filters applied after it.
    pub(crate) fn ann_candidates(limit: u32) -> u32 {
        limit
            .saturating_mul(OVERFETCH)
            .min(MAX_CANDIDATES)
            .max(limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_are_hex_and_differ_per_model_and_dims() {
        let a = VectorIndex::for_model("m'; DROP TABLE memories; --", 384, 0);
        assert!(a
            .table
            .strip_prefix("vector_index_")
            .unwrap()
            .chars()
            .all(|c| c.is_ascii_hexdigit()));
        assert_ne!(
            a,
            VectorIndex::for_model("m'; DROP TABLE memories; --", 256, 0)
        );
        assert_ne!(a, VectorIndex::for_model("other", 384, 0));
    }
}
