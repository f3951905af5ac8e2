//! Errors as JavaScript `Error` objects with `code`, `status` and `violations`.

use engram::{EngramError, ErrorCode};
use js_sys::{Array, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

/// An `Error` with `code` and optionally one violation.
pub fn js_error(code: ErrorCode, message: &str, violation: Option<(&str, &str)>) -> JsValue {
    let violations: Vec<(String, String)> = violation
        .map(|(f, p)| vec![(f.to_owned(), p.to_owned())])
        .unwrap_or_default();
    build(code, message, &violations)
}

/// A value JavaScript threw, as text: an `Error`'s message, else its string form, else
/// `otherwise`.
pub fn thrown_message(value: &JsValue, otherwise: &str) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| otherwise.to_owned())
}

/// Converts an engram error.
pub fn to_js_error(error: &EngramError) -> JsValue {
    let violations: Vec<(String, String)> = error
        .violations()
        .iter()
        .map(|v| (v.field.clone(), v.problem.clone()))
        .collect();
    build(error.code(), &error.to_string(), &violations)
}

/// An `EngramError` carrying the core's `code`, the HTTP `status` a server answers it with,
/// and the violations.
fn build(code: ErrorCode, message: &str, violations: &[(String, String)]) -> JsValue {
    let error = js_sys::Error::new(message);
    error.set_name("EngramError");
    let list = Array::new();
    for (field, problem) in violations {
        let v = Object::new();
        let _ = Reflect::set(&v, &"field".into(), &JsValue::from_str(field));
        let _ = Reflect::set(&v, &"problem".into(), &JsValue::from_str(problem));
        list.push(&v);
    }
    let _ = Reflect::set(&error, &"code".into(), &JsValue::from_str(code.as_str()));
    let _ = Reflect::set(&error, &"status".into(), &JsValue::from(code.http_status()));
    let _ = Reflect::set(&error, &"violations".into(), &list);
    error.into()
}
