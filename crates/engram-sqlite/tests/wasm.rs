//! The storage suite and API vectors on the in-wasm SQLite engine, run in Node by
//! wasm-bindgen-test: the same code the npm package embeds, compiled to wasm32.
#![cfg(all(target_family = "wasm", target_os = "unknown"))]

use std::cell::Cell;
use std::rc::Rc;

use engram::{Capabilities, Clock, Engram, Entropy, Host};
use engram_conformance::{run_api_vectors, storage_suite};
use engram_sqlite::SqliteDatabase;
use wasm_bindgen_test::wasm_bindgen_test;

const API_VECTORS: &str = include_str!("../../../tests/vectors/api.json");

struct JsClock;
impl Clock for JsClock {
    fn now_millis(&self) -> i64 {
        js_sys::Date::now() as i64
    }
}

/// A fake entropy source: a counter shared by every host of the test. Ids only need to be
/// distinct within this test.
#[derive(Default, Clone)]
struct FakeCountingEntropy(Rc<Cell<u64>>);
impl Entropy for FakeCountingEntropy {
    fn fill(&self, buf: &mut [u8]) {
        self.0.set(self.0.get() + 1);
        for (i, b) in buf.iter_mut().enumerate() {
            *b = self.0.get().to_le_bytes()[i % 8] ^ (i as u8);
        }
    }
}

#[wasm_bindgen_test]
async fn storage_suite_passes_in_wasm() {
    let db = SqliteDatabase::open_in_memory().unwrap();
    storage_suite(&db, "wasm").await.unwrap();
}

#[wasm_bindgen_test]
async fn api_vectors_pass_in_wasm() {
    let db = SqliteDatabase::open_in_memory().unwrap();
    let entropy = FakeCountingEntropy::default();
    let steps = run_api_vectors(API_VECTORS, "wasm", |opening| {
        let (db, entropy) = (&db, entropy.clone());
        async move {
            let options = opening.options(serde_json::json!({"local": true}))?;
            let host = Host::new(JsClock, entropy);
            Engram::open_with(db, &options, Capabilities::new(host)).await
        }
    })
    .await
    .unwrap();
    assert!(steps > 30);
}
