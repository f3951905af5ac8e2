//! The storage backends a JavaScript host can choose.

use engram::{DatabaseTarget, EngramError, SharedTransport};
use engram_hrana::HranaClient;
use engram_store::{Database, Rows, SqlError, Statement, StoreError};
use wasm_bindgen::JsValue;

use crate::errors::to_js_error;

/// A libSQL server over HTTP, or the in-wasm SQLite engine.
pub enum AnyDatabase {
    /// Hrana over `fetch`.
    Remote(HranaClient<SharedTransport>),
    /// SQLite compiled into this module.
    #[cfg(feature = "embedded")]
    Embedded(engram_sqlite::SqliteDatabase),
}

impl AnyDatabase {
    /// The backend for validated options' `target`; remote requests go through `http`.
    pub fn open(target: &DatabaseTarget, http: Option<SharedTransport>) -> Result<Self, JsValue> {
        if let Some((field, problem)) = crate::open::unsupported(target) {
            return Err(to_js_error(&EngramError::invalid(field, problem)));
        }
        match target {
            DatabaseTarget::Remote {
                url,
                auth_token,
                max_request_bytes,
            } => match http {
                Some(http) => {
                    let client = HranaClient::new(http, url, auth_token.clone());
                    Ok(AnyDatabase::Remote(match max_request_bytes {
                        Some(bytes) => client
                            .with_max_request_bytes(usize::try_from(*bytes).unwrap_or(usize::MAX)),
                        None => client,
                    }))
                }
                None => Err(to_js_error(&EngramError::invalid(
                    "fetch",
                    "no global fetch in this environment; pass options.fetch",
                ))),
            },
            DatabaseTarget::Local { .. } => Self::embedded(),
        }
    }

    #[cfg(feature = "embedded")]
    fn embedded() -> Result<Self, JsValue> {
        engram_sqlite::SqliteDatabase::open_in_memory()
            .map(AnyDatabase::Embedded)
            .map_err(|e| to_js_error(&EngramError::Store(e)))
    }

    #[cfg(not(feature = "embedded"))]
    fn embedded() -> Result<Self, JsValue> {
        Err(to_js_error(&EngramError::invalid(
            "local",
            "not available in this build; give options.url",
        )))
    }
}

impl Database for AnyDatabase {
    async fn pipeline(
        &self,
        statements: &[Statement],
    ) -> Result<Vec<Result<Rows, SqlError>>, StoreError> {
        match self {
            AnyDatabase::Remote(db) => db.pipeline(statements).await,
            #[cfg(feature = "embedded")]
            AnyDatabase::Embedded(db) => db.pipeline(statements).await,
        }
    }

    async fn transaction(&self, statements: &[Statement]) -> Result<Vec<Rows>, StoreError> {
        match self {
            AnyDatabase::Remote(db) => db.transaction(statements).await,
            #[cfg(feature = "embedded")]
            AnyDatabase::Embedded(db) => db.transaction(statements).await,
        }
    }

    fn describe(&self) -> String {
        match self {
            AnyDatabase::Remote(db) => db.describe(),
            #[cfg(feature = "embedded")]
            AnyDatabase::Embedded(db) => db.describe(),
        }
    }
}
