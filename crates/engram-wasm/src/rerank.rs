//! The rerank stage from JavaScript: `createMemory({ …, reranker })` takes a function the
//! host provides (a cross-encoder in transformers.js, a call to its own service) or a
//! rerank service reached through `fetch`.

use engram::{Rerank, RerankFuture};
use engram_rerank_remote::{RemoteReranker, RerankConfig, RerankProtocol};
use js_sys::{Array, ArrayBuffer, Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::spec::{fetch_transport, Spec};

/// The reranker described by `options.reranker`, if any: a function
/// `(query, documents) => number[] | Promise<number[]>` (a typed array will do), or
/// `{ provider: "cohere" | "tei" | …, url, model?, apiKey? }` called through `options.fetch`
/// or the global `fetch`.
pub fn from_options(options: &JsValue) -> Result<Option<Box<dyn Rerank>>, JsValue> {
    let Some(spec) = Spec::of(options, "reranker") else {
        return Ok(None);
    };
    if let Some(function) = spec.value.dyn_ref::<Function>() {
        return Ok(Some(Box::new(JsReranker {
            function: function.clone(),
        })));
    }
    let spec = spec.object("a function or an object")?;
    let protocol = RerankProtocol::parse(&spec.required("provider")?).ok_or_else(|| {
        spec.invalid(
            "provider",
            "must be \"cohere\" (also \"jina\", \"voyage\", \"vllm\", \"infinity\") or \"tei\"",
        )
    })?;
    let mut config = RerankConfig::new(protocol, spec.required("url")?);
    config.model = spec.optional("model")?;
    config.api_key = spec.optional("apiKey")?;
    if protocol == RerankProtocol::Cohere && config.model.is_none() {
        return Err(spec.invalid("model", "is required for this provider"));
    }
    Ok(Some(Box::new(RemoteReranker::new(
        fetch_transport(options)?,
        config,
    ))))
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
