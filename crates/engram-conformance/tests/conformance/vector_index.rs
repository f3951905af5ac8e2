//! The libSQL vector index path: on the test server over HTTP and on an embedded libSQL file,
//! with the real model. The index must return what the exact brute-force scan returns,
//! respect projects, types and forgotten memories, and pick up vectors stored before it was
//! enabled and by writers that never enabled it, and be searched only from its threshold.

use std::rc::Rc;

use crate::common::{nonce, open_project, FakeWordEmbedder};
use crate::real_model::{open_with_model, real_model};
use engram::{Database, Embed, MemoryType, NewMemory, SearchMode, SearchQuery};
use engram_store::{Statement, Value};

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

/// A dense-only search, every hit kept: these tests compare how the dense path finds
/// neighbours, so the search's cut of unrelated hits stays off.
fn dense(text: &str) -> SearchQuery {
    SearchQuery {
        mode: SearchMode::Dense,
        limit: 5,
        stages: engram::Stages {
            cut: false,
            ..engram::Stages::default()
        },
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
    // Searched whatever its size: below its threshold the exact scan would answer.
    let mut indexed = open_with_model(db, &project, &model).await;
    assert!(indexed.enable_vector_index_from(0).await.unwrap());
    assert!(indexed.uses_vector_index());
    // Half stored by a writer that never enabled the index (another process, a Worker):
    // the table's triggers must index them too. The fillers make the project larger than
    // the dense path's 30 candidates, which the index must find, or the exact scan answers.
    let fillers = (0..25).map(|i| {
        (
            format!("Release note {i}: the changelog lists every renamed setting"),
            MemoryType::Decision,
        )
    });
    let mut ids = vec![early.id.clone()];
    let contents = MEMORIES
        .iter()
        .map(|(content, memory_type)| (content.to_string(), *memory_type))
        .skip(1)
        .chain(fillers);
    for (i, (content, memory_type)) in contents.enumerate() {
        let writer = if i % 2 == 0 { &indexed } else { &brute };
        ids.push(
            writer
                .remember(NewMemory::new(memory_type, content))
                .await
                .unwrap()
                .id,
        );
    }
    // Another project's near-identical memory must never show up.
    let other = open_project(db, &format!("{project}-other"))
        .await
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

/// The per-model vector tables, their DiskANN indexes and the indexes' `…_shadow` tables
/// (where libSQL keeps the graph), by name, with their definitions.
async fn vector_objects<D: Database>(db: D) -> Vec<(String, String)> {
    let rows = db
        .transaction(&[Statement::new(
            "SELECT name, sql FROM sqlite_master WHERE tbl_name LIKE 'vector_index_%' \
AND (type = 'table' OR sql LIKE '%libsql_vector_idx%') ORDER BY name",
        )])
        .await
        .unwrap();
    rows[0]
        .rows
        .iter()
        .map(|row| match (&row[0], &row[1]) {
            (Value::Text(name), Value::Text(sql)) => (name.clone(), sql.clone()),
            other => panic!("unexpected row {other:?}"),
        })
        .collect()
}

/// A database whose index has libSQL's default options (full-precision neighbours, about
/// 80 KB per memory), as engram created it before choosing its own, gets the compact index
/// in its place when the index is enabled, and searches still match the exact scan.
async fn legacy_index_is_replaced<D: Database + Copy>(db: D) {
    let model = Rc::new(real_model());
    let project = format!("vi-legacy-{}", nonce());
    let brute = open_with_model(db, &project, &model).await;
    for (content, memory_type) in &MEMORIES {
        brute
            .remember(NewMemory::new(*memory_type, *content))
            .await
            .unwrap();
    }
    let mut indexed = open_with_model(db, &project, &model).await;
    assert!(indexed.enable_vector_index().await.unwrap());
    let created = vector_objects(db).await;
    let names = |objects: &[(String, String)]| {
        objects
            .iter()
            .map(|(name, _)| name.clone())
            .collect::<Vec<_>>()
    };
    let table = created[0].0.clone();
    assert_eq!(
        names(&created),
        [
            table.clone(),
            format!("{table}_ann8"),
            format!("{table}_ann8_shadow")
        ]
    );
    assert!(
        created[1].1.contains("'compress_neighbors=float8'"),
        "{}",
        created[1].1
    );
    // What an older engram left: the default-options index, named `…_ann`, and no
    // triggers, so what other writers stored since is missing from the table.
    db.transaction(&[
        Statement::new(format!("DROP INDEX {table}_ann8")),
        Statement::new(format!(
            "CREATE INDEX {table}_ann ON {table} (libsql_vector_idx(embedding, 'metric=cosine'))"
        )),
        Statement::new(format!("DROP TRIGGER {table}_insert")),
        Statement::new(format!("DROP TRIGGER {table}_update")),
        Statement::new(format!("DROP TRIGGER {table}_delete")),
    ])
    .await
    .unwrap();
    brute
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "Parallel test runs share one temp directory and flake",
        ))
        .await
        .unwrap();
    assert_eq!(
        names(&vector_objects(db).await),
        [
            table.clone(),
            format!("{table}_ann"),
            format!("{table}_ann_shadow")
        ]
    );

    let mut upgraded = open_with_model(db, &project, &model).await;
    assert!(upgraded.enable_vector_index().await.unwrap());
    // The legacy index and its graph are gone; the compact index is back.
    assert_eq!(vector_objects(db).await, created);
    for query in ["slow container image builds", "flaky parallel tests"] {
        let ids =
            |r: engram::SearchResponse| r.hits.into_iter().map(|h| h.memory.id).collect::<Vec<_>>();
        assert_eq!(
            ids(upgraded.search(&dense(query)).await.unwrap()),
            ids(brute.search(&dense(query)).await.unwrap()),
            "{query}"
        );
    }
}

/// A project much smaller than the database beside it: the index's nearest neighbours
/// (240 asked for, of 1,003 vectors) are all the other project's, so too few survive the
/// project filter and the exact scan must answer, in the same statement, with what it
/// answers without the index.
async fn small_project_beside_a_large_one<D: Database + Copy>(db: D) {
    let open = |project: String| async move {
        open_project(db, &project)
            .await
            .with_embedder(Box::new(FakeWordEmbedder))
    };
    let run = nonce();
    let large = open(format!("vi-large-{run}")).await;
    for i in 0..1000 {
        large
            .remember(NewMemory::new(
                MemoryType::Gotcha,
                format!("database locked timeout retries number {i} marker{i}"),
            ))
            .await
            .unwrap();
    }
    let small = open(format!("vi-small-{run}")).await;
    let mut ids = Vec::new();
    for content in [
        "the database is locked when tests share one file",
        "css grid layout for the dashboard",
        "vite picks another port when 5173 is taken",
    ] {
        ids.push(
            small
                .remember(NewMemory::new(MemoryType::Gotcha, content))
                .await
                .unwrap()
                .id,
        );
    }
    let mut indexed = open(format!("vi-small-{run}")).await;
    assert!(indexed.enable_vector_index_from(0).await.unwrap());
    let query = dense("database locked timeout");
    let ranked = |r: engram::SearchResponse| {
        r.hits
            .into_iter()
            .map(|h| (h.memory.id, h.breakdown.dense.map(|d| d.rank)))
            .collect::<Vec<_>>()
    };
    let expected = ranked(small.search(&query).await.unwrap());
    assert_eq!(expected.first().map(|hit| &hit.0), Some(&ids[0]));
    assert_eq!(ranked(indexed.search(&query).await.unwrap()), expected);
}

/// Whether the index or the exact scan answers a dense search, told apart by a tampered
/// copy: one memory's vector in the index table is overwritten with the query's, which
/// only the index path reads. The index answers when the project holds at least the
/// threshold's count of live memories (other projects' do not count), and always at `0`.
async fn the_index_answers_from_its_threshold<D: Database + Copy>(db: D) {
    let project = format!("vi-threshold-{}", nonce());
    let open = |project: String| async move {
        open_project(db, &project)
            .await
            .with_embedder(Box::new(FakeWordEmbedder))
    };
    let neighbour = open(format!("{project}-neighbour")).await;
    for i in 0..10 {
        let content = format!("neighbour{i} backlog{i} sprint{i}");
        let stored = neighbour.remember(NewMemory::new(MemoryType::Decision, content));
        stored.await.unwrap();
    }
    let writer = open(project.clone()).await;
    let mut ids = Vec::new();
    for i in 0..39 {
        let content = format!("release{i} checklist{i} changelog{i} version{i}");
        let stored = writer.remember(NewMemory::new(MemoryType::Decision, content));
        ids.push(stored.await.unwrap().id);
    }
    let relevant = writer
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "the database stays locked until the timeout when tests share it",
        ))
        .await
        .unwrap()
        .id;
    let query = "database locked timeout";
    let query_vector = FakeWordEmbedder
        .embed(&[query.to_owned()])
        .await
        .unwrap()
        .remove(0);
    let mut indexed = open(project.clone()).await;
    assert!(indexed.enable_vector_index_from(0).await.unwrap());
    let table = vector_objects(db).await[0].0.clone();
    let as_json = serde_json::to_string(&query_vector).unwrap();
    db.transaction(&[Statement::with_params(
        format!("UPDATE {table} SET embedding = vector32(?1) WHERE memory_id = ?2"),
        vec![Value::from(as_json.as_str()), Value::from(ids[7].as_str())],
    )])
    .await
    .unwrap();

    // 40 memories in the project, 50 vectors in the table: the tampered copy wins where
    // the index answers.
    let mut top = async |min_memories: Option<u64>| {
        let enabled = match min_memories {
            Some(min) => indexed.enable_vector_index_from(min).await,
            None => indexed.enable_vector_index().await,
        };
        assert!(enabled.unwrap());
        let hits = indexed.search(&dense(query)).await.unwrap().hits;
        hits[0].memory.id.clone()
    };
    assert_eq!(top(Some(0)).await, ids[7]);
    assert_eq!(top(Some(40)).await, ids[7]);
    assert_eq!(top(Some(41)).await, relevant);
    assert_eq!(top(None).await, relevant);
    // A forgotten memory no longer counts.
    assert!(writer.forget(&ids[0]).await.unwrap());
    assert_eq!(top(Some(40)).await, relevant);
    assert_eq!(top(Some(39)).await, ids[7]);
    let exact = writer.search(&dense(query)).await.unwrap().hits;
    assert_eq!(exact[0].memory.id, relevant);
}

on_a_file_and_over_http!(
    index_matches_brute_force,
    vector_index_on_an_embedded_libsql_file,
    vector_index_on_the_test_server_over_http
);
on_a_file_and_over_http!(
    legacy_index_is_replaced,
    legacy_index_is_replaced_on_an_embedded_libsql_file,
    legacy_index_is_replaced_on_the_test_server_over_http
);
on_a_file_and_over_http!(
    small_project_beside_a_large_one,
    a_small_project_finds_its_own_on_an_embedded_libsql_file,
    a_small_project_finds_its_own_on_the_test_server_over_http
);
on_a_file_and_over_http!(
    the_index_answers_from_its_threshold,
    the_index_answers_from_its_threshold_on_an_embedded_libsql_file,
    the_index_answers_from_its_threshold_on_the_test_server_over_http
);
