//! What reads learn and writes carry: memories that search and injection hand out count
//! as used, and memories found citing a file that is gone are marked stale. Both wait in
//! memory and travel with the next write of this instance (or [`Engram::flush_uses`]), so
//! a search never pays a round trip for them.

use std::cell::RefCell;
use std::collections::BTreeMap;

use engram_lifecycle::confidence::{
    CONFIDENCE_CEILING, CONFIDENCE_STEP, USES_PER_STEP, USES_TO_CLEAR_REVIEW,
};
use engram_store::{Database, Statement, Value};

use super::sql;
use crate::{Engram, EngramError};

/// Distinct memories whose uses wait at most; uses of others are not counted until a
/// write takes the waiting ones (a process that only reads must not grow without bound).
pub const MAX_PENDING_USES: usize = 4_096;

/// What waits to be written.
#[derive(Debug, Default)]
pub(crate) struct Behind {
    /// Uses by memory id.
    pub uses: BTreeMap<String, u64>,
    /// Why each memory is stale, by id.
    pub stale: BTreeMap<String, String>,
}

impl Behind {
    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.uses.is_empty() && self.stale.is_empty()
    }
}

/// The uses and stale marks not written yet.
#[derive(Debug, Default)]
pub(crate) struct WriteBehind {
    counts: RefCell<BTreeMap<String, u64>>,
    stale: RefCell<BTreeMap<String, String>>,
}

impl WriteBehind {
    /// Counts one use of each of `ids` (an id twice in one answer is one use).
    pub(crate) fn record<'a>(&self, ids: impl IntoIterator<Item = &'a str>) {
        let mut counts = self.counts.borrow_mut();
        let mut seen: Vec<&str> = Vec::new();
        for id in ids {
            if seen.contains(&id) {
                continue;
            }
            seen.push(id);
            if let Some(count) = counts.get_mut(id) {
                *count = count.saturating_add(1);
            } else if counts.len() < MAX_PENDING_USES {
                counts.insert(id.to_owned(), 1);
            }
        }
    }

    /// Marks memory `id` stale for `reason` (it is not shown: no use counts).
    pub(crate) fn record_stale(&self, id: &str, reason: String) {
        self.counts.borrow_mut().remove(id);
        let mut stale = self.stale.borrow_mut();
        if stale.len() < MAX_PENDING_USES {
            stale.entry(id.to_owned()).or_insert(reason);
        }
    }

    /// Forgets the waiting uses of `id`: it was corrected, so they do not count.
    pub(crate) fn discard(&self, id: &str) {
        self.counts.borrow_mut().remove(id);
    }

    /// Drops every waiting use and stale mark (their memories are being deleted).
    pub(crate) fn discard_all(&self) {
        self.counts.borrow_mut().clear();
        self.stale.borrow_mut().clear();
    }

    /// Takes everything that waits.
    pub(crate) fn take(&self) -> Behind {
        Behind {
            uses: std::mem::take(&mut *self.counts.borrow_mut()),
            stale: std::mem::take(&mut *self.stale.borrow_mut()),
        }
    }

    /// Puts back what a failed write carried.
    pub(crate) fn restore(&self, taken: Behind) {
        let mut counts = self.counts.borrow_mut();
        for (id, n) in taken.uses {
            let count = counts.entry(id).or_insert(0);
            *count = count.saturating_add(n);
        }
        let mut stale = self.stale.borrow_mut();
        for (id, reason) in taken.stale {
            stale.entry(id).or_insert(reason);
        }
    }

    /// How many memories have uses waiting.
    pub(crate) fn uses_waiting(&self) -> usize {
        self.counts.borrow().len()
    }
}

/// The statements that write `behind` at `now`: the stale marks, then per distinct use
/// count a history entry for each memory the uses raise or clear and the counts
/// themselves. Only live memories of `project` are touched.
pub(crate) fn behind_statements(project: &str, behind: &Behind, now: &str) -> Vec<Statement> {
    let mut statements = Vec::new();
    for (id, reason) in &behind.stale {
        statements.extend(super::stale::mark_stale_statements(
            project, id, reason, now,
        ));
    }
    let mut by_count: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    for (id, n) in &behind.uses {
        by_count.entry(*n).or_default().push(id);
    }
    for (n, ids) in by_count {
        let params = vec![
            Value::from(project),
            Value::from(serde_json::to_string(&ids).unwrap_or_else(|_| "[]".to_owned())),
            Value::Integer(i64::try_from(n).unwrap_or(i64::MAX)),
            Value::from(now),
            Value::Float(CONFIDENCE_CEILING),
            Value::Float(CONFIDENCE_STEP),
            Value::Integer(USES_PER_STEP as i64),
            Value::Integer(USES_TO_CLEAR_REVIEW as i64),
        ];
        statements.push(Statement::with_params(
            sql::REINFORCE_HISTORY,
            params.clone(),
        ));
        statements.push(Statement::with_params(sql::REINFORCE, params));
    }
    statements
}

/// What [`Engram::flush_uses`] wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsesFlushed {
    /// Memories whose uses were written.
    pub memories: usize,
    /// Memories marked stale.
    pub stale: usize,
}

impl<D: Database> Engram<D> {
    /// Writes what waits — the uses of memories search and injection handed out since the
    /// last write, and stale marks of memories found citing files that are gone — in one
    /// transaction; nothing, and no round trip, when nothing waits. Any write of this
    /// instance takes them too, so a host calls this only where it stops (a CLI command's
    /// end, a server's shutdown, a session's end). On failure they wait on.
    pub async fn flush_uses(&self) -> Result<UsesFlushed, EngramError> {
        let behind = self.behind.take();
        if behind.is_empty() {
            return Ok(UsesFlushed::default());
        }
        let now = engram_core::time::rfc3339_from_millis(self.host.clock.now_millis());
        let statements = behind_statements(self.project_id(), &behind, &now);
        match self.db.transaction(&statements).await {
            Ok(_) => Ok(UsesFlushed {
                memories: behind.uses.len(),
                stale: behind.stale.len(),
            }),
            Err(error) => {
                self.behind.restore(behind);
                Err(error.into())
            }
        }
    }

    /// Memories whose uses wait to be written.
    pub fn pending_uses(&self) -> usize {
        self.behind.uses_waiting()
    }

    /// `statements` with what waits appended, in one transaction (none when both are
    /// empty); what waits waits on when the transaction fails.
    pub(crate) async fn transaction_with_behind(
        &self,
        statements: &[Statement],
    ) -> Result<Vec<engram_store::Rows>, EngramError> {
        let behind = self.behind.take();
        if behind.is_empty() {
            if statements.is_empty() {
                return Ok(Vec::new());
            }
            return Ok(self.db.transaction(statements).await?);
        }
        let now = engram_core::time::rfc3339_from_millis(self.host.clock.now_millis());
        let mut all = statements.to_vec();
        all.extend(behind_statements(self.project_id(), &behind, &now));
        match self.db.transaction(&all).await {
            Ok(mut rows) => {
                rows.truncate(statements.len());
                Ok(rows)
            }
            Err(error) => {
                self.behind.restore(behind);
                Err(error.into())
            }
        }
    }
}
