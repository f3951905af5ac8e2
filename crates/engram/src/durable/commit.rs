//! Sending a write: attempts, backoff, the buffer.

use engram_store::{Database, Statement, StoreError, Value};

use super::{is_passing, receipt, Committed, Write, WriteStatus};
use crate::{Engram, EngramError};

impl<D: Database> Engram<D> {
    /// Sends `write` in one transaction, with the uses that wait (see
    /// [`Engram::flush_uses`]), retrying passing failures with the policy's backoff; when
    /// they last beyond it the write is buffered if `may_buffer` (else the last failure is
    /// returned, `unavailable`). See the module's rules.
    pub(crate) async fn commit(
        &self,
        mut write: Write,
        may_buffer: bool,
    ) -> Result<Committed, EngramError> {
        let own = write.statements.len();
        let behind = self.behind.take();
        if !behind.is_empty() {
            let now = engram_core::time::rfc3339_from_millis(self.host.clock.now_millis());
            let project = self.project_id().to_owned();
            write
                .statements
                .extend(crate::lifecycle::behind_statements(&project, &behind, &now));
        }
        match self.commit_uses_included(write, may_buffer).await {
            Ok(Committed::Applied(mut rows)) => {
                rows.truncate(own);
                Ok(Committed::Applied(rows))
            }
            // An earlier attempt's statements were applied, not these: the uses wait on.
            other => {
                if !matches!(other, Ok(Committed::Pending)) {
                    self.behind.restore(behind);
                }
                other
            }
        }
    }

    async fn commit_uses_included(
        &self,
        write: Write,
        may_buffer: bool,
    ) -> Result<Committed, EngramError> {
        self.flush_buffered().await;
        let durability = &self.durability;
        let degraded = durability.pending() > 0;
        let capacity = durability.policy.buffer as usize;
        if degraded && may_buffer && durability.pending() >= capacity {
            return Err(EngramError::BufferFull {
                pending: durability.pending() as u32,
            });
        }
        // While writes are pending the database is known to be out of reach: one attempt,
        // so that each call does not wait out the whole backoff.
        let delays: &[u32] = if degraded {
            &[]
        } else {
            &durability.policy.delays_ms
        };
        let mut retries = delays.iter();
        let mut first = true;
        loop {
            let outcome = self.attempt(&write, first).await;
            first = false;
            match outcome {
                Ok(committed) => {
                    durability.healthy();
                    return Ok(committed);
                }
                Err(error) if is_passing(&error) => {
                    durability.failed(&error);
                    if let Some(&delay) = retries.next() {
                        self.wait(delay).await;
                        continue;
                    }
                    if may_buffer && capacity > 0 {
                        durability.push(write);
                        return Ok(Committed::Pending);
                    }
                    return Err(error.into());
                }
                Err(error) => return Err(error.into()),
            }
        }
    }

    /// Sends the buffered writes now, oldest first, one attempt each, stopping at the
    /// first that does not reach the database; returns the state after. A write the
    /// database refuses (a statement error) is dropped and counted in `dropped`.
    pub async fn flush_writes(&self) -> WriteStatus {
        self.flush_buffered().await;
        self.durability.status()
    }

    /// Whether writes are degraded and how many wait in the buffer.
    pub fn write_status(&self) -> WriteStatus {
        self.durability.status()
    }

    async fn flush_buffered(&self) {
        let durability = &self.durability;
        while let Some(write) = durability.take_oldest() {
            match self.attempt(&write, false).await {
                Ok(_) => durability.healthy(),
                // Only the database refusing the statements drops a buffered write: it was
                // well formed when it was sent, so any other answer (a 400 for a body mangled
                // on the way, a token the server forgot) is the way there failing.
                Err(StoreError::Sql(error)) if !error.is_busy() => {
                    durability.drop_refused(&StoreError::Sql(error))
                }
                Err(error) => {
                    durability.failed(&error);
                    durability.put_back(write);
                    return;
                }
            }
        }
    }

    /// One attempt: the receipt and the write in one transaction. A final error may mean
    /// the key was taken (an earlier attempt was applied, or the caller reused its key):
    /// the receipt says which, and a lookup that fails makes the attempt's failure a
    /// passing one.
    async fn attempt(&self, write: &Write, first: bool) -> Result<Committed, StoreError> {
        let now = self.host.clock.now_millis();
        let mut statements: Vec<Statement> =
            receipt::statements(self.project_id(), &write.key, &write.memory_ids, now).into();
        statements.extend(write.statements.iter().cloned());
        match self.db.transaction(&statements).await {
            Ok(mut rows) => {
                rows.drain(..receipt::LEADING.min(rows.len()));
                Ok(Committed::Applied(rows))
            }
            Err(error) if is_passing(&error) => Err(error),
            // Refused credentials reach nothing, the receipt included.
            Err(error @ StoreError::Unauthorized { .. }) => Err(error),
            // A final answer to this attempt says nothing of an earlier one whose answer was
            // lost, nor of a caller's earlier write with this key: the receipt does. Until
            // it is read, the outcome is unknown, which is a passing failure.
            Err(error) => match self.receipt(&write.key).await {
                Ok(Some(ids)) => Ok(Committed::Replayed {
                    ids,
                    before_this_call: first,
                }),
                Ok(None) => Err(error),
                Err(lookup) => Err(StoreError::Transport(format!(
                    "{error}; whether an earlier attempt was applied is unknown: {lookup}"
                ))),
            },
        }
    }

    /// The ids stored under a taken key, if it is taken.
    async fn receipt(&self, key: &str) -> Result<Option<Vec<String>>, StoreError> {
        let statement = Statement::with_params(
            receipt::LOOKUP,
            vec![Value::from(self.project_id()), Value::from(key)],
        );
        let mut results = self.db.pipeline(&[statement]).await?;
        let rows = match results.pop() {
            Some(result) => result.map_err(StoreError::Sql)?,
            None => return Err(StoreError::Protocol("no result for the receipt".into())),
        };
        let Some(row) = rows.rows.first() else {
            return Ok(None);
        };
        let text = match row.first() {
            Some(value) => value.as_text("memory_ids")?,
            None => "[]",
        };
        serde_json::from_str(text)
            .map(Some)
            .map_err(|e| StoreError::Decode(format!("a write receipt is unreadable: {e}")))
    }

    async fn wait(&self, millis: u32) {
        if let Some(sleep) = &self.host.sleep {
            sleep.sleep(u64::from(millis)).await;
        }
    }
}
