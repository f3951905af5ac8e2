//! Staleness on a database: memories whose cited code changed are flagged for review with
//! the reason (so they are not injected). The host's file probe is asked at each
//! injection; the code graph's changes reach memories from each index call (the
//! `graph` part).

use engram_core::Memory;
use engram_lifecycle::HistoryAction;
use engram_store::{Database, Statement, Value};

use super::sql;
use crate::Engram;

/// The statements that flag live memory `id` stale for `reason` at `now` (review needed,
/// the reason kept), with its history entry; a memory already stale keeps its first
/// reason and gets no second entry.
pub(crate) fn mark_stale_statements(
    project: &str,
    id: &str,
    reason: &str,
    now: &str,
) -> [Statement; 2] {
    [
        Statement::with_params(
            sql::MARK_STALE,
            vec![
                Value::from(id),
                Value::from(project),
                Value::from(reason),
                Value::from(now),
            ],
        ),
        Statement::with_params(
            format!(
                "{} AND EXISTS (SELECT 1 FROM memories WHERE id = ?1 AND stale_at = ?9 \
AND stale_reason = ?6)",
                sql::INSERT_HISTORY
            ),
            vec![
                Value::from(id),
                Value::from(project),
                Value::from(HistoryAction::Stale.as_str()),
                Value::Null,
                Value::from(r#"{"needsReview":true}"#),
                Value::from(reason),
                Value::from("code"),
                Value::Null,
                Value::from(now),
            ],
        ),
    ]
}

impl<D: Database> Engram<D> {
    /// Why `memory` is stale by the host's file probe: the first file it cites that the
    /// probe says is gone. `None` without a probe.
    pub(crate) fn missing_file(&self, memory: &Memory) -> Option<String> {
        let probe = self.host.files.as_deref()?;
        memory
            .related_files
            .iter()
            .find(|f| probe.exists(f) == Some(false))
            .map(|f| format!("file missing: {f}"))
    }

    /// Whether every file `memory` cites may still be there; one the probe says is gone
    /// marks it stale with the next write.
    pub(crate) fn files_still_there(&self, memory: &Memory) -> bool {
        match self.missing_file(memory) {
            Some(reason) => {
                self.behind.record_stale(&memory.id, reason);
                false
            }
            None => true,
        }
    }

    /// `memories` without those citing a file the probe says is gone (see
    /// [`Engram::files_still_there`]).
    pub(crate) fn without_missing_files(&self, mut memories: Vec<Memory>) -> Vec<Memory> {
        if self.host.files.is_some() {
            memories.retain(|memory| self.files_still_there(memory));
        }
        memories
    }
}
