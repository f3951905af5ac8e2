//! The error type of the engram API.

use engram_core::ValidationError;
use engram_store::StoreError;

/// Why an engram call failed. Nothing is written when a call fails.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngramError {
    /// The input broke a rule; the error names each offending field.
    #[error(transparent)]
    Invalid(#[from] ValidationError),
    /// The database failed or could not be reached.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl EngramError {
    /// A stable machine-readable code for hosts: `invalid_input`, `unauthorized`,
    /// `unavailable` (transient; retry later), `sql_error`, or `storage_error`.
    pub fn code(&self) -> &'static str {
        match self {
            EngramError::Invalid(_) => "invalid_input",
            EngramError::Store(StoreError::Unauthorized { .. }) => "unauthorized",
            EngramError::Store(e) if e.is_transient() => "unavailable",
            EngramError::Store(StoreError::Sql(_)) => "sql_error",
            EngramError::Store(_) => "storage_error",
        }
    }

    /// The field-level violations, for `invalid_input`.
    pub fn violations(&self) -> &[engram_core::Violation] {
        match self {
            EngramError::Invalid(e) => &e.violations,
            EngramError::Store(_) => &[],
        }
    }
}
