//! The storage suite over real HTTP from inside wasm: the Hrana client on the JS `fetch`
//! transport, run in Node by wasm-bindgen-test against the libSQL test server whose URL
//! scripts/test.sh puts in `ENGRAM_TEST_SERVER_URL` (and `ENGRAM_TEST_SERVER_TOKEN`).
#![cfg(all(target_family = "wasm", target_os = "unknown"))]

use engram_conformance::storage_suite;
use engram_hrana::HranaClient;
use engram_wasm::transport::FetchTransport;
use js_sys::Reflect;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

fn env(name: &str) -> Option<String> {
    let process = Reflect::get(&js_sys::global(), &"process".into()).ok()?;
    let env = Reflect::get(&process, &"env".into()).ok()?;
    Reflect::get(&env, &JsValue::from_str(name))
        .ok()?
        .as_string()
}

#[wasm_bindgen_test]
async fn storage_suite_passes_over_fetch() {
    let url = env("ENGRAM_TEST_SERVER_URL").expect("scripts/test.sh sets ENGRAM_TEST_SERVER_URL");
    let token = env("ENGRAM_TEST_SERVER_TOKEN");
    let db = HranaClient::new(FetchTransport::new(None).unwrap(), &url, token);
    let tag = format!("wasmfetch{}", js_sys::Date::now() as u64);
    storage_suite(&db, &tag).await.unwrap();
    assert_eq!(db.protocol_version(), Some(3));
}
