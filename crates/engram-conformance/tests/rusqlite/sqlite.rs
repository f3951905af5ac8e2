//! The rusqlite backend — the engine the npm package embeds in wasm — run natively with its
//! registered vector functions. (A separate test binary: libSQL and a bundled SQLite cannot
//! be linked into one executable.)

use crate::common::{self, nonce, API_VECTORS};
use engram::{Capabilities, Engram, EngramConfig, Host};
use engram_conformance::{run_api_vectors, storage_suite};
use engram_sqlite::SqliteDatabase;

#[tokio::test]
async fn storage_suite_passes_on_rusqlite_with_registered_vector_functions() {
    let db = SqliteDatabase::open_in_memory().unwrap();
    storage_suite(&db, &nonce()).await.unwrap();
}

#[tokio::test]
async fn api_vectors_pass_on_rusqlite() {
    let db = SqliteDatabase::open_in_memory().unwrap();
    let steps = run_api_vectors(API_VECTORS, "sqlite", |opening| {
        let db = &db;
        async move {
            let options = opening.options(serde_json::json!({"local": true}))?;
            Engram::open_with(db, &options, Capabilities::new(Host::native())).await
        }
    })
    .await
    .unwrap();
    assert!(steps > 30);
}

#[tokio::test]
async fn code_graph_on_rusqlite() {
    let db = SqliteDatabase::open_in_memory().unwrap();
    let open = |project: &str| {
        engram::Engram::open(
            &db,
            engram::EngramConfig {
                project_id: project.to_owned(),
            },
            engram::Host::native(),
        )
    };
    let engram = open("code").await.unwrap();
    let fresh = open("code-fresh").await.unwrap();
    engram_conformance::code_graph::code_graph_suite(&engram, &fresh).await;
}

#[tokio::test]
async fn retrieval_on_rusqlite() {
    let db = SqliteDatabase::open_in_memory().unwrap();
    let engram = engram::Engram::open(&db, engram::EngramConfig::default(), engram::Host::native())
        .await
        .unwrap();
    engram_conformance::retrieval::retrieval_suite(&engram).await;
}

/// Every form of the candidate statement runs on this SQLite (3.54), which refuses a
/// statement whose CTE references expand to 1,000 cursors or more: hybrid search with the
/// exact dense scan and with resident vectors, every path and the boost's adjacency on.
#[tokio::test]
async fn every_candidate_statement_form_runs_on_rusqlite() {
    let db = SqliteDatabase::open_in_memory().unwrap();
    let open = || async {
        Engram::open(&db, EngramConfig::default(), Host::native())
            .await
            .unwrap()
            .with_embedder(Box::new(common::FakeWordEmbedder))
    };
    let exact = open().await;
    exact
        .index_files(
            &engram_conformance::code_graph::repo(engram_conformance::code_graph::USERS),
            &engram::IndexOptions::default(),
        )
        .await
        .unwrap();
    for text in ["getUser is slow on a cold cache", "close the pool in tests"] {
        let mut m = engram::NewMemory::new(engram::MemoryType::Gotcha, text);
        m.related_files = vec!["src/users.ts".into()];
        exact.remember(m).await.unwrap();
    }
    let mut resident = open().await;
    resident.enable_resident_vectors().unwrap();
    for engram in [&exact, &resident] {
        let mut query = engram::SearchQuery::new("why is getUser slow");
        query.context.recent_files = vec!["src/db.ts".into()];
        let found = engram.search(&query).await.unwrap();
        assert!(found
            .hits
            .iter()
            .any(|h| h.memory.content.starts_with("getUser")));
        assert!(found.hits.iter().any(|h| h.breakdown.dense.is_some()));
    }
    assert_eq!(resident.resident_vector_count(), Some(2));
}
