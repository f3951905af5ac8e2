//! The receipt rows that make a retried write recognisable.

use engram_store::{Statement, Value};

use super::RECEIPT_RETENTION_MILLIS;

/// Receipts past their retention go in each write's transaction (an index range, usually
/// empty), so the table stays small with no job of its own.
const PRUNE: &str = "DELETE FROM write_receipts WHERE project_id = ?1 AND created_at < ?2";

/// Fails on a key already taken: the transaction then rolls back having changed nothing.
const INSERT: &str = "INSERT INTO write_receipts (project_id, key, memory_ids, created_at) \
VALUES (?1, ?2, ?3, ?4)";

/// The ids a taken key stored.
pub(super) const LOOKUP: &str =
    "SELECT memory_ids FROM write_receipts WHERE project_id = ?1 AND key = ?2";

/// How many statements [`statements`] puts before the write's own.
pub(super) const LEADING: usize = 2;

/// The statements that open a write's transaction: prune old receipts, take the key.
pub(super) fn statements(
    project: &str,
    key: &str,
    memory_ids: &[String],
    now_millis: i64,
) -> [Statement; LEADING] {
    let ids = serde_json::to_string(memory_ids).unwrap_or_else(|_| "[]".to_owned());
    [
        Statement::with_params(
            PRUNE,
            vec![
                Value::from(project),
                Value::Integer(now_millis.saturating_sub(RECEIPT_RETENTION_MILLIS)),
            ],
        ),
        Statement::with_params(
            INSERT,
            vec![
                Value::from(project),
                Value::from(key),
                Value::from(ids),
                Value::Integer(now_millis),
            ],
        ),
    ]
}

/// The receipt key of a write: the caller's key, or a random one engram keeps across the
/// write's retries. The prefixes keep the two apart.
pub(crate) fn key(caller: Option<&str>, random: impl FnOnce() -> String) -> String {
    match caller {
        Some(key) => format!("caller:{key}"),
        None => format!("write:{}", random()),
    }
}
