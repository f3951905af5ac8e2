//! The storage backends a JavaScript host can choose.

use engram_hrana::HranaClient;
use engram_store::{Database, Rows, SqlError, Statement, StoreError};
use js_sys::Reflect;
use wasm_bindgen::{JsCast, JsValue};

use crate::errors::js_error;
use crate::string_option;
use crate::transport::FetchTransport;

/// A libSQL server over HTTP, or the in-wasm SQLite engine.
pub enum AnyDatabase {
    /// Hrana over `fetch`.
    Remote(HranaClient<FetchTransport>),
    /// SQLite compiled into this module.
    #[cfg(feature = "embedded")]
    Embedded(engram_sqlite::SqliteDatabase),
}

impl AnyDatabase {
    /// Picks the backend from `createMemory` options.
    pub fn from_options(options: &JsValue) -> Result<Self, JsValue> {
        let url = string_option(options, "url")?;
        let local = Reflect::get(options, &"local".into()).unwrap_or(JsValue::UNDEFINED);
        let wants_local = local.as_bool().unwrap_or(false);
        match (url, wants_local) {
            (Some(_), true) => Err(js_error(
                "invalid_input",
                "give either url or local, not both",
                Some(("local", "conflicts with url")),
            )),
            (Some(url), false) => {
                if !(url.starts_with("http://")
                    || url.starts_with("https://")
                    || url.starts_with("libsql://"))
                {
                    return Err(js_error(
                        "invalid_input",
                        "url must start with http://, https:// or libsql://",
                        Some(("url", "must start with http://, https:// or libsql://")),
                    ));
                }
                let token = string_option(options, "authToken")?;
                let fetch = Reflect::get(options, &"fetch".into()).unwrap_or(JsValue::UNDEFINED);
                let fetch = if fetch.is_undefined() || fetch.is_null() {
                    None
                } else {
                    Some(fetch.dyn_into::<js_sys::Function>().map_err(|_| {
                        js_error(
                            "invalid_input",
                            "fetch must be a function",
                            Some(("fetch", "must be a function")),
                        )
                    })?)
                };
                let transport = FetchTransport::new(fetch).map_err(|e| {
                    js_error(
                        "invalid_input",
                        &e.as_string().unwrap_or_default(),
                        Some(("fetch", "missing")),
                    )
                })?;
                Ok(AnyDatabase::Remote(HranaClient::new(
                    transport, &url, token,
                )))
            }
            (None, true) => Self::embedded(),
            (None, false) => Err(js_error(
                "invalid_input",
                "give options.url (a libSQL server) or options.local = true",
                Some(("url", "is required unless local is true")),
            )),
        }
    }

    #[cfg(feature = "embedded")]
    fn embedded() -> Result<Self, JsValue> {
        engram_sqlite::SqliteDatabase::open_in_memory()
            .map(AnyDatabase::Embedded)
            .map_err(|e| js_error("storage_error", &e.to_string(), None))
    }

    #[cfg(not(feature = "embedded"))]
    fn embedded() -> Result<Self, JsValue> {
        Err(js_error(
            "invalid_input",
            "this build has no embedded engine; give options.url",
            Some(("local", "not available in this build")),
        ))
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
