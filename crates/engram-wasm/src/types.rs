//! Moving plain data between JavaScript and Rust through JSON text, so every input is
//! validated by the same serde code (with field paths in errors) in every host.

use serde::Serialize;
use wasm_bindgen::JsValue;

use crate::errors::js_error;
use engram::ErrorCode;

/// `JSON.stringify(value)`, rejecting values that are not plain objects.
pub fn stringify(value: &JsValue, what: &str) -> Result<String, JsValue> {
    if !value.is_object() {
        return Err(js_error(
            ErrorCode::InvalidInput,
            &format!("{what} must be an object"),
            Some(("(root)", "must be an object")),
        ));
    }
    js_sys::JSON::stringify(value)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| {
            js_error(
                ErrorCode::InvalidInput,
                &format!("{what} cannot be converted to JSON"),
                Some(("(root)", "cannot be converted to JSON (cycles or BigInt?)")),
            )
        })
}

/// Serializes a Rust value to a plain JavaScript object.
pub fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsValue> {
    let json = serde_json::to_string(value).map_err(|e| {
        js_error(
            ErrorCode::Internal,
            &format!("cannot encode result: {e}"),
            None,
        )
    })?;
    js_sys::JSON::parse(&json)
}

/// An engram call's answer as a plain JavaScript value (`null` for `None`), or its error as
/// engram's typed error.
pub fn answer<T: Serialize>(result: Result<T, engram::EngramError>) -> Result<JsValue, JsValue> {
    to_js(&result.map_err(|e| crate::errors::to_js_error(&e))?)
}
