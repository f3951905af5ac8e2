//! Remote embedding providers from JavaScript: `createMemory({ …, embedder: { … } })`.

use engram_embed_remote::{Protocol, RemoteConfig, RemoteEmbedder};
use js_sys::{Function, Reflect};
use wasm_bindgen::prelude::*;

use crate::errors::js_error;
use crate::string_option;
use crate::transport::FetchTransport;

/// The remote embedder described by `options.embedder`
/// (`{ provider: "openai" | "ollama", url, model, dims, apiKey?, requestDims? }`), if any.
/// Requests go through `options.fetch` or the global `fetch`.
pub fn from_options(options: &JsValue) -> Result<Option<Box<dyn engram::Embed>>, JsValue> {
    let spec = Reflect::get(options, &JsValue::from_str("embedder")).unwrap_or(JsValue::UNDEFINED);
    if spec.is_undefined() || spec.is_null() {
        return Ok(None);
    }
    let invalid = |field: &str, problem: &str| {
        js_error(
            "invalid_input",
            &format!("embedder.{field} {problem}"),
            Some((&format!("embedder.{field}"), problem)),
        )
    };
    if !spec.is_object() {
        return Err(invalid("(root)", "must be an object"));
    }
    let required = |key: &str| {
        string_option(&spec, key).and_then(|v| v.ok_or_else(|| invalid(key, "is required")))
    };
    let provider = required("provider")?;
    let protocol = Protocol::parse(&provider)
        .ok_or_else(|| invalid("provider", "must be \"openai\" or \"ollama\""))?;
    let dims = Reflect::get(&spec, &JsValue::from_str("dims"))
        .ok()
        .and_then(|v| v.as_f64())
        .filter(|d| d.fract() == 0.0 && *d >= 1.0 && *d <= 65_536.0)
        .ok_or_else(|| invalid("dims", "must be a positive integer"))? as usize;
    let mut config = RemoteConfig::new(protocol, &required("url")?, &required("model")?, dims);
    config.api_key = string_option(&spec, "apiKey")?;
    config.request_dims = Reflect::get(&spec, &JsValue::from_str("requestDims"))
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let fetch = Reflect::get(options, &JsValue::from_str("fetch"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok());
    let transport = FetchTransport::new(fetch)?;
    Ok(Some(Box::new(RemoteEmbedder::new(transport, config))))
}
