//! The circuit breaker around the embedder.
//!
//! After [`FAILURES_TO_OPEN`] consecutive failures the circuit opens: engram stops calling
//! the embedder, stores memories keyword-searchable (queued for
//! [`Engram::embed_pending`](crate::Engram::embed_pending)) and searches by keyword only.
//! After [`RETRY_AFTER_MILLIS`] one call is let through (half-open); its success closes the
//! circuit, its failure opens it for another period. Time comes from the host's clock.

use std::cell::Cell;

use serde::Serialize;

/// Consecutive failures that open the circuit.
pub const FAILURES_TO_OPEN: u32 = 3;
/// How long the circuit stays open before one trial call is let through.
pub const RETRY_AFTER_MILLIS: i64 = 30_000;

/// The breaker's state as hosts see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "state"
)]
pub enum Circuit {
    /// The embedder is called normally.
    Closed {
        /// Failures since the last success (fewer than [`FAILURES_TO_OPEN`]).
        consecutive_failures: u32,
    },
    /// The embedder is not called until `retry_at` (Unix milliseconds).
    Open {
        /// When the next trial call will be let through.
        retry_at: i64,
    },
    /// The retry time has passed; the next call is a trial.
    HalfOpen,
}

/// Failure bookkeeping. Interior mutability because engram's API takes `&self`; engram is
/// single-threaded per instance (its futures are not `Send`).
#[derive(Debug, Default)]
pub(crate) struct Breaker {
    consecutive_failures: Cell<u32>,
    opened_at: Cell<Option<i64>>,
    trial_in_flight: Cell<bool>,
}

impl Breaker {
    /// Whether a call may go to the embedder now. In the half-open state only one caller
    /// gets through until it reports back.
    pub(crate) fn try_acquire(&self, now: i64) -> bool {
        match self.opened_at.get() {
            None => true,
            Some(opened) if now - opened >= RETRY_AFTER_MILLIS && !self.trial_in_flight.get() => {
                self.trial_in_flight.set(true);
                true
            }
            Some(_) => false,
        }
    }

    /// Reports the outcome of a call that [`Breaker::try_acquire`] allowed.
    pub(crate) fn record(&self, now: i64, success: bool) {
        self.trial_in_flight.set(false);
        if success {
            self.consecutive_failures.set(0);
            self.opened_at.set(None);
            return;
        }
        let failures = self.consecutive_failures.get().saturating_add(1);
        self.consecutive_failures.set(failures);
        if failures >= FAILURES_TO_OPEN {
            self.opened_at.set(Some(now));
        }
    }

    /// The state at `now`.
    pub(crate) fn circuit(&self, now: i64) -> Circuit {
        match self.opened_at.get() {
            None => Circuit::Closed {
                consecutive_failures: self.consecutive_failures.get(),
            },
            Some(opened) if now - opened >= RETRY_AFTER_MILLIS => Circuit::HalfOpen,
            Some(opened) => Circuit::Open {
                retry_at: opened + RETRY_AFTER_MILLIS,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_three_consecutive_failures_and_half_opens_after_thirty_seconds() {
        let breaker = Breaker::default();
        for t in 0..2 {
            assert!(breaker.try_acquire(t));
            breaker.record(t, false);
        }
        assert_eq!(
            breaker.circuit(2),
            Circuit::Closed {
                consecutive_failures: 2
            }
        );
        assert!(breaker.try_acquire(2));
        breaker.record(2, false);
        assert_eq!(breaker.circuit(3), Circuit::Open { retry_at: 30_002 });
        assert!(!breaker.try_acquire(30_001));
        assert_eq!(breaker.circuit(30_002), Circuit::HalfOpen);
        assert!(breaker.try_acquire(30_002));
        // Only one trial at a time.
        assert!(!breaker.try_acquire(30_003));
        breaker.record(30_004, false);
        assert_eq!(breaker.circuit(30_005), Circuit::Open { retry_at: 60_004 });
        assert!(breaker.try_acquire(60_004));
        breaker.record(60_005, true);
        assert_eq!(
            breaker.circuit(60_006),
            Circuit::Closed {
                consecutive_failures: 0
            }
        );
    }

    #[test]
    fn a_success_resets_the_count() {
        let breaker = Breaker::default();
        breaker.record(0, false);
        breaker.record(1, false);
        breaker.record(2, true);
        breaker.record(3, false);
        assert_eq!(
            breaker.circuit(4),
            Circuit::Closed {
                consecutive_failures: 1
            }
        );
    }
}
