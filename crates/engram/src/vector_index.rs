//! The libSQL vector index (DiskANN, `libsql_vector_idx` / `vector_top_k`) for servers and
//! files that have it; the brute-force `vector_distance_cos` scan is used everywhere else.
//!
//! An ANN index needs a column of one fixed type (`F32_BLOB(dims)`) while
//! `memory_embeddings` holds vectors of any model, so each (model, dims) gets its own table,
//! named by a hash of both — the name is never built from user text.

use sha2::{Digest, Sha256};

use engram_store::{Statement, Value};

/// Candidates fetched from the index per wanted result: the index knows nothing of projects,
/// types or forgotten memories, which are filtered after it.
const OVERFETCH: u32 = 8;
/// Most candidates asked of the index.
const MAX_CANDIDATES: u32 = 1000;

/// The index table of one model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VectorIndex {
    table: String,
    dims: usize,
}

impl VectorIndex {
    /// The index for `model` at `dims`.
    pub(crate) fn for_model(model: &str, dims: usize) -> Self {
        let digest = Sha256::digest(format!("{model}:{dims}").as_bytes());
        let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
        VectorIndex {
            table: format!("vector_index_{hex}"),
            dims,
        }
    }

    /// Creates the table and its index and copies in the vectors this model already
    /// stored. Fails on engines without the libSQL vector index.
    pub(crate) fn create(&self, model: &str) -> Vec<Statement> {
        let table = &self.table;
        vec![
            Statement::new(format!(
                "CREATE TABLE IF NOT EXISTS {table} (memory_id TEXT PRIMARY KEY, \
embedding F32_BLOB({}) NOT NULL)",
                self.dims
            )),
            Statement::new(format!(
                "CREATE INDEX IF NOT EXISTS {table}_ann ON {table} \
(libsql_vector_idx(embedding, 'metric=cosine'))"
            )),
            Statement::with_params(
                format!(
                    "INSERT OR IGNORE INTO {table} (memory_id, embedding) \
SELECT e.memory_id, e.embedding FROM memory_embeddings e \
WHERE e.model_id = ?1 AND e.dims = ?2 \
AND NOT EXISTS (SELECT 1 FROM {table} v WHERE v.memory_id = e.memory_id)"
                ),
                vec![Value::from(model), Value::Integer(self.dims as i64)],
            ),
        ]
    }

    /// The vector table's name (`vector_index_` and a hex hash; never user text).
    pub(crate) fn table(&self) -> &str {
        &self.table
    }

    /// Adds or replaces a memory's vector (`vector` is an F32 blob).
    pub(crate) fn upsert(&self, id: &str, vector: Vec<u8>) -> Statement {
        Statement::with_params(
            format!(
                "INSERT OR REPLACE INTO {} (memory_id, embedding) VALUES (?1, ?2)",
                self.table
            ),
            vec![Value::from(id), Value::Blob(vector)],
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
        let a = VectorIndex::for_model("m'; DROP TABLE memories; --", 384);
        assert!(a
            .table
            .strip_prefix("vector_index_")
            .unwrap()
            .chars()
            .all(|c| c.is_ascii_hexdigit()));
        assert_ne!(
            a,
            VectorIndex::for_model("m'; DROP TABLE memories; --", 256)
        );
        assert_ne!(a, VectorIndex::for_model("other", 384));
    }
}
