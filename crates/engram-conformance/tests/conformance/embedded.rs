//! The storage suite and API vectors on the embedded libSQL file (the CLI's default).

use crate::common::{nonce, temp_db, API_VECTORS};
use engram::{Capabilities, Engram, EngramConfig, Host, MemoryType, NewMemory, SearchQuery};
use engram_conformance::{run_api_vectors, secrets_suite, storage_suite};
use engram_libsql::LocalDatabase;
use engram_store::{Database, Statement, Value};

#[tokio::test]
async fn storage_suite_passes_on_the_embedded_file() {
    let path = temp_db("storage");
    let db = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
    storage_suite(&db, &nonce()).await.unwrap();
}

#[tokio::test]
async fn api_vectors_pass_on_the_embedded_file() {
    let path = temp_db("vectors");
    let db = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
    let steps = run_api_vectors(API_VECTORS, "embedded", |opening| {
        let db = &db;
        async move {
            let options = opening.options(serde_json::json!({"local": true}))?;
            Engram::open_with(db, &options, Capabilities::new(Host::native())).await
        }
    })
    .await
    .unwrap();
    assert!(steps > 30, "only {steps} steps ran");
}

#[tokio::test]
async fn no_piece_of_any_secret_reaches_a_table_or_an_answer_on_the_embedded_file() {
    let path = temp_db("secrets");
    let db = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
    let engram = Engram::open(&db, EngramConfig::default(), Host::native())
        .await
        .unwrap();
    let report = secrets_suite(&engram, &db).await.unwrap();
    assert!(report.formats >= 60, "{report:?}");
    assert!(report.tables > 20 && report.rows > 100, "{report:?}");
}

#[tokio::test]
async fn a_file_opens_in_wal_mode_with_its_pages_mapped() {
    let path = temp_db("pragmas");
    let db = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
    let read = |sql: &'static str| {
        let db = &db;
        async move {
            let mut results = db.pipeline(&[Statement::new(sql)]).await.unwrap();
            results.remove(0).unwrap().rows[0][0].clone()
        }
    };
    assert_eq!(read("PRAGMA journal_mode").await, Value::Text("wal".into()));
    // A build of SQLite whose mapping limit is lower would answer with that limit.
    assert_eq!(
        read("PRAGMA mmap_size").await,
        Value::Integer(engram_libsql::MMAP_BYTES as i64)
    );
}

#[tokio::test]
async fn memories_persist_across_reopen() {
    let path = temp_db("reopen");
    let id = {
        let db = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
        let engram = Engram::open(db, EngramConfig::default(), Host::native())
            .await
            .unwrap();
        engram
            .remember(NewMemory::new(
                MemoryType::Decision,
                "Keep SQL identical across engines",
            ))
            .await
            .unwrap()
            .id
    };
    let db = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
    let engram = Engram::open(db, EngramConfig::default(), Host::native())
        .await
        .unwrap();
    let found = engram
        .search(&SearchQuery::new("identical SQL engines"))
        .await
        .unwrap();
    assert_eq!(
        found.hits.first().map(|h| h.memory.id.as_str()),
        Some(id.as_str())
    );
}

#[tokio::test]
async fn projects_do_not_see_each_other() {
    let db = LocalDatabase::open(":memory:").await.unwrap();
    let a = Engram::open(
        &db,
        EngramConfig {
            project_id: "a".into(),
        },
        Host::native(),
    )
    .await
    .unwrap();
    let b = Engram::open(
        &db,
        EngramConfig {
            project_id: "b".into(),
        },
        Host::native(),
    )
    .await
    .unwrap();
    let id = a
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "project a secret sauce recipe",
        ))
        .await
        .unwrap()
        .id;
    assert!(b
        .search(&SearchQuery::new("sauce recipe"))
        .await
        .unwrap()
        .hits
        .is_empty());
    assert!(b.get(&id).await.unwrap().is_none());
    assert!(!b.forget(&id).await.unwrap());
    assert!(a.get(&id).await.unwrap().is_some());
}

/// The embedded connection is opened without SQLite's own mutex, because `LocalDatabase`
/// serializes every call itself: one database shared by several threads, each writing and
/// reading at once, must still see every write and only whole transactions.
#[test]
fn one_embedded_database_serves_several_threads_at_once() {
    use engram_store::{Database, Statement, Value};
    use std::sync::Arc;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
    }
    /// Rows written by `thread` (every row when negative).
    fn count(db: &LocalDatabase, thread: i64) -> i64 {
        let rows = runtime()
            .block_on(db.pipeline(&[Statement::with_params(
                "SELECT count(*) FROM writes WHERE thread = ?1 OR ?1 < 0",
                vec![Value::Integer(thread)],
            )]))
            .unwrap()
            .pop()
            .unwrap()
            .unwrap();
        match rows.rows[0][..] {
            [Value::Integer(count)] => count,
            ref other => panic!("unexpected row {other:?}"),
        }
    }

    let path = temp_db("threads");
    let db = Arc::new(
        runtime()
            .block_on(LocalDatabase::open(path.to_str().unwrap()))
            .unwrap(),
    );
    runtime()
        .block_on(db.transaction(&[Statement::new(
            "CREATE TABLE writes (thread INTEGER NOT NULL, n INTEGER NOT NULL)",
        )]))
        .unwrap();
    let threads: Vec<_> = (0..4i64)
        .map(|thread| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                for n in 0..50i64 {
                    // Two rows per transaction: a reader sees both or neither.
                    runtime()
                        .block_on(db.transaction(&[
                            Statement::with_params(
                                "INSERT INTO writes VALUES (?1, ?2)",
                                vec![Value::Integer(thread), Value::Integer(n)],
                            ),
                            Statement::with_params(
                                "INSERT INTO writes VALUES (?1, ?2)",
                                vec![Value::Integer(thread), Value::Integer(-n)],
                            ),
                        ]))
                        .unwrap();
                    assert_eq!(count(&db, thread), 2 * (n + 1));
                    assert_eq!(count(&db, -1) % 2, 0, "a half-applied transaction");
                }
            })
        })
        .collect();
    for handle in threads {
        handle.join().expect("a writer thread failed");
    }
    assert_eq!(count(&db, -1), 400);
}
