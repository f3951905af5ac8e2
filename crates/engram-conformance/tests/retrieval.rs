//! The retrieval pipeline on the libSQL test server over HTTP and on an embedded libSQL
//! file: the same scenario gives the same rankings, and every search is exactly one HTTP
//! request (rusqlite runs the scenario in `sqlite.rs`).

mod common;

use common::{nonce, temp_db, CountingTransport};
use engram::{Engram, EngramConfig, Host, SearchQuery};
use engram_conformance::retrieval::retrieval_suite;
use engram_hrana::HranaClient;
use engram_libsql::LocalDatabase;
use engram_testserver::{ServerConfig, TestServer};

#[tokio::test]
async fn retrieval_agrees_over_http_and_on_a_file_in_one_round_trip() {
    let server = TestServer::start(ServerConfig::default()).expect("test server starts");
    let client = HranaClient::new(CountingTransport::default(), &server.url(), None);
    let config = EngramConfig {
        project_id: format!("retrieval-{}", nonce()),
    };
    let remote = Engram::open(&client, config, Host::native())
        .await
        .expect("open");
    let over_http = retrieval_suite(&remote).await;

    let path = temp_db("retrieval");
    let db = LocalDatabase::open(path.to_str().expect("utf-8 temp path"))
        .await
        .expect("db");
    let local = Engram::open(&db, EngramConfig::default(), Host::native())
        .await
        .expect("open");
    let on_file = retrieval_suite(&local).await;
    assert_eq!(over_http, on_file);

    let transport = client.transport();
    for text in [
        "why is getUser slow",
        "pool",
        "handlers block in src/routes.ts",
    ] {
        let before = transport.requests.get();
        let mut query = SearchQuery::new(text);
        query.context.recent_files = vec!["src/users.ts".into()];
        query.phase = Some(engram::Phase::Implement);
        remote.search(&query).await.expect("search");
        assert_eq!(transport.requests.get() - before, 1, "{text}");
    }
    let _ = std::fs::remove_file(path);
}
