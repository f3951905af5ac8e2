//! Code intelligence from JavaScript.

use engram_code::{chunk_file, ChunkOptions};
use js_sys::Reflect;
use wasm_bindgen::prelude::*;

use crate::errors::js_error;

/// Splits a file's contents into chunks at definition boundaries (TypeScript, TSX,
/// JavaScript, Python, Rust, Go; other files by lines). `options`: `{ maxChars?, maxLines? }`
/// (defaults 1500 and 100). Returns `Chunk[]`: `{ path, language, kind, name, startLine,
/// endLine, startByte, endByte, content, contextPrefix }`.
#[wasm_bindgen(js_name = chunkFile, unchecked_return_type = "Chunk[]")]
pub fn chunk_file_js(
    path: &str,
    source: &str,
    #[wasm_bindgen(unchecked_param_type = "{ maxChars?: number; maxLines?: number } | undefined")]
    options: JsValue,
) -> Result<JsValue, JsValue> {
    let mut chunk_options = ChunkOptions::default();
    if options.is_object() {
        for (key, slot) in [
            ("maxChars", &mut chunk_options.max_chars),
            ("maxLines", &mut chunk_options.max_lines),
        ] {
            let value =
                Reflect::get(&options, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED);
            if value.is_undefined() {
                continue;
            }
            match value.as_f64() {
                Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= 1e9 => *slot = n as usize,
                _ => {
                    return Err(js_error(
                        "invalid_input",
                        &format!("{key} must be a positive integer"),
                        Some((key, "must be a positive integer")),
                    ))
                }
            }
        }
    }
    crate::types::to_js(&chunk_file(path, source, &chunk_options))
}
