//! Hrana over the host's `fetch`.

use engram_hrana::{HttpResponse, HttpTransport};
use js_sys::{Function, Object, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Sends requests with a `fetch`-compatible function: the global one by default, or one the
/// host passes in (`createMemory({ fetch })`, e.g. a Worker service binding or a wrapper
/// that counts requests).
pub struct FetchTransport {
    fetch: Function,
}

impl FetchTransport {
    /// Uses `fetch`, or `globalThis.fetch` when `None`.
    pub fn new(fetch: Option<Function>) -> Result<Self, JsValue> {
        let fetch = match fetch {
            Some(f) => f,
            None => Reflect::get(&js_sys::global(), &"fetch".into())?
                .dyn_into::<Function>()
                .map_err(|_| {
                    JsValue::from_str("no global fetch in this environment; pass options.fetch")
                })?,
        };
        Ok(FetchTransport { fetch })
    }

    async fn send(
        &self,
        url: &str,
        bearer: Option<&str>,
        body: String,
    ) -> Result<HttpResponse, JsValue> {
        let headers = Object::new();
        Reflect::set(&headers, &"content-type".into(), &"application/json".into())?;
        if let Some(token) = bearer {
            Reflect::set(
                &headers,
                &"authorization".into(),
                &format!("Bearer {token}").into(),
            )?;
        }
        let init = Object::new();
        Reflect::set(&init, &"method".into(), &"POST".into())?;
        Reflect::set(&init, &"headers".into(), &headers)?;
        Reflect::set(&init, &"body".into(), &body.into())?;
        let promise: Promise = self
            .fetch
            .call2(&JsValue::UNDEFINED, &url.into(), &init)?
            .dyn_into()?;
        let response = JsFuture::from(promise).await?;
        let status = Reflect::get(&response, &"status".into())?
            .as_f64()
            .ok_or_else(|| JsValue::from_str("fetch response has no status"))?
            as u16;
        let text: Function = Reflect::get(&response, &"text".into())?.dyn_into()?;
        let text: Promise = text.call0(&response)?.dyn_into()?;
        let body = JsFuture::from(text)
            .await?
            .as_string()
            .ok_or_else(|| JsValue::from_str("fetch response body is not text"))?;
        Ok(HttpResponse { status, body })
    }
}

impl HttpTransport for FetchTransport {
    async fn post_json(
        &self,
        url: &str,
        bearer: Option<&str>,
        body: String,
    ) -> Result<HttpResponse, String> {
        self.send(url, bearer, body).await.map_err(describe)
    }
}

fn describe(error: JsValue) -> String {
    if let Some(e) = error.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    error.as_string().unwrap_or_else(|| format!("{error:?}"))
}
