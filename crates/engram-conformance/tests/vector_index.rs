//! The libSQL vector index path: on the test server over HTTP and on an embedded libSQL file,
//! with the real model. The index must return what the exact brute-force scan returns,
//! respect projects, types and forgotten memories, and pick up vectors stored before it was
//! enabled.

mod common;
mod real_model;

use std::rc::Rc;

use common::{nonce, temp_db};
use engram::{
    Database, Engram, EngramConfig, Host, MemoryType, NewMemory, SearchMode, SearchQuery,
};
use engram_hrana::{HranaClient, ReqwestTransport};
use engram_libsql::LocalDatabase;
use engram_testserver::{ServerConfig, TestServer};
use real_model::{open_with_model, real_model};

const MEMORIES: [(&str, MemoryType); 10] = [
    (
        "SQLite reports 'database is locked' when two test processes share one file",
        MemoryType::ErrorPattern,
    ),
    (
        "Use CSS grid instead of flexbox for the dashboard layout",
        MemoryType::Preference,
    ),
    (
        "Run cargo sqlx prepare after changing a query or CI fails offline",
        MemoryType::Gotcha,
    ),
    (
        "Auth tokens are hashed with argon2id; never log the raw token",
        MemoryType::Decision,
    ),
    (
        "The retry loop backs off exponentially when the database is unreachable",
        MemoryType::Pattern,
    ),
    (
        "Vite picks another port when 5173 is taken; set strictPort in CI",
        MemoryType::Gotcha,
    ),
    (
        "Postgres migrations need a lock_timeout or they block deploys",
        MemoryType::Gotcha,
    ),
    (
        "Mocking the HTTP client globally raced in parallel tests",
        MemoryType::DeadEnd,
    ),
    (
        "Add an API route: handler in src/api, register in router.rs, test it",
        MemoryType::WorkflowRecipe,
    ),
    (
        "Docker builds are slow because node_modules is copied before package.json",
        MemoryType::Gotcha,
    ),
];

fn dense(text: &str) -> SearchQuery {
    SearchQuery {
        mode: SearchMode::Dense,
        limit: 5,
        ..SearchQuery::new(text)
    }
}

async fn index_matches_brute_force<D: Database + Copy>(db: D) {
    let model = Rc::new(real_model());
    let project = format!("vi-{}", nonce());
    let brute = open_with_model(db, &project, &model).await;
    // Stored before the index exists: the index must be backfilled.
    let early = brute
        .remember(NewMemory::new(MEMORIES[0].1, MEMORIES[0].0))
        .await
        .unwrap();
    let mut indexed = open_with_model(db, &project, &model).await;
    assert!(indexed.enable_vector_index().await.unwrap());
    assert!(indexed.uses_vector_index());
    let mut ids = vec![early.id.clone()];
    for (content, memory_type) in &MEMORIES[1..] {
        ids.push(
            indexed
                .remember(NewMemory::new(*memory_type, *content))
                .await
                .unwrap()
                .id,
        );
    }
    // Another project's near-identical memory must never show up.
    let other = Engram::open(
        db,
        EngramConfig {
            project_id: format!("{project}-other"),
        },
        Host::native(),
    )
    .await
    .unwrap()
    .with_embedder(Box::new(model.clone()));
    other
        .remember(NewMemory::new(MemoryType::ErrorPattern, MEMORIES[0].0))
        .await
        .unwrap();

    for query in [
        "concurrent test processes collide on one database file",
        "port already in use by the dev server",
        "slow container image builds",
    ] {
        let a = indexed.search(&dense(query)).await.unwrap();
        let b = brute.search(&dense(query)).await.unwrap();
        let ranked = |r: &engram::SearchResponse| {
            r.hits
                .iter()
                .map(|h| h.memory.id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ranked(&a), ranked(&b), "{query}");
        assert!(a.hits.iter().all(|h| ids.contains(&h.memory.id)));
        let similarity = |r: &engram::SearchResponse| r.hits[0].breakdown.dense.unwrap().metric;
        let (da, db_) = (similarity(&a), similarity(&b));
        assert!((da - db_).abs() < 1e-6, "{da} vs {db_}");
    }
    assert_eq!(
        indexed
            .search(&dense(
                "concurrent test processes collide on one database file"
            ))
            .await
            .unwrap()
            .hits[0]
            .memory
            .id,
        early.id
    );

    // Type filters and forgotten memories apply after the index.
    let gotchas = indexed
        .search(&SearchQuery {
            types: vec![MemoryType::Gotcha],
            ..dense("database")
        })
        .await
        .unwrap();
    assert!(!gotchas.hits.is_empty());
    assert!(gotchas
        .hits
        .iter()
        .all(|h| h.memory.memory_type == MemoryType::Gotcha));
    assert!(indexed.forget(&early.id).await.unwrap());
    let after = indexed
        .search(&dense(
            "concurrent test processes collide on one database file",
        ))
        .await
        .unwrap();
    assert!(after.hits.iter().all(|h| h.memory.id != early.id));
}

#[tokio::test]
async fn vector_index_on_the_test_server_over_http() {
    let server = TestServer::start(ServerConfig::default()).expect("test server starts");
    let db = HranaClient::new(ReqwestTransport::new(), &server.url(), None);
    index_matches_brute_force(&db).await;
}

#[tokio::test]
async fn vector_index_on_an_embedded_libsql_file() {
    let path = temp_db("vector-index");
    let db = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
    index_matches_brute_force(&db).await;
}
