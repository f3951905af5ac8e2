//! Reading a memory's history, and memories whatever their state.

use engram_core::Memory;
use engram_lifecycle::{HistoryAction, HistoryEntry};
use engram_store::{Database, Statement, StoreError, Value};

use super::sql;
use crate::row::memory_from_row;
use crate::{Engram, EngramError};

impl<D: Database> Engram<D> {
    /// Every change to memory `id` (or a unique prefix of it), oldest first: created, merged, superseded, edited,
    /// retired, deleted… The history outlives the memory: a deleted memory's history is
    /// still here. `not_found` for an id that was never a memory of this project
    /// (another project's included).
    pub async fn history(&self, id: &str) -> Result<Vec<HistoryEntry>, EngramError> {
        let id = self.full_id(id).await?.unwrap_or_else(|| id.to_owned());
        let id = id.as_str();
        let rows = self
            .single(Statement::with_params(
                sql::SELECT_HISTORY,
                vec![Value::from(id), Value::from(self.project_id())],
            ))
            .await?;
        if rows.rows.is_empty() {
            return Err(EngramError::NotFound(format!(
                "no memory {id} in project {}",
                self.project_id()
            )));
        }
        rows.rows.iter().map(|row| entry_from_row(row)).collect()
    }

    /// Memory `id` of this project whatever its state: live, forgotten, retired or
    /// superseded (then `supersededBy` names its replacement). `None` for no such memory.
    pub async fn get_any(&self, id: &str) -> Result<Option<Memory>, EngramError> {
        let Some(id) = self.full_id(id).await? else {
            return Ok(None);
        };
        let id = id.as_str();
        let rows = self
            .single(Statement::with_params(
                sql::select_any_memory(),
                vec![Value::from(id), Value::from(self.project_id())],
            ))
            .await?;
        rows.rows
            .first()
            .map(|row| memory_from_row(row))
            .transpose()
            .map_err(Into::into)
    }
}

fn entry_from_row(row: &[Value]) -> Result<HistoryEntry, EngramError> {
    let text = |i: usize, name: &str| -> Result<Option<String>, StoreError> {
        row.get(i).map_or(Ok(None), |v| {
            v.as_opt_text(name).map(|t| t.map(str::to_owned))
        })
    };
    let required = |i: usize, name: &str| -> Result<String, StoreError> {
        text(i, name)?.ok_or_else(|| StoreError::Decode(format!("history {name} is missing")))
    };
    let json = |i: usize, name: &str| -> Result<Option<serde_json::Value>, StoreError> {
        text(i, name)?
            .map(|t| {
                serde_json::from_str(&t)
                    .map_err(|e| StoreError::Decode(format!("history {name}: {e}")))
            })
            .transpose()
    };
    let action = required(1, "action")?;
    Ok(HistoryEntry {
        memory_id: required(0, "memory_id")?,
        action: HistoryAction::parse(&action)
            .ok_or_else(|| StoreError::Decode(format!("history action {action:?} is unknown")))?,
        before: json(2, "before")?,
        after: json(3, "after")?,
        reason: required(4, "reason")?,
        actor: required(5, "actor")?,
        related_id: text(6, "related_id")?,
        at: required(7, "at")?,
    })
}
