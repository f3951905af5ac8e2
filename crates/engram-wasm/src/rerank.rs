//! The rerank stage from JavaScript: `createMemory({ …, reranker })` takes a function the
//! host provides (a cross-encoder in transformers.js, a call to its own service) or a
//! rerank service reached through `fetch`.

use engram::{Rerank, RerankFuture};
use engram_rerank_remote::{RemoteReranker, RerankConfig, RerankProtocol};
use js_sys::{Array, ArrayBuffer, Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::errors::js_error;
use crate::string_option;
use crate::transport::FetchTransport;

/// The reranker described by `options.reranker`, if any: a function
/// `(query, documents) => number[] | Promise<number[]>` (a typed array will do), or
/// `{ provider: "cohere" | "tei" | …, url, model?, apiKey? }` called through `options.fetch`
/// or the global `fetch`.
pub fn from_options(options: &JsValue) -> Result<Option<Box<dyn Rerank>>, JsValue> {
    let spec = Reflect::get(options, &JsValue::from_str("reranker")).unwrap_or(JsValue::UNDEFINED);
    if spec.is_undefined() || spec.is_null() {
        return Ok(None);
    }
    if let Some(function) = spec.dyn_ref::<Function>() {
        return Ok(Some(Box::new(JsReranker {
            function: function.clone(),
        })));
    }
    let invalid = |field: &str, problem: &str| {
        js_error(
            "invalid_input",
            &format!("reranker.{field} {problem}"),
            Some((&format!("reranker.{field}"), problem)),
        )
    };
    if !spec.is_object() {
        return Err(invalid("(root)", "must be a function or an object"));
    }
    let required = |key: &str| {
        string_option(&spec, key).and_then(|v| v.ok_or_else(|| invalid(key, "is required")))
    };
    let provider = required("provider")?;
    let protocol = RerankProtocol::parse(&provider).ok_or_else(|| {
        invalid(
            "provider",
            "must be \"cohere\" (also \"jina\", \"voyage\", \"vllm\", \"infinity\") or \"tei\"",
        )
    })?;
    let mut config = RerankConfig::new(protocol, required("url")?);
    config.model = string_option(&spec, "model")?;
    config.api_key = string_option(&spec, "apiKey")?;
    if protocol == RerankProtocol::Cohere && config.model.is_none() {
        return Err(invalid("model", "is required for this provider"));
    }
    let fetch = Reflect::get(options, &JsValue::from_str("fetch"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok());
    let transport = FetchTransport::new(fetch)?;
    Ok(Some(Box::new(RemoteReranker::new(transport, config))))
}

/// A reranker function of the host.
struct JsReranker {
    function: Function,
}

impl Rerank for JsReranker {
    fn rerank<'a>(&'a self, query: &'a str, documents: &'a [String]) -> RerankFuture<'a> {
        Box::pin(async move {
            let texts: Array = documents.iter().map(|d| JsValue::from_str(d)).collect();
            let returned = self
                .function
                .call2(&JsValue::NULL, &JsValue::from_str(query), &texts)
                .map_err(|e| format!("the reranker threw: {}", describe(&e)))?;
            // A plain array and a promise of one are both accepted.
            let scores = JsFuture::from(Promise::resolve(&returned))
                .await
                .map_err(|e| format!("the reranker rejected: {}", describe(&e)))?;
            // Plain arrays and typed arrays (what ML libraries in JS return) are accepted.
            if !(Array::is_array(&scores) || ArrayBuffer::is_view(&scores)) {
                return Err("the reranker must return an array of numbers".into());
            }
            Array::from(&scores)
                .iter()
                .enumerate()
                .map(|(i, score)| {
                    score
                        .as_f64()
                        .ok_or_else(|| format!("the reranker returned a non-number at index {i}"))
                })
                .collect()
        })
    }
}

/// A thrown value as text: an `Error`'s message, else its string form.
fn describe(value: &JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| "a non-Error value".into())
}
