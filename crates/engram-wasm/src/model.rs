//! The embedding models in JavaScript hosts.

use std::rc::Rc;

use engram::Embed;
#[cfg(feature = "embedder")]
use engram_embed::{Embedder, EngramEmbedder, MINILM_INT8_ID};
use engram_embed::{StaticEmbedder, STATIC_MINILM_ID};
use js_sys::{Float32Array, Uint8Array};
use wasm_bindgen::prelude::*;

use crate::errors::js_error;
use engram::ErrorCode;

/// An [`Embed`] that can also embed one text synchronously, for `EmbeddingModel.embed`.
pub(crate) trait EmbedOne: Embed {
    fn embed_one(&self, text: &str) -> Result<Vec<f32>, String>;
}

#[cfg(feature = "embedder")]
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
    pub(crate) inner: Rc<dyn EmbedOne>,
}

fn load_error(e: impl std::fmt::Display) -> JsValue {
    js_error(ErrorCode::ModelError, &e.to_string(), None)
}

/// Loads the transformer from the bytes of its ONNX file and its `tokenizer.json` (the host
/// fetches them from wherever it keeps them: a file, a URL, a Worker binding).
#[cfg(feature = "embedder")]
#[wasm_bindgen(js_name = loadEmbeddingModel)]
pub fn load_embedding_model(
    onnx: &Uint8Array,
    tokenizer_json: &Uint8Array,
    model_id: Option<String>,
) -> Result<EmbeddingModel, JsValue> {
    let id = model_id.unwrap_or_else(|| MINILM_INT8_ID.to_owned());
    let embedder =
        Embedder::load(&onnx.to_vec(), &tokenizer_json.to_vec(), &id).map_err(load_error)?;
    Ok(EmbeddingModel {
        inner: Rc::new(EngramEmbedder::new(embedder)),
    })
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
    let embedder =
        StaticEmbedder::load(&table.to_vec(), &tokenizer_json.to_vec(), &id).map_err(load_error)?;
    Ok(EmbeddingModel {
        inner: Rc::new(embedder),
    })
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
        let vector = self
            .inner
            .embed_one(text)
            .map_err(|e| js_error(ErrorCode::ModelError, &e, None))?;
        Ok(Float32Array::from(vector.as_slice()))
    }
}
