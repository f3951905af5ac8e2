//! The storage suite and API vectors over real HTTP against engram-testserver (a libSQL
//! engine), with the native reqwest transport.

use crate::common::{nonce, CountingTransport, API_VECTORS};
use engram::{Capabilities, Engram, EngramConfig, Host, MemoryType, NewMemory, SearchQuery};
use engram_conformance::{run_api_vectors, secrets_suite, storage_suite};
use engram_hrana::{HranaClient, ReqwestTransport};
use engram_store::{Database, Statement, StoreError, Value};
use engram_testserver::{ServerConfig, TestServer};

const TOKEN: &str = "test-token-0123456789";

fn server() -> TestServer {
    TestServer::start(ServerConfig {
        auth_token: Some(TOKEN.into()),
        ..ServerConfig::default()
    })
    .expect("test server starts")
}

fn client(server: &TestServer) -> HranaClient<ReqwestTransport> {
    HranaClient::new(ReqwestTransport::new(), &server.url(), Some(TOKEN.into()))
}

#[tokio::test]
async fn storage_suite_passes_over_http() {
    let server = server();
    let db = client(&server);
    storage_suite(&db, &nonce()).await.unwrap();
    assert_eq!(db.protocol_version(), Some(3));
}

#[tokio::test]
async fn storage_suite_passes_over_hrana_v2_fallback() {
    let server = TestServer::start(ServerConfig {
        v3: false,
        ..ServerConfig::default()
    })
    .unwrap();
    let db = HranaClient::new(ReqwestTransport::new(), &server.url(), None);
    storage_suite(&db, &nonce()).await.unwrap();
    assert_eq!(db.protocol_version(), Some(2));
}

#[tokio::test]
async fn api_vectors_pass_over_http() {
    let server = server();
    let db = client(&server);
    let url = server.url();
    let steps = run_api_vectors(API_VECTORS, &nonce(), |opening| {
        let (db, url) = (&db, url.clone());
        async move {
            let options = opening.options(serde_json::json!({ "url": url }))?;
            Engram::open_with(db, &options, Capabilities::new(Host::native())).await
        }
    })
    .await
    .unwrap();
    assert!(steps > 30, "only {steps} steps ran");
}

#[tokio::test]
async fn no_piece_of_any_secret_reaches_a_table_or_an_answer_over_http() {
    let server = server();
    let db = client(&server);
    let engram = Engram::open(&db, EngramConfig::default(), Host::native())
        .await
        .unwrap();
    let report = secrets_suite(&engram, &db).await.unwrap();
    assert!(report.formats >= 60, "{report:?}");
    assert!(report.tables > 20 && report.rows > 100, "{report:?}");
}

#[tokio::test]
async fn a_search_is_exactly_one_http_request() {
    let server = server();
    let db = HranaClient::new(
        CountingTransport::default(),
        &server.url(),
        Some(TOKEN.into()),
    );
    let engram = Engram::open(&db, EngramConfig::default(), Host::native())
        .await
        .unwrap();
    engram
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "cargo nextest needs the test server binary",
        ))
        .await
        .unwrap();
    let before = db_requests(&db);
    let found = engram
        .search(&SearchQuery::new("nextest server"))
        .await
        .unwrap();
    assert_eq!(found.hits.len(), 1);
    assert_eq!(
        db_requests(&db) - before,
        1,
        "search must be one round trip"
    );
    let before = db_requests(&db);
    engram
        .remember(NewMemory::new(
            MemoryType::Decision,
            "one write is one round trip too",
        ))
        .await
        .unwrap();
    // One read of the live memories it could repeat or contradict (by content key and
    // nearest of its type), then the write.
    assert_eq!(
        db_requests(&db) - before,
        2,
        "remember must be two round trips: the consolidation read, the write"
    );
}

fn db_requests(db: &HranaClient<CountingTransport>) -> usize {
    // The transport is private to the client; count through a probe statement-free path.
    db_transport(db).requests.get()
}

fn db_transport(db: &HranaClient<CountingTransport>) -> &CountingTransport {
    db.transport()
}

#[tokio::test]
async fn a_wrong_token_is_refused_and_nothing_is_written() {
    let server = server();
    let good = client(&server);
    let engram = Engram::open(&good, EngramConfig::default(), Host::native())
        .await
        .unwrap();
    let bad = HranaClient::new(ReqwestTransport::new(), &server.url(), Some("wrong".into()));
    let err = bad
        .transaction(&[Statement::new("DELETE FROM memories")])
        .await
        .unwrap_err();
    assert_eq!(err, StoreError::Unauthorized { status: 401 });
    assert!(!err.to_string().contains("wrong"), "token echoed: {err}");
    let bad_engram = Engram::open(&bad, EngramConfig::default(), Host::native()).await;
    assert_eq!(
        bad_engram.err().map(|e| e.code().as_str()),
        Some("unauthorized")
    );
    let found = engram.search(&SearchQuery::new("anything")).await.unwrap();
    assert!(found.hits.is_empty());
}

#[tokio::test]
async fn interactive_transactions_use_batons() {
    let server = server();
    let db = client(&server);
    let t = format!("baton_{}", nonce());
    db.transaction(&[Statement::new(format!("CREATE TABLE {t} (v TEXT)"))])
        .await
        .unwrap();
    let mut stream = db.stream();
    stream.execute(&Statement::new("BEGIN")).await.unwrap();
    assert!(!stream.is_autocommit().await.unwrap());
    stream
        .execute(&Statement::with_params(
            format!("INSERT INTO {t} VALUES (?1)"),
            vec!["x".into()],
        ))
        .await
        .unwrap();
    let inside = stream
        .execute(&Statement::new(format!("SELECT count(*) FROM {t}")))
        .await
        .unwrap();
    assert_eq!(inside.rows, [[Value::Integer(1)]]);
    // Another connection does not see the uncommitted row.
    let outside = db
        .pipeline(&[Statement::new(format!("SELECT count(*) FROM {t}"))])
        .await
        .unwrap();
    assert_eq!(outside[0].as_ref().unwrap().rows, [[Value::Integer(0)]]);
    stream.execute(&Statement::new("COMMIT")).await.unwrap();
    stream.close().await.unwrap();
    let after = db
        .pipeline(&[Statement::new(format!("SELECT count(*) FROM {t}"))])
        .await
        .unwrap();
    assert_eq!(after[0].as_ref().unwrap().rows, [[Value::Integer(1)]]);
}

#[tokio::test]
async fn a_closed_stream_rolls_back_its_transaction() {
    let server = server();
    let db = client(&server);
    let t = format!("rollback_{}", nonce());
    db.transaction(&[Statement::new(format!("CREATE TABLE {t} (v TEXT)"))])
        .await
        .unwrap();
    let mut stream = db.stream();
    stream.execute(&Statement::new("BEGIN")).await.unwrap();
    stream
        .execute(&Statement::with_params(
            format!("INSERT INTO {t} VALUES (?1)"),
            vec!["x".into()],
        ))
        .await
        .unwrap();
    stream.close().await.unwrap();
    let after = db
        .pipeline(&[Statement::new(format!("SELECT count(*) FROM {t}"))])
        .await
        .unwrap();
    assert_eq!(after[0].as_ref().unwrap().rows, [[Value::Integer(0)]]);
}

#[tokio::test]
async fn an_unreachable_server_is_a_transient_transport_error() {
    let server = server();
    let url = server.url();
    drop(server);
    let db = HranaClient::new(ReqwestTransport::new(), &url, None);
    let err = db
        .pipeline(&[Statement::new("SELECT 1")])
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Transport(_)), "{err:?}");
    assert!(err.is_transient());
}
