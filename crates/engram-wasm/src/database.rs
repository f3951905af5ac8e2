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
    /// The backend for validated options' `target`; remote requests go through `http`, a
    /// local file through the host's `files` (Node), else OPFS (a browser's worker).
    pub async fn open(
        target: &DatabaseTarget,
        http: Option<SharedTransport>,
        files: Option<crate::files::NodeFiles>,
    ) -> Result<Self, JsValue> {
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
            DatabaseTarget::Local { path } => Self::embedded(path.as_deref(), files).await,
        }
    }

    #[cfg(feature = "embedded")]
    async fn embedded(
        path: Option<&str>,
        files: Option<crate::files::NodeFiles>,
    ) -> Result<Self, JsValue> {
        use engram_sqlite::SqliteDatabase;
        let opened = match (path, files) {
            (None, _) => SqliteDatabase::open_in_memory(),
            (Some(path), Some(files)) => {
                SqliteDatabase::open_with_files(path, std::rc::Rc::new(files))
            }
            (Some(_), None) if !has_sync_access_handles() => {
                return Err(to_js_error(&EngramError::invalid(
                    "path",
                    "a persistent database here needs a file system (Node) or OPFS sync \
                     access handles, which browsers give dedicated Workers only: open engram \
                     inside a Worker, or leave path out for an in-memory database",
                )))
            }
            (Some(name), None) => SqliteDatabase::open_opfs(name).await,
        };
        opened
            .map(AnyDatabase::Embedded)
            .map_err(|e| to_js_error(&EngramError::Store(e)))
    }

    #[cfg(not(feature = "embedded"))]
    async fn embedded(
        _path: Option<&str>,
        _files: Option<crate::files::NodeFiles>,
    ) -> Result<Self, JsValue> {
        Err(to_js_error(&EngramError::invalid(
            "local",
            "not available in this build; give options.url",
        )))
    }
}

/// Whether this global scope has OPFS sync access handles (a browser's dedicated worker).
#[cfg(feature = "embedded")]
fn has_sync_access_handles() -> bool {
    js_sys::Reflect::has(
        &js_sys::global(),
        &JsValue::from_str("FileSystemSyncAccessHandle"),
    )
    .unwrap_or(false)
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
