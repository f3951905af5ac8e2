//! `createMemory(options)`: the options object decoded into the one options type every
//! host opens with. What JSON cannot carry — the `fetch` requests go through and a
//! reranker function — becomes a capability; the rest is validated by the core.

use engram::SharedTransport;
use engram::{Capabilities, Embed, Engram, EngramError, EngramOptions};
use js_sys::{Function, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use crate::database::AnyDatabase;
use crate::errors::to_js_error;
use crate::files::NodeFiles;
use crate::rerank::JsReranker;
use crate::transport::FetchTransport;
use crate::types;

/// Opens engram as `options` say, with `model` (a loaded `EmbeddingModel`) if given.
pub async fn open(
    options: JsValue,
    model: Option<Box<dyn Embed>>,
) -> Result<Engram<AnyDatabase>, JsValue> {
    let fetch = function_option(&options, "fetch")?;
    let (options, files) = take_files(options);
    // Decoded from JSON: functions (fetch, a reranker function) are left out by
    // JSON.stringify and taken as capabilities below.
    let parsed = EngramOptions::from_json(&types::stringify(&options, "options")?)
        .map_err(|e| to_js_error(&e.into()))?;
    // Without a fetch only the embedded database works; the core says so if the options
    // need HTTP for a provider.
    let http = FetchTransport::new(fetch).ok().map(SharedTransport::new);
    let db = AnyDatabase::open(&parsed.database(), http.clone(), files).await?;
    let mut capabilities = Capabilities::new(crate::host::js_host());
    if let Some(http) = http {
        capabilities = capabilities.with_http(http);
    }
    if let Some(model) = model {
        capabilities = capabilities.with_model(model);
    }
    if let Some(function) = function_option(&options, "reranker")? {
        capabilities = capabilities.with_reranker(Box::new(JsReranker::new(function)));
    }
    Engram::open_with(db, &parsed, capabilities)
        .await
        .map_err(|e| to_js_error(&e))
}

/// `options` without its `files` (the Node entry's file calls, not JSON), and those calls.
fn take_files(options: JsValue) -> (JsValue, Option<NodeFiles>) {
    let key = JsValue::from_str("files");
    let files = match options.is_object() {
        true => Reflect::get(&options, &key).unwrap_or(JsValue::UNDEFINED),
        false => JsValue::UNDEFINED,
    };
    let Some(files) = NodeFiles::from_value(files) else {
        return (options, None);
    };
    let copy = js_sys::Object::assign(&js_sys::Object::new(), options.unchecked_ref());
    let _ = Reflect::delete_property(&copy, &key);
    (copy.into(), Some(files))
}

/// `options[key]` when it is a function; absent (or a plain value, which the core then
/// checks) is `None`, except for `fetch`, which must be a function when given.
fn function_option(options: &JsValue, key: &str) -> Result<Option<Function>, JsValue> {
    if !options.is_object() {
        return Ok(None);
    }
    let value = Reflect::get(options, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED);
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    match value.dyn_into::<Function>() {
        Ok(function) => Ok(Some(function)),
        Err(_) if key == "fetch" => Err(to_js_error(&EngramError::invalid(
            "fetch",
            "must be a function",
        ))),
        Err(_) => Ok(None),
    }
}
