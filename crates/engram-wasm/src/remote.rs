//! Remote embedding providers from JavaScript: `createMemory({ …, embedder: { … } })`.

use engram_embed_remote::{Protocol, RemoteConfig, RemoteEmbedder};
use js_sys::Reflect;
use wasm_bindgen::prelude::*;

use crate::spec::{fetch_transport, Spec};

/// The remote embedder described by `options.embedder`
/// (`{ provider: "openai" | "ollama", url, model, dims, apiKey?, requestDims? }`), if any.
/// Requests go through `options.fetch` or the global `fetch`.
pub fn from_options(options: &JsValue) -> Result<Option<Box<dyn engram::Embed>>, JsValue> {
    let Some(spec) = Spec::of(options, "embedder") else {
        return Ok(None);
    };
    let spec = spec.object("an object")?;
    let provider = spec.required("provider")?;
    let protocol = Protocol::parse(&provider)
        .ok_or_else(|| spec.invalid("provider", "must be \"openai\" or \"ollama\""))?;
    let dims = Reflect::get(&spec.value, &JsValue::from_str("dims"))
        .ok()
        .and_then(|v| v.as_f64())
        .filter(|d| d.fract() == 0.0 && *d >= 1.0 && *d <= 65_536.0)
        .ok_or_else(|| spec.invalid("dims", "must be a positive integer"))? as usize;
    let mut config = RemoteConfig::new(
        protocol,
        &spec.required("url")?,
        &spec.required("model")?,
        dims,
    );
    config.api_key = spec.optional("apiKey")?;
    config.request_dims = Reflect::get(&spec.value, &JsValue::from_str("requestDims"))
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    Ok(Some(Box::new(RemoteEmbedder::new(
        fetch_transport(options)?,
        config,
    ))))
}
