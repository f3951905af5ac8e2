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
    /// The embedder failed, or its circuit is open after repeated failures. Memories are
    /// still stored (keyword-searchable) and embedded once it recovers.
    #[error("embedder unavailable: {reason}")]
    EmbedderUnavailable {
        /// What went wrong.
        reason: String,
        /// When the circuit lets the next call through (Unix milliseconds), if it is open.
        retry_at: Option<i64>,
    },
}

impl EngramError {
    /// A stable machine-readable code for hosts: `invalid_input`, `unauthorized`,
    /// `unavailable` (transient; retry later), `sql_error`, `storage_error`, or
    /// `embedder_unavailable`.
    pub fn code(&self) -> &'static str {
        match self {
            EngramError::Invalid(_) => "invalid_input",
            EngramError::Store(StoreError::Unauthorized { .. }) => "unauthorized",
            EngramError::Store(e) if e.is_transient() => "unavailable",
            EngramError::Store(StoreError::Sql(_)) => "sql_error",
            EngramError::Store(_) => "storage_error",
            EngramError::EmbedderUnavailable { .. } => "embedder_unavailable",
        }
    }

    /// The field-level violations, for `invalid_input`.
    pub fn violations(&self) -> &[engram_core::Violation] {
        match self {
            EngramError::Invalid(e) => &e.violations,
            EngramError::Store(_) | EngramError::EmbedderUnavailable { .. } => &[],
        }
    }
}
