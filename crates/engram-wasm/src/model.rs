//! The embedding model a host hands `createMemoryWithModel`: any object with `modelId`,
//! `dims` and `embedMany(texts)` (the package's `EmbeddingModel`, from its embedder module,
//! or one the host wraps itself), used as the core's embedding capability.

use engram::{Embed, EmbedFuture, EngramError};
use js_sys::{Array, Float32Array, Function, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use crate::errors::{thrown_message, to_js_error};

/// A host's model, its id and length read once.
pub struct HostModel {
    model: JsValue,
    embed_many: Function,
    model_id: String,
    dims: usize,
}

impl HostModel {
    /// The model in `value`, or an `invalid_input` on `model` naming what it lacks.
    pub fn from_value(value: JsValue) -> Result<Self, JsValue> {
        let invalid = |problem: &str| to_js_error(&EngramError::invalid("model", problem));
        if !value.is_object() {
            return Err(invalid("must be a loaded model (loadEmbeddingModel)"));
        }
        let member = |name: &str| Reflect::get(&value, &JsValue::from_str(name));
        let model_id = member("modelId")
            .ok()
            .and_then(|v| v.as_string())
            .filter(|id| !id.is_empty())
            .ok_or_else(|| invalid("has no modelId (was it freed?)"))?;
        let dims = member("dims")
            .ok()
            .and_then(|v| v.as_f64())
            .filter(|d| d.fract() == 0.0 && *d >= 1.0 && *d <= 65_536.0)
            .ok_or_else(|| invalid("has no dims"))? as usize;
        let embed_many = member("embedMany")
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
            .ok_or_else(|| invalid("has no embedMany(texts)"))?;
        Ok(HostModel {
            model: value,
            embed_many,
            model_id,
            dims,
        })
    }

    fn embed_now(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        let batch: Array = texts.iter().map(|t| JsValue::from_str(t)).collect();
        let answer = self
            .embed_many
            .call1(&self.model, &batch)
            .map_err(|e| thrown_message(&e, "the model failed"))?;
        let flat = answer
            .dyn_into::<Float32Array>()
            .map_err(|_| "embedMany did not return a Float32Array".to_owned())?
            .to_vec();
        if flat.len() != texts.len() * self.dims {
            return Err(format!(
                "embedMany returned {} numbers for {} texts of {} dims",
                flat.len(),
                texts.len(),
                self.dims
            ));
        }
        Ok(flat.chunks(self.dims).map(<[f32]>::to_vec).collect())
    }
}

impl Embed for HostModel {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        let result = self.embed_now(texts);
        Box::pin(async move { result })
    }
}
