//! Clock and randomness from the JavaScript host.

use engram::{Clock, Entropy, Host, Sleep, SleepFuture};
use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

struct JsClock;

impl Clock for JsClock {
    fn now_millis(&self) -> i64 {
        js_sys::Date::now() as i64
    }
}

/// `crypto.getRandomValues`, present in Node 20+, browsers and Workers.
struct WebCrypto;

impl Entropy for WebCrypto {
    fn fill(&self, buf: &mut [u8]) {
        let global = js_sys::global();
        let crypto = Reflect::get(&global, &"crypto".into()).unwrap_or(JsValue::UNDEFINED);
        let get_random = Reflect::get(&crypto, &"getRandomValues".into())
            .ok()
            .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
        let array = Uint8Array::new_with_length(buf.len() as u32);
        match get_random.map(|f| f.call1(&crypto, &array)) {
            Some(Ok(_)) => array.copy_to(buf),
            // No Web Crypto: ids only need to be unique, so mix the clock with Math.random.
            _ => {
                for (i, b) in buf.iter_mut().enumerate() {
                    let r = js_sys::Math::random() * 256.0;
                    *b = (r as u8) ^ ((js_sys::Date::now() as u64 >> (i % 8)) as u8);
                }
            }
        }
    }
}

/// `setTimeout`, present in Node, browsers and Workers; without it the wait is skipped.
struct JsTimer;

impl Sleep for JsTimer {
    fn sleep(&self, millis: u64) -> SleepFuture<'_> {
        Box::pin(async move {
            let promise = js_sys::Promise::new(&mut |resolve, _reject| {
                let global = js_sys::global();
                let set_timeout = Reflect::get(&global, &"setTimeout".into())
                    .ok()
                    .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
                let scheduled = set_timeout
                    .map(|f| {
                        f.call2(&global, &resolve, &JsValue::from(millis as f64))
                            .is_ok()
                    })
                    .unwrap_or(false);
                if !scheduled {
                    let _ = resolve.call0(&JsValue::UNDEFINED);
                }
            });
            let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
        })
    }
}

/// The host capabilities of any JavaScript environment.
pub fn js_host() -> Host {
    Host::new(JsClock, WebCrypto).with_sleep(JsTimer)
}
