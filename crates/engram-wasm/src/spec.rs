//! A nested options object of `createMemory` (`embedder`, `reranker`): its string fields,
//! typed errors that name them (`reranker.provider is required`), and the `fetch` its
//! requests go through.

use js_sys::{Function, Reflect};
use wasm_bindgen::prelude::*;

use crate::errors::js_error;
use crate::string_option;
use crate::transport::FetchTransport;

/// `options[name]` when it is present.
pub(crate) struct Spec {
    name: &'static str,
    /// The value as given (an object once [`Spec::object`] has checked it).
    pub(crate) value: JsValue,
}

impl Spec {
    /// `options[name]`, or `None` when it is absent or null.
    pub(crate) fn of(options: &JsValue, name: &'static str) -> Option<Spec> {
        let value = Reflect::get(options, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED);
        (!value.is_undefined() && !value.is_null()).then_some(Spec { name, value })
    }

    /// An `invalid_input` error for `field` of this spec.
    pub(crate) fn invalid(&self, field: &str, problem: &str) -> JsValue {
        let path = format!("{}.{field}", self.name);
        js_error(
            "invalid_input",
            &format!("{path} {problem}"),
            Some((&path, problem)),
        )
    }

    /// Checks that the spec is an object (`expected` says what else would do).
    pub(crate) fn object(self, expected: &str) -> Result<Spec, JsValue> {
        if self.value.is_object() {
            Ok(self)
        } else {
            Err(self.invalid("(root)", &format!("must be {expected}")))
        }
    }

    /// A string field that must be there.
    pub(crate) fn required(&self, key: &str) -> Result<String, JsValue> {
        self.optional(key)?
            .ok_or_else(|| self.invalid(key, "is required"))
    }

    /// A string field that may be absent.
    pub(crate) fn optional(&self, key: &str) -> Result<Option<String>, JsValue> {
        string_option(&self.value, key)
    }
}

/// The transport for a provider's requests: `options.fetch` when it is a function, else
/// the global `fetch`.
pub(crate) fn fetch_transport(options: &JsValue) -> Result<FetchTransport, JsValue> {
    let fetch = Reflect::get(options, &JsValue::from_str("fetch"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok());
    FetchTransport::new(fetch)
}
