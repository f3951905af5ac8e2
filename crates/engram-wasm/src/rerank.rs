//! A reranker function of the JavaScript host (`createMemory({ …, reranker: fn })`): a
//! cross-encoder in transformers.js, a call to its own service. A rerank service named by
//! an object is built by the core from the options.

use engram::{Rerank, RerankFuture};
use js_sys::{Array, ArrayBuffer, Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::errors::thrown_message;

/// What a thrown value that is neither an `Error` nor a string reads as.
const NOT_AN_ERROR: &str = "a non-Error value";

/// A reranker function of the host: `(query, documents) => number[] | Promise<number[]>`
/// (a typed array will do).
pub struct JsReranker {
    function: Function,
}

impl JsReranker {
    /// Wraps the host's function.
    pub fn new(function: Function) -> Self {
        JsReranker { function }
    }
}

impl Rerank for JsReranker {
    fn rerank<'a>(&'a self, query: &'a str, documents: &'a [String]) -> RerankFuture<'a> {
        Box::pin(async move {
            let texts: Array = documents.iter().map(|d| JsValue::from_str(d)).collect();
            let returned = self
                .function
                .call2(&JsValue::NULL, &JsValue::from_str(query), &texts)
                .map_err(|e| format!("the reranker threw: {}", thrown_message(&e, NOT_AN_ERROR)))?;
            // A plain array and a promise of one are both accepted.
            let scores = JsFuture::from(Promise::resolve(&returned))
                .await
                .map_err(|e| {
                    format!(
                        "the reranker rejected: {}",
                        thrown_message(&e, NOT_AN_ERROR)
                    )
                })?;
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
