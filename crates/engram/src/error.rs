//! The error type of the engram API and the codes every host reports.

use engram_core::ValidationError;
use engram_store::StoreError;
use serde::Serialize;

/// A stable, machine-readable code for a failure: the same failure has the same code in
/// every host (the `code` of a JavaScript `Error`, of the component's `error` record, of
/// the Worker's JSON error and of the CLI's `--json` error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The input broke a rule; the violations name each offending field. Not retryable.
    InvalidInput,
    /// What the call names does not exist (a memory id, a file in the code graph).
    NotFound,
    /// The database refused the credentials.
    Unauthorized,
    /// The credentials are good but do not reach what the call names (another tenant's
    /// project), or the call sets what only a person may (a trust flag).
    Forbidden,
    /// The database could not be reached or is busy; retry later.
    Unavailable,
    /// The database has been out of reach for long enough that the write buffer is full;
    /// the write was not sent. Retry once `status` is no longer degraded.
    BufferFull,
    /// The database rejected a statement.
    SqlError,
    /// The database answered something engram cannot use, or failed otherwise.
    StorageError,
    /// The database is damaged or is not an engram database; nothing was changed.
    /// `engram doctor` says what is wrong, `engram repair` rebuilds or restores.
    Corrupt,
    /// The embedder failed or its circuit is open; memories are still stored
    /// keyword-searchable and embedded once it recovers.
    EmbedderUnavailable,
    /// An embedding model could not be loaded, or it failed on a text.
    ModelError,
    /// A fault inside engram or its binding (a result that could not be encoded); a bug.
    Internal,
}

impl ErrorCode {
    /// Every code, in the order the documentation lists them.
    pub const ALL: [ErrorCode; 12] = [
        ErrorCode::InvalidInput,
        ErrorCode::NotFound,
        ErrorCode::Unauthorized,
        ErrorCode::Forbidden,
        ErrorCode::Unavailable,
        ErrorCode::BufferFull,
        ErrorCode::SqlError,
        ErrorCode::StorageError,
        ErrorCode::Corrupt,
        ErrorCode::EmbedderUnavailable,
        ErrorCode::ModelError,
        ErrorCode::Internal,
    ];

    /// The code as hosts spell it: `invalid_input`, `not_found`, …
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::BufferFull => "buffer_full",
            ErrorCode::SqlError => "sql_error",
            ErrorCode::StorageError => "storage_error",
            ErrorCode::Corrupt => "corrupt",
            ErrorCode::EmbedderUnavailable => "embedder_unavailable",
            ErrorCode::ModelError => "model_error",
            ErrorCode::Internal => "internal",
        }
    }

    /// The HTTP status a server answers this failure with.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::InvalidInput => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::Forbidden => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::Unavailable | ErrorCode::BufferFull | ErrorCode::EmbedderUnavailable => 503,
            ErrorCode::SqlError
            | ErrorCode::StorageError
            | ErrorCode::Corrupt
            | ErrorCode::ModelError
            | ErrorCode::Internal => 500,
        }
    }

    /// Whether the same call may succeed later unchanged.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            ErrorCode::Unavailable | ErrorCode::BufferFull | ErrorCode::EmbedderUnavailable
        )
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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
    /// An embedding model could not be loaded or failed on a text.
    #[error("model error: {0}")]
    Model(String),
    /// What the call names does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// The call sets what its caller may not (a trust flag only a person sets); the
    /// violations name each field.
    #[error("forbidden: {0}")]
    Forbidden(ValidationError),
    /// The database has been out of reach so long that the write buffer is full: this
    /// write was not sent.
    #[error("the database is out of reach and {pending} writes are waiting (the buffer is full); this write was not sent")]
    BufferFull {
        /// Writes waiting in the buffer.
        pending: u32,
    },
    /// A fault inside engram or a binding; a bug, reported rather than a panic.
    #[error("internal error: {0}")]
    Internal(String),
}

impl EngramError {
    /// An `invalid_input` error naming one field.
    pub fn invalid(field: impl Into<String>, problem: impl Into<String>) -> Self {
        EngramError::Invalid(ValidationError::field(field, problem))
    }

    /// The stable code hosts report for this failure.
    pub fn code(&self) -> ErrorCode {
        match self {
            EngramError::Invalid(_) => ErrorCode::InvalidInput,
            EngramError::Store(StoreError::Unauthorized { .. }) => ErrorCode::Unauthorized,
            EngramError::Store(e) if e.is_integrity() => ErrorCode::Corrupt,
            EngramError::Store(e) if e.is_transient() => ErrorCode::Unavailable,
            EngramError::Store(StoreError::Sql(_)) => ErrorCode::SqlError,
            EngramError::Store(_) => ErrorCode::StorageError,
            EngramError::EmbedderUnavailable { .. } => ErrorCode::EmbedderUnavailable,
            EngramError::Model(_) => ErrorCode::ModelError,
            EngramError::NotFound(_) => ErrorCode::NotFound,
            EngramError::Forbidden(_) => ErrorCode::Forbidden,
            EngramError::BufferFull { .. } => ErrorCode::BufferFull,
            EngramError::Internal(_) => ErrorCode::Internal,
        }
    }

    /// The field-level violations, for `invalid_input`.
    pub fn violations(&self) -> &[engram_core::Violation] {
        match self {
            EngramError::Invalid(e) | EngramError::Forbidden(e) => &e.violations,
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_snake_case_and_serialize_as_spelled() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            let text = code.as_str();
            assert!(seen.insert(text), "{text} twice");
            assert!(text.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
            assert_eq!(serde_json::to_value(code).unwrap(), text);
        }
    }

    #[test]
    fn each_failure_has_its_code() {
        assert_eq!(
            EngramError::invalid("projectId", "must not be empty").code(),
            ErrorCode::InvalidInput
        );
        assert_eq!(
            EngramError::Model("bad onnx".into()).code(),
            ErrorCode::ModelError
        );
        assert_eq!(
            EngramError::Store(StoreError::Sql(engram_store::SqlError {
                message: "no such table".into(),
                code: None
            }))
            .code(),
            ErrorCode::SqlError
        );
        assert_eq!(ErrorCode::NotFound.http_status(), 404);
        assert!(ErrorCode::Unavailable.is_transient());
        assert!(!ErrorCode::InvalidInput.is_transient());
    }
}
