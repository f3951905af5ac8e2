//! Opt-in: the same storage suite and API vectors against any libSQL server, e.g. Turso or
//! sqld. Run with
//! `LIBSQL_URL=libsql://… LIBSQL_AUTH_TOKEN=… cargo test -p engram-conformance --test conformance remote:: -- --ignored`.

use crate::common::{nonce, API_VECTORS};
use engram::{Capabilities, Engram, Host};
use engram_conformance::{run_api_vectors, storage_suite};
use engram_hrana::{HranaClient, ReqwestTransport};

fn remote() -> HranaClient<ReqwestTransport> {
    let url =
        std::env::var("LIBSQL_URL").expect("set LIBSQL_URL to run the remote conformance suite");
    let token = std::env::var("LIBSQL_AUTH_TOKEN").ok();
    HranaClient::new(ReqwestTransport::new(), &url, token)
}

#[tokio::test]
#[ignore = "needs LIBSQL_URL (and LIBSQL_AUTH_TOKEN) of a real libSQL server"]
async fn storage_suite_passes_against_libsql_url() {
    storage_suite(&remote(), &nonce()).await.unwrap();
}

#[tokio::test]
#[ignore = "needs LIBSQL_URL (and LIBSQL_AUTH_TOKEN) of a real libSQL server"]
async fn api_vectors_pass_against_libsql_url() {
    let db = remote();
    let prefix = format!("conformance-{}", nonce());
    run_api_vectors(API_VECTORS, &prefix, |opening| {
        let db = &db;
        async move {
            let options = opening.options(serde_json::json!({"url": "libsql://conformance"}))?;
            Engram::open_with(db, &options, Capabilities::new(Host::native())).await
        }
    })
    .await
    .unwrap();
}
