//! Integrity on open and repair: another application's database is refused untouched, a
//! damaged keyword index is found and rebuilt from the memories, on an embedded file and
//! over HTTP.

use crate::common::{nonce, temp_db};
use engram::{Engram, EngramConfig, ErrorCode, Host, MemoryType, NewMemory, SearchQuery};
use engram_hrana::{HranaClient, ReqwestTransport};
use engram_libsql::LocalDatabase;
use engram_store::{Database, Statement};
use engram_testserver::{ServerConfig, TestServer};

async fn run<D: Database>(db: &D, sql: &str) {
    db.transaction(&[Statement::new(sql)]).await.expect(sql);
}

/// A statement outside a transaction (a checkpoint cannot run inside one).
async fn pragma<D: Database>(db: &D, sql: &str) {
    let results = db.pipeline(&[Statement::new(sql)]).await.expect(sql);
    results.into_iter().next().expect("a result").expect(sql);
}

/// Another application's file, with a `memories` table of its own.
const FOREIGN: &[&str] = &[
    "CREATE TABLE memories (id INTEGER PRIMARY KEY, title TEXT, body TEXT)",
    "INSERT INTO memories (title, body) VALUES ('trip', 'Lisbon in May')",
];

#[tokio::test]
async fn another_applications_file_is_refused_and_left_byte_for_byte() {
    let path = temp_db("foreign");
    {
        let db = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
        for sql in FOREIGN {
            run(&db, sql).await;
        }
        pragma(&db, "PRAGMA wal_checkpoint(TRUNCATE)").await;
    }
    let before = std::fs::read(&*path).unwrap();
    let db = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
    let opened = Engram::open(&db, EngramConfig::default(), Host::native()).await;
    let error = opened.err().expect("refused");
    assert_eq!(error.code(), ErrorCode::Corrupt, "{error}");
    assert!(
        error.to_string().contains("not an engram database"),
        "{error}"
    );
    pragma(&db, "PRAGMA wal_checkpoint(TRUNCATE)").await;
    let tables = db
        .transaction(&[Statement::new(
            "SELECT group_concat(name) FROM sqlite_master WHERE type = 'table'",
        )])
        .await
        .unwrap();
    assert_eq!(tables[0].rows[0][0], engram_store::Value::from("memories"));
    drop(db);
    assert_eq!(std::fs::read(&*path).unwrap(), before, "the file changed");
}

#[tokio::test]
async fn another_applications_tables_on_a_server_are_refused_untouched() {
    let server = TestServer::start(ServerConfig::default()).unwrap();
    let db = HranaClient::new(ReqwestTransport::new(), &server.url(), None);
    for sql in FOREIGN {
        run(&db, sql).await;
    }
    let opened = Engram::open(&db, EngramConfig::default(), Host::native()).await;
    assert_eq!(opened.err().map(|e| e.code()), Some(ErrorCode::Corrupt));
    let ledger = db
        .transaction(&[Statement::new(
            "SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'",
        )])
        .await
        .unwrap();
    assert_eq!(ledger[0].rows[0][0], engram_store::Value::from(0i64));
}

async fn damaged_keyword_index_is_found_and_rebuilt<D: Database>(db: &D) {
    let engram = Engram::open(db, EngramConfig::default(), Host::native())
        .await
        .unwrap();
    let tag = nonce();
    let mut ids = Vec::new();
    for i in 0..40 {
        let memory = NewMemory::new(
            MemoryType::Gotcha,
            format!("walrusdeploy {tag} step {i}: the canary must pass before the fleet"),
        );
        ids.push(engram.remember(memory).await.unwrap().id);
    }
    engram.forget(&ids[3]).await.unwrap();
    let whole = engram.check_integrity().await.unwrap();
    assert!(whole.is_whole(), "{whole:?}");
    assert_eq!((whole.memories, whole.live_memories), (40, 39));

    // Damage the keyword index: lose its rows' terms behind engram's back.
    run(db, "DELETE FROM memories_fts_data WHERE id > 1").await;
    let damaged = engram.check_integrity().await.unwrap();
    assert!(!damaged.is_whole(), "damage not found: {damaged:?}");
    assert!(damaged.keyword_index_only, "{damaged:?}");

    let rebuilt = engram.rebuild_keyword_index().await.unwrap();
    assert_eq!(rebuilt.indexed, 39);
    let repaired = engram.check_integrity().await.unwrap();
    assert!(repaired.is_whole(), "{repaired:?}");
    let mut query = SearchQuery::new(format!("walrusdeploy {tag} canary"));
    query.limit = 50;
    let found = engram.search(&query).await.unwrap();
    assert_eq!(found.hits.len(), 39);
    assert!(found.hits.iter().all(|h| h.memory.id != ids[3]));
    // Writes after the rebuild take new keyword rows that collide with none.
    let later = NewMemory::new(MemoryType::Gotcha, format!("walrusdeploy {tag} later"));
    engram.remember(later).await.unwrap();
    assert!(engram.check_integrity().await.unwrap().is_whole());
}

#[tokio::test]
async fn a_damaged_keyword_index_is_found_and_rebuilt_on_a_file() {
    let path = temp_db("fts-damage");
    let db = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
    damaged_keyword_index_is_found_and_rebuilt(&db).await;
}

#[tokio::test]
async fn a_damaged_keyword_index_is_found_and_rebuilt_over_http() {
    let server = TestServer::start(ServerConfig::default()).unwrap();
    let db = HranaClient::new(ReqwestTransport::new(), &server.url(), None);
    damaged_keyword_index_is_found_and_rebuilt(&db).await;
}
