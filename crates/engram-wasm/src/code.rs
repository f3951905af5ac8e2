//! Code intelligence from JavaScript.

use engram::{IndexOptions, SourceFile};
use engram_code::{chunk_file, graph_of_files, ChunkOptions};
use js_sys::{Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::errors::{js_error, to_js_error};
use crate::EngramHandle;
use engram::ErrorCode;

/// Parses a JavaScript object or array as `T`, naming what was wrong.
fn parse<T: serde::de::DeserializeOwned>(value: &JsValue, what: &str) -> Result<T, JsValue> {
    let json = crate::types::stringify(value, what)?;
    serde_json::from_str(&json).map_err(|e| {
        js_error(
            ErrorCode::InvalidInput,
            &format!("{what}: {e}"),
            Some((what, &e.to_string())),
        )
    })
}

/// The layer-1 code graph of `files` (`SourceFile[]`): nodes and edges, nothing stored.
#[wasm_bindgen(js_name = codeGraph, unchecked_return_type = "CodeGraph")]
pub fn code_graph_js(
    #[wasm_bindgen(unchecked_param_type = "SourceFile[]")] files: JsValue,
) -> Result<JsValue, JsValue> {
    let files: Vec<SourceFile> = parse(&files, "files")?;
    crate::types::to_js(&graph_of_files(
        files.iter().map(|f| (f.path.as_str(), f.content.as_str())),
    ))
}

#[wasm_bindgen(js_class = Engram)]
impl EngramHandle {
    /// Indexes source files into the code graph: only new and changed files are parsed;
    /// the graph, its closure and memories about changed symbols are updated in one
    /// transaction. Resolves to an `IndexReport`.
    #[wasm_bindgen(js_name = indexFiles, unchecked_return_type = "Promise<IndexReport>")]
    pub fn index_files(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SourceFile[]")] files: JsValue,
        #[wasm_bindgen(unchecked_param_type = "IndexOptions | undefined")] options: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let files: Vec<SourceFile> = parse(&files, "files")?;
            let options: IndexOptions = if options.is_undefined() || options.is_null() {
                IndexOptions::default()
            } else {
                parse(&options, "options")?
            };
            let report = inner
                .index_files(&files, &options)
                .await
                .map_err(|e| to_js_error(&e))?;
            crate::types::to_js(&report)
        })
    }
}

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
                        ErrorCode::InvalidInput,
                        &format!("{key} must be a positive integer"),
                        Some((key, "must be a positive integer")),
                    ))
                }
            }
        }
    }
    crate::types::to_js(&chunk_file(path, source, &chunk_options))
}
