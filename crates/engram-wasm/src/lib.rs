//! JavaScript bindings: `createMemory(options)` returns an engram handle whose methods
//! return promises. Inputs are plain objects validated by the Rust core (errors name the
//! field); outputs are plain objects. Errors are `Error`s with the core's `code`
//! (`invalid_input`, `not_found`, `unauthorized`, `forbidden`, `unavailable`, `sql_error`,
//! `storage_error`, `corrupt`, `embedder_unavailable`, `model_error`, `internal`), the HTTP `status`
//! that code maps to, and `violations`.
//!
//! Nothing here panics on bad input: every value from JavaScript goes through fallible
//! conversion, because a panic would kill the wasm instance for every later caller.

#![warn(missing_docs)]

mod agent;
#[cfg(feature = "code")]
mod code;
mod database;
mod errors;
mod files;
mod graph;
mod host;
mod manage;
mod mcp;
mod model;
mod observer;
mod open;
mod rerank;
pub mod transport;
mod types;
mod typescript;

// The Worker's one module carries the static edge model's exports too.
#[cfg(feature = "static-embedder")]
extern crate engram_wasm_embed;

use std::rc::Rc;

use engram::{Engram, SearchQuery};
use js_sys::{Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::database::AnyDatabase;
use crate::errors::{js_error, to_js_error};
use engram::ErrorCode;

/// An open engram on one database and project.
#[wasm_bindgen(js_name = Engram)]
pub struct EngramHandle {
    inner: Rc<Engram<AnyDatabase>>,
}

/// Opens engram. `options`: `{ url, authToken?, projectId?, fetch? }` for a libSQL server
/// over HTTP, or `{ local: true, path?, projectId? }` for the in-wasm SQLite engine: kept in
/// the file `path` in Node, in OPFS under the name `path` in a browser's dedicated Worker,
/// in memory without `path`.
/// With `embedder: { provider: "openai" | "ollama", url, model, dims, apiKey? }` memories
/// are embedded by that provider through `fetch` (circuit breaker: 3 failures → keyword-only
/// for 30 s; memories are stored and embedded later by `embedPending`). `residentVectors:
/// true` keeps the project's vectors in memory for fast dense searches in a long-lived
/// process (2 × dims bytes per memory, loaded by the first searches or at once by
/// `loadResidentVectors`); leave it off where an instance serves one request (a Worker).
/// `residentKeywords: true` likewise keeps the keyword table's postings in memory, so
/// keyword searches rank in process with FTS5's own scores (loaded by the first searches
/// or at once by `loadResidentKeywords`). `vectorIndex: true` (with an embedder) makes dense
/// searches use libSQL's vector index on the server once the project has 3,000 memories,
/// creating it if absent (one round trip when opening); the in-wasm engine has none and
/// keeps the exact scan.
/// `reranker` scores each search's best 20 (its ranks fused with engram's): a
/// function `(query, documents) => scores` (or a promise of them), or a rerank service
/// `{ provider: "cohere" | "tei", url, model?, apiKey? }` called through `fetch`.
#[wasm_bindgen(js_name = createMemory, unchecked_return_type = "Promise<Engram>")]
pub fn create_memory(
    #[wasm_bindgen(unchecked_param_type = "CreateMemoryOptions")] options: JsValue,
) -> Promise {
    open(options, None)
}

/// Like `createMemory`, with an embedding model (`loadEmbeddingModel`'s, or any object with
/// `modelId`, `dims` and `embedMany(texts)`): memories get vectors and searches are hybrid
/// (keyword + dense, fused by reciprocal rank).
#[wasm_bindgen(js_name = createMemoryWithModel, unchecked_return_type = "Promise<Engram>")]
pub fn create_memory_with_model(
    #[wasm_bindgen(unchecked_param_type = "CreateMemoryOptions")] options: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Embedder")] model: JsValue,
) -> Promise {
    match model::HostModel::from_value(model) {
        Ok(model) => open(options, Some(Box::new(model))),
        Err(error) => Promise::reject(&error),
    }
}

fn open(options: JsValue, model: Option<Box<dyn engram::Embed>>) -> Promise {
    future_to_promise(async move {
        let engram = open::open(options, model).await?;
        Ok(EngramHandle {
            inner: Rc::new(engram),
        }
        .into())
    })
}

/// The HTTP status a server answers an error `code` with (`invalid_input` → 400,
/// `not_found` → 404, …; unknown codes → 500), so a server built on the package reports
/// failures as every engram host does.
#[wasm_bindgen(js_name = httpStatus)]
pub fn http_status(code: &str) -> u16 {
    engram::ErrorCode::ALL
        .into_iter()
        .find(|c| c.as_str() == code)
        .map_or(500, engram::ErrorCode::http_status)
}

#[wasm_bindgen(js_class = Engram)]
impl EngramHandle {
    /// Stores a memory: validates it, redacts secrets, writes it in one transaction.
    #[wasm_bindgen(unchecked_return_type = "Promise<Remembered>")]
    pub fn remember(
        &self,
        #[wasm_bindgen(unchecked_param_type = "NewMemory")] memory: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let json = types::stringify(&memory, "memory")?;
            let stored = inner
                .remember_json(&json)
                .await
                .map_err(|e| to_js_error(&e))?;
            types::to_js(&stored)
        })
    }

    /// Searches through the full retrieval pipeline (keyword, dense with a model, graph
    /// after `indexFiles`; fusion, boost, scoring, intent rules, packing); one database
    /// round trip. Each hit carries its score `breakdown`, the response its `timings`.
    #[wasm_bindgen(unchecked_return_type = "Promise<SearchResponse>")]
    pub fn search(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SearchQuery | string")] query: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let query = match query.as_string() {
                Some(text) => SearchQuery::new(text),
                None => SearchQuery::from_json(&types::stringify(&query, "query")?)
                    .map_err(|e| to_js_error(&e.into()))?,
            };
            let response = inner.search(&query).await.map_err(|e| to_js_error(&e))?;
            types::to_js(&response)
        })
    }

    /// Runs several searches (at most 16, each a query or its text) with one database round
    /// trip for all of them; resolves to one response per query, in order, each what
    /// `search` answers for it.
    #[wasm_bindgen(js_name = searchMany, unchecked_return_type = "Promise<SearchResponse[]>")]
    pub fn search_many(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(SearchQuery | string)[]")] queries: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let queries = SearchQuery::list_from_json(&types::stringify(&queries, "queries")?)
                .map_err(|e| to_js_error(&e.into()))?;
            let responses = inner
                .search_many(&queries)
                .await
                .map_err(|e| to_js_error(&e))?;
            types::to_js(&responses)
        })
    }

    /// Embeds up to `batch` memories that lack a vector of the current model; resolves to
    /// `{ embedded, remaining }`.
    #[wasm_bindgen(js_name = embedPending, unchecked_return_type = "Promise<{ embedded: number; remaining: number }>")]
    pub fn embed_pending(&self, batch: u32) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let progress = inner
                .embed_pending(batch)
                .await
                .map_err(|e| to_js_error(&e))?;
            types::to_js(&progress)
        })
    }

    /// Loads the resident vectors now, 4,096 per round trip, rather than over the first
    /// searches (which use the exact scan until the set is in); resolves to how many
    /// vectors the set holds (0 without `residentVectors`).
    #[wasm_bindgen(js_name = loadResidentVectors, unchecked_return_type = "Promise<number>")]
    pub fn load_resident_vectors(&self) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let count = inner
                .load_resident_vectors()
                .await
                .map_err(|e| to_js_error(&e))?;
            Ok(JsValue::from(count as f64))
        })
    }

    /// Loads the resident keywords now, 4,096 memories per round trip, rather than over the
    /// first keyword searches (which FTS5 answers until the index is in); resolves to how
    /// many memories the index holds (0 without `residentKeywords`).
    #[wasm_bindgen(js_name = loadResidentKeywords, unchecked_return_type = "Promise<number>")]
    pub fn load_resident_keywords(&self) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let count = inner
                .load_resident_keywords()
                .await
                .map_err(|e| to_js_error(&e))?;
            Ok(JsValue::from(count as f64))
        })
    }

    /// The memory with this id, or `null`.
    #[wasm_bindgen(unchecked_return_type = "Promise<Memory | null>")]
    pub fn get(&self, id: String) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            match inner.get(&id).await.map_err(|e| to_js_error(&e))? {
                Some(memory) => types::to_js(&memory),
                None => Ok(JsValue::NULL),
            }
        })
    }

    /// Forgets (soft-deletes) a memory; resolves to whether a live memory was forgotten.
    #[wasm_bindgen(unchecked_return_type = "Promise<boolean>")]
    pub fn forget(&self, id: String) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let forgotten = inner.forget(&id).await.map_err(|e| to_js_error(&e))?;
            Ok(JsValue::from_bool(forgotten))
        })
    }

    /// The memory with this id whatever its state (live, forgotten, retired, or superseded:
    /// then `supersededBy` names its replacement), or `null`.
    #[wasm_bindgen(js_name = getAny, unchecked_return_type = "Promise<Memory | null>")]
    pub fn get_any(&self, id: String) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            match inner.get_any(&id).await.map_err(|e| to_js_error(&e))? {
                Some(memory) => types::to_js(&memory),
                None => Ok(JsValue::NULL),
            }
        })
    }

    /// Every change to the memory, oldest first (it outlives a deleted memory); rejects
    /// with `not_found` for an id never of this project.
    #[wasm_bindgen(unchecked_return_type = "Promise<HistoryEntry[]>")]
    pub fn history(&self, id: String) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let entries = inner.history(&id).await.map_err(|e| to_js_error(&e))?;
            types::to_js(&entries)
        })
    }

    /// Makes a retired memory (forgotten, flagged wrong, superseded or pruned) live again;
    /// rejects with `invalid_input` for a live memory or one whose words a live memory now
    /// says, `not_found` for an id not of this project.
    #[wasm_bindgen(unchecked_return_type = "Promise<Memory>")]
    pub fn restore(&self, id: String) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let memory = inner.restore(&id).await.map_err(|e| to_js_error(&e))?;
            types::to_js(&memory)
        })
    }

    /// Prunes the project: retires decayed memories and, over the cap, the least valuable;
    /// deletes retired ones past the grace period; `{ dryRun: true }` only reports.
    #[wasm_bindgen(unchecked_return_type = "Promise<PruneReport>")]
    pub fn prune(
        &self,
        #[wasm_bindgen(unchecked_param_type = "PruneRequest | undefined")] request: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let json = if request.is_undefined() || request.is_null() {
                "{}".to_owned()
            } else {
                types::stringify(&request, "request")?
            };
            let report = inner.prune_json(&json).await.map_err(|e| to_js_error(&e))?;
            types::to_js(&report)
        })
    }

    /// Writes what searches and injections learned (uses, stale marks) now; any write
    /// carries it too, so call it where the process stops.
    #[wasm_bindgen(js_name = flushUses, unchecked_return_type = "Promise<UsesFlushed>")]
    pub fn flush_uses(&self) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let flushed = inner.flush_uses().await.map_err(|e| to_js_error(&e))?;
            types::to_js(&flushed)
        })
    }

    /// Whether writes are degraded (the database out of reach) and how many wait in the
    /// buffer: `{ degraded, pending, capacity, dropped, lastError? }`.
    #[wasm_bindgen(js_name = writeStatus, unchecked_return_type = "WriteStatus")]
    pub fn write_status(&self) -> Result<JsValue, JsValue> {
        types::to_js(&self.inner.write_status())
    }

    /// Sends the buffered writes now (each once, stopping at the first failure that
    /// passes); resolves to the write status after.
    #[wasm_bindgen(js_name = flushWrites, unchecked_return_type = "Promise<WriteStatus>")]
    pub fn flush_writes(&self) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { types::to_js(&inner.flush_writes().await) })
    }

    /// The project id this handle works on.
    #[wasm_bindgen(getter, js_name = projectId)]
    pub fn project_id(&self) -> String {
        self.inner.project_id().to_owned()
    }

    /// A description of the storage backend.
    #[wasm_bindgen(getter)]
    pub fn backend(&self) -> String {
        use engram::Database;
        self.inner.database().describe()
    }
}

/// Reads an optional string property, rejecting other types with a typed error.
pub(crate) fn string_option(options: &JsValue, key: &str) -> Result<Option<String>, JsValue> {
    if !options.is_object() {
        return Err(js_error(
            ErrorCode::InvalidInput,
            "options must be an object",
            Some(("options", "must be an object")),
        ));
    }
    let value = Reflect::get(options, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED);
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    value.as_string().map(Some).ok_or_else(|| {
        js_error(
            ErrorCode::InvalidInput,
            &format!("{key} must be a string"),
            Some((key, "must be a string")),
        )
    })
}
