//! The embedding model in JavaScript hosts.

use std::rc::Rc;

use engram::Embed;
use engram_embed::{Embedder, EngramEmbedder, MINILM_INT8_ID};
use js_sys::{Float32Array, Uint8Array};
use wasm_bindgen::prelude::*;

use crate::errors::js_error;

/// A loaded sentence-embedding model (all-MiniLM-L6-v2 int8 by default). Load it once and
/// share it between engram handles.
#[wasm_bindgen]
pub struct EmbeddingModel {
    pub(crate) inner: Rc<EngramEmbedder>,
}

/// Loads the model from the bytes of its ONNX file and its `tokenizer.json` (the host
/// fetches them from wherever it keeps them: a file, a URL, a Worker binding).
#[wasm_bindgen(js_name = loadEmbeddingModel)]
pub fn load_embedding_model(
    onnx: &Uint8Array,
    tokenizer_json: &Uint8Array,
    model_id: Option<String>,
) -> Result<EmbeddingModel, JsValue> {
    let id = model_id.unwrap_or_else(|| MINILM_INT8_ID.to_owned());
    let embedder = Embedder::load(&onnx.to_vec(), &tokenizer_json.to_vec(), &id).map_err(|e| {
        js_error(
            "invalid_input",
            &e.to_string(),
            Some(("model", "cannot be loaded")),
        )
    })?;
    Ok(EmbeddingModel {
        inner: Rc::new(EngramEmbedder::new(embedder)),
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
            .map_err(|e| js_error("storage_error", &e, None))?;
        Ok(Float32Array::from(vector.as_slice()))
    }
}
