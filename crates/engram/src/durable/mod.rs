//! Durable writes: every write carries a receipt in its own transaction, is retried with
//! backoff when it fails for a passing reason, and waits in a bounded buffer when the
//! database stays out of reach.
//!
//! The rules, each for a reason:
//! - A transport error, a 5xx or 429, a busy or locked database and an answer that cannot
//!   be read are *passing*: the same write may succeed later. Anything else is final.
//! - A passing failure may have happened after the database committed (the answer was
//!   lost). The write's receipt row is inserted in the same transaction, so a retry that
//!   finds its key taken knows the first attempt was applied and answers with the ids the
//!   receipt holds: nothing is applied twice.
//! - After the last retry the write joins the buffer (when the call allows it) and is
//!   reported pending, never as stored; the buffer is flushed, oldest first, before the
//!   next write and on [`Engram::flush_writes`](crate::Engram::flush_writes). While
//!   writes are pending engram is *degraded*: a new write gets one attempt, not the
//!   backoff, and a full buffer refuses it with `buffer_full` before it is sent.

mod commit;
mod receipt;

pub(crate) use receipt::key as receipt_key;

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;

use engram_store::{Rows, Statement, StoreError};
use serde::Serialize;

/// The waits between a write's attempts when nothing is configured (five attempts over
/// 15 s).
pub const DEFAULT_RETRY_DELAYS_MS: [u32; 4] = [1_000, 2_000, 4_000, 8_000];
/// Writes held while the database is out of reach, when nothing is configured.
pub const DEFAULT_WRITE_BUFFER: u32 = 50;
/// How long a receipt is kept: a caller may retry a write with its key for this long.
pub const RECEIPT_RETENTION_MILLIS: i64 = 7 * 24 * 60 * 60 * 1_000;

/// How writes are retried and buffered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The wait before each retry, in milliseconds; empty means one attempt.
    pub delays_ms: Vec<u32>,
    /// How many writes wait in memory while the database is out of reach; 0 turns the
    /// buffer off (such writes then fail `unavailable`).
    pub buffer: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            delays_ms: DEFAULT_RETRY_DELAYS_MS.to_vec(),
            buffer: DEFAULT_WRITE_BUFFER,
        }
    }
}

/// The state of writes, for hosts to show (`engram status`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteStatus {
    /// Writes are pending, or the last write failed for a passing reason.
    pub degraded: bool,
    /// Writes waiting in the buffer (not yet stored).
    pub pending: u32,
    /// The buffer's size.
    pub capacity: u32,
    /// Buffered writes the database refused for good when they were flushed.
    pub dropped: u64,
    /// The last failure, while degraded or once a buffered write was dropped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// Whether a failed write may succeed unchanged later, and so is retried.
pub(crate) fn is_passing(error: &StoreError) -> bool {
    error.is_transient() || matches!(error, StoreError::Protocol(_))
}

/// One write: its statements (one transaction) and its receipt.
#[derive(Debug, Clone)]
pub(crate) struct Write {
    /// The write itself.
    pub statements: Vec<Statement>,
    /// The receipt's key (the caller's, or one engram made for this write).
    pub key: String,
    /// The memories the write stores (the answer a replay gives).
    pub memory_ids: Vec<String>,
}

/// How a write ended.
#[derive(Debug)]
pub(crate) enum Committed {
    /// Applied by this call; the statements' results, in order.
    Applied(Vec<Rows>),
    /// Applied before (by an earlier attempt or a write with the same key): the ids it
    /// stored.
    Replayed {
        /// The ids the first write stored.
        ids: Vec<String>,
        /// The key was taken before this call's first attempt: an earlier call's write
        /// (a caller's replay), not one of this call's own attempts.
        before_this_call: bool,
    },
    /// Not stored yet: waiting in the buffer.
    Pending,
}

/// The retry policy with the buffer and what it has seen. Interior mutability because
/// engram's API takes `&self` (one instance is used from one thread).
#[derive(Debug, Default)]
pub(crate) struct Durability {
    pub policy: RetryPolicy,
    buffer: RefCell<VecDeque<Write>>,
    degraded: Cell<bool>,
    dropped: Cell<u64>,
    last_error: RefCell<Option<String>>,
}

impl Durability {
    pub(crate) fn new(policy: RetryPolicy) -> Self {
        Durability {
            policy,
            ..Durability::default()
        }
    }

    pub(crate) fn status(&self) -> WriteStatus {
        let pending = self.buffer.borrow().len() as u32;
        let degraded = pending > 0 || self.degraded.get();
        WriteStatus {
            degraded,
            pending,
            capacity: self.policy.buffer,
            dropped: self.dropped.get(),
            last_error: if degraded || self.dropped.get() > 0 {
                self.last_error.borrow().clone()
            } else {
                None
            },
        }
    }

    pub(crate) fn pending(&self) -> usize {
        self.buffer.borrow().len()
    }

    fn healthy(&self) {
        self.degraded.set(false);
    }

    fn failed(&self, error: &StoreError) {
        self.degraded.set(true);
        *self.last_error.borrow_mut() = Some(error.to_string());
    }

    fn push(&self, write: Write) {
        self.buffer.borrow_mut().push_back(write);
    }

    fn take_oldest(&self) -> Option<Write> {
        self.buffer.borrow_mut().pop_front()
    }

    fn put_back(&self, write: Write) {
        self.buffer.borrow_mut().push_front(write);
    }

    fn drop_refused(&self, error: &StoreError) {
        self.dropped.set(self.dropped.get() + 1);
        *self.last_error.borrow_mut() = Some(format!("a buffered write was refused: {error}"));
    }
}

#[cfg(test)]
mod tests;
