//! A model file written into the module's memory a piece at a time, as a host streams it.

use js_sys::Uint8Array;
use sha2::{Digest, Sha256};
use wasm_bindgen::prelude::*;

use crate::model_error;

/// A model file written into this module's memory a piece at a time as the host streams it
/// (an R2 object's body, a fetch response) and hashed as it arrives: the file never exists
/// whole in JavaScript, which keeps a 23 MB copy out of an isolate whose memory is capped.
#[wasm_bindgen]
pub struct ModelBytes {
    bytes: Vec<u8>,
    hasher: Sha256,
    size: usize,
}

#[wasm_bindgen]
impl ModelBytes {
    /// Room for a file of `size` bytes, its stated length: more is refused, and a model
    /// loads from it only once all of them are written.
    #[wasm_bindgen(constructor)]
    pub fn new(size: usize) -> Result<ModelBytes, JsValue> {
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(size)
            .map_err(|_| model_error(&format!("no memory for a model file of {size} bytes")))?;
        Ok(Self {
            bytes,
            hasher: Sha256::new(),
            size,
        })
    }

    /// Appends `chunk`, the next bytes of the file.
    pub fn push(&mut self, chunk: &Uint8Array) -> Result<(), JsValue> {
        let start = self.bytes.len();
        let end = start + chunk.length() as usize;
        if end > self.size {
            return Err(model_error(&format!(
                "the model file is longer than its stated {} bytes",
                self.size
            )));
        }
        self.bytes.resize(end, 0);
        chunk.copy_to(&mut self.bytes[start..end]);
        self.hasher.update(&self.bytes[start..end]);
        Ok(())
    }

    /// How many bytes are written so far.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> usize {
        self.bytes.len()
    }

    /// The lowercase hex sha256 of the bytes written so far.
    pub fn sha256(&self) -> String {
        self.hasher
            .clone()
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }
}

impl ModelBytes {
    /// The whole file, or a `model_error` when fewer bytes came than were stated.
    pub(crate) fn into_complete(self) -> Result<Vec<u8>, JsValue> {
        if self.bytes.len() == self.size {
            Ok(self.bytes)
        } else {
            Err(model_error(&format!(
                "the model file ended after {} of its {} bytes",
                self.bytes.len(),
                self.size
            )))
        }
    }
}
