//! Storage errors.

/// A statement failed inside the database (syntax, constraint, missing table, …).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[error("SQL error{}: {message}", code.as_deref().map(|c| format!(" ({c})")).unwrap_or_default())]
pub struct SqlError {
    /// The engine's message.
    pub message: String,
    /// The engine's error code, when it sends one (`SQLITE_CONSTRAINT`, …).
    pub code: Option<String>,
}

impl SqlError {
    /// Whether another writer held the database past the wait (`SQLITE_BUSY`, a locked
    /// table): the same statement may succeed later.
    pub fn is_busy(&self) -> bool {
        matches!(self.code.as_deref(), Some("SQLITE_BUSY" | "SQLITE_LOCKED"))
            || self.message.contains("database is locked")
    }

    /// Whether the database file is damaged or is not a database at all.
    pub fn is_corrupt(&self) -> bool {
        matches!(
            self.code.as_deref(),
            Some("SQLITE_CORRUPT" | "SQLITE_NOTADB")
        ) || self.message.contains("malformed")
            || self.message.contains("file is not a database")
    }

    /// An error with a message and no code.
    pub fn new(message: impl Into<String>) -> Self {
        SqlError {
            message: message.into(),
            code: None,
        }
    }
}

/// Why a storage call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    /// A statement failed; in a transaction nothing was committed.
    #[error(transparent)]
    Sql(#[from] SqlError),
    /// The server refused the credentials (HTTP 401/403). The token is never echoed.
    #[error("the database refused the auth token (HTTP {status})")]
    Unauthorized {
        /// The HTTP status.
        status: u16,
    },
    /// The server answered with an unexpected HTTP status.
    #[error("database server answered HTTP {status}: {body}")]
    Http {
        /// The HTTP status.
        status: u16,
        /// The start of the response body.
        body: String,
    },
    /// The request did not reach the server or no answer came back.
    #[error("could not reach the database: {0}")]
    Transport(String),
    /// The server's answer did not follow the protocol.
    #[error("database protocol error: {0}")]
    Protocol(String),
    /// A local engine failed to open or run.
    #[error("database engine error: {0}")]
    Engine(String),
    /// A row did not have the shape the caller expected.
    #[error("unexpected row shape: {0}")]
    Decode(String),
    /// The database is damaged, or is not an engram database; nothing was changed.
    #[error("{0}")]
    Integrity(String),
}

impl StoreError {
    /// Whether retrying the same call later may succeed (network trouble, 5xx).
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::Transport(_) => true,
            StoreError::Http { status, .. } => *status >= 500 || *status == 429,
            StoreError::Sql(e) => e.is_busy(),
            _ => false,
        }
    }

    /// Whether the database is damaged (or not an engram database): repair, not retry.
    pub fn is_integrity(&self) -> bool {
        match self {
            StoreError::Integrity(_) => true,
            StoreError::Sql(e) => e.is_corrupt(),
            _ => false,
        }
    }
}
