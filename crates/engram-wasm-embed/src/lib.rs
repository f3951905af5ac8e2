//! The embedding models for JavaScript hosts, as a module of their own: the npm package
//! loads it only when a model is used, so the core module (storage, retrieval, observer,
//! code graph) starts without tract. A Worker links it into its one module instead.
//!
//! A model is used by the core through three members every host can call: `modelId`,
//! `dims` and `embedMany(texts)`, which returns the vectors end to end in one
//! `Float32Array`.

#![warn(missing_docs)]

#[cfg(feature = "transformer")]
mod model_bytes;

use std::rc::Rc;

use engram::{Embed, ErrorCode};
#[cfg(feature = "transformer")]
use engram_embed::{Embedder, EngramEmbedder, Footprint, MINILM_INT8_ID};
use engram_embed::{StaticEmbedder, STATIC_MINILM_ID};
use js_sys::{Array, Float32Array, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

#[cfg(feature = "transformer")]
pub use model_bytes::ModelBytes;

/// An [`Embed`] that can also embed one text synchronously, for `EmbeddingModel.embed`.
trait EmbedOne: Embed {
    fn embed_one(&self, text: &str) -> Result<Vec<f32>, String>;
}

#[cfg(feature = "transformer")]
impl EmbedOne for EngramEmbedder {
    fn embed_one(&self, text: &str) -> Result<Vec<f32>, String> {
        EngramEmbedder::embed_one(self, text)
    }
}

impl EmbedOne for StaticEmbedder {
    fn embed_one(&self, text: &str) -> Result<Vec<f32>, String> {
        self.embed(text).map_err(|e| e.to_string())
    }
}

/// A loaded sentence-embedding model: the transformer (all-MiniLM-L6-v2 int8) or the static
/// edge model distilled from it. Load it once and share it between engram handles.
#[wasm_bindgen]
pub struct EmbeddingModel {
    inner: Rc<dyn EmbedOne>,
}

/// A `model_error` as every engram host reports it: an `Error` with `code` and `status`.
fn model_error(message: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    error.set_name("EngramError");
    let code = ErrorCode::ModelError;
    let _ = Reflect::set(&error, &"code".into(), &JsValue::from_str(code.as_str()));
    let _ = Reflect::set(&error, &"status".into(), &JsValue::from(code.http_status()));
    let _ = Reflect::set(&error, &"violations".into(), &Array::new());
    error.into()
}

/// A loaded model, or the load's failure as a `model_error`.
fn loaded<E: EmbedOne + 'static>(
    result: Result<E, impl std::fmt::Display>,
) -> Result<EmbeddingModel, JsValue> {
    result
        .map(|embedder| EmbeddingModel {
            inner: Rc::new(embedder),
        })
        .map_err(|e| model_error(&e.to_string()))
}

/// Loads the transformer from the bytes of its ONNX file and its `tokenizer.json` (the host
/// fetches them from wherever it keeps them: a file, a URL, a Worker binding). `footprint`
/// is `"fast"` (the default) or `"compact"`, for hosts with a hard memory limit.
#[cfg(feature = "transformer")]
#[wasm_bindgen(js_name = loadEmbeddingModel)]
pub fn load_embedding_model(
    onnx: &Uint8Array,
    tokenizer_json: &Uint8Array,
    model_id: Option<String>,
    footprint: Option<String>,
) -> Result<EmbeddingModel, JsValue> {
    load_transformer(onnx.to_vec(), &tokenizer_json.to_vec(), model_id, footprint)
}

/// As `loadEmbeddingModel`, with both files already streamed into this module's memory
/// (`ModelBytes`, which the load consumes): where memory is capped, the files are never held
/// whole in JavaScript as well.
#[cfg(feature = "transformer")]
#[wasm_bindgen(js_name = loadEmbeddingModelFromParts)]
pub fn load_embedding_model_from_parts(
    onnx: ModelBytes,
    tokenizer_json: ModelBytes,
    model_id: Option<String>,
    footprint: Option<String>,
) -> Result<EmbeddingModel, JsValue> {
    let tokenizer_json = tokenizer_json.into_complete()?;
    load_transformer(onnx.into_complete()?, &tokenizer_json, model_id, footprint)
}

#[cfg(feature = "transformer")]
fn load_transformer(
    onnx: Vec<u8>,
    tokenizer_json: &[u8],
    model_id: Option<String>,
    footprint: Option<String>,
) -> Result<EmbeddingModel, JsValue> {
    let id = model_id.unwrap_or_else(|| MINILM_INT8_ID.to_owned());
    let footprint = footprint
        .as_deref()
        .map_or(Ok(Footprint::Fast), str::parse)
        .map_err(|e: engram_embed::EmbedError| model_error(&e.to_string()))?;
    // The ONNX bytes stay in this module's memory only for as long as parsing takes.
    let embedder = Embedder::load_owned(onnx, tokenizer_json, &id, footprint);
    loaded(embedder.map(EngramEmbedder::new))
}

/// Loads the static edge model (`model.bin` from scripts/distill-static.py) and its
/// `tokenizer.json`: a few MB of memory and microseconds per text, for Workers.
#[wasm_bindgen(js_name = loadStaticEmbeddingModel)]
pub fn load_static_embedding_model(
    table: &Uint8Array,
    tokenizer_json: &Uint8Array,
    model_id: Option<String>,
) -> Result<EmbeddingModel, JsValue> {
    let id = model_id.unwrap_or_else(|| STATIC_MINILM_ID.to_owned());
    loaded(StaticEmbedder::load(
        &table.to_vec(),
        &tokenizer_json.to_vec(),
        &id,
    ))
}

#[wasm_bindgen]
impl EmbeddingModel {
    /// The model id stored with its vectors.
    #[wasm_bindgen(getter, js_name = modelId)]
    pub fn model_id(&self) -> String {
        self.inner.model_id().to_owned()
    }

    /// Vector length.
    #[wasm_bindgen(getter)]
    pub fn dims(&self) -> usize {
        self.inner.dims()
    }

    /// Embeds one text into a unit-length vector.
    pub fn embed(&self, text: &str) -> Result<Float32Array, JsValue> {
        let vector = self.inner.embed_one(text).map_err(|e| model_error(&e))?;
        Ok(Float32Array::from(vector.as_slice()))
    }

    /// Embeds `texts` (strings), returning their vectors end to end: `texts.length × dims`
    /// numbers.
    #[wasm_bindgen(js_name = embedMany)]
    pub fn embed_many(&self, texts: Array) -> Result<Float32Array, JsValue> {
        let mut flat = Vec::with_capacity(texts.length() as usize * self.inner.dims());
        for text in texts.iter() {
            let text = text
                .as_string()
                .ok_or_else(|| model_error("embedMany takes an array of strings"))?;
            flat.extend(self.inner.embed_one(&text).map_err(|e| model_error(&e))?);
        }
        Ok(Float32Array::from(flat.as_slice()))
    }
}
