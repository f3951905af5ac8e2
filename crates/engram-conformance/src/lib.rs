//! Conformance checks shared by every backend and host.
//!
//! [`storage_suite`] exercises a [`Database`] directly: per-statement pipeline results,
//! atomic transactions, every value type, FTS5 with the porter tokenizer, the libSQL vector
//! functions, JSON functions and idempotent migrations. [`run_api_vectors`] replays the
//! cross-host API vectors in `tests/vectors/api.json` (the same file the Node, workerd,
//! Chromium and wasmtime tests replay) against an [`engram::Engram`].

#![warn(missing_docs)]

mod api_vectors;
pub mod code_graph;
pub mod retrieval;
pub mod secrets;
mod storage;

pub use api_vectors::{run_api_vectors, Opening};
pub use secrets::{secrets_suite, SecretsReport};
pub use storage::storage_suite;

/// A failed conformance check: which one and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The check's name.
    pub check: String,
    /// What went wrong.
    pub detail: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.check, self.detail)
    }
}

/// Builds a [`Failure`] unless `condition` holds.
pub(crate) fn ensure(
    condition: bool,
    check: &str,
    detail: impl FnOnce() -> String,
) -> Result<(), Failure> {
    if condition {
        Ok(())
    } else {
        Err(Failure {
            check: check.to_owned(),
            detail: detail(),
        })
    }
}

/// Converts any error into a [`Failure`] of `check`.
pub(crate) fn fail<E: std::fmt::Display>(check: &str) -> impl FnOnce(E) -> Failure + '_ {
    move |e| Failure {
        check: check.to_owned(),
        detail: e.to_string(),
    }
}
