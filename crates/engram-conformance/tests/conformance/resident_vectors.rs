//! Resident vectors (`Engram::enable_resident_vectors`) with the real model, on the test
//! server over HTTP and on an embedded libSQL file: dense results must be the exact scan's
//! (same memories, ranks and similarities) while the set fills, after this instance's and
//! another writer's changes, and under filters that force the exact fallback; every search
//! is one round trip, whatever changed since the last.

use std::rc::Rc;

use crate::common::{nonce, temp_db, CountingTransport};
use crate::real_model::{open_with_model, real_model};
use engram::{Database, Engram, MemoryType, NewMemory, SearchMode, SearchQuery, SearchResponse};
use engram_hrana::HranaClient;
use engram_libsql::LocalDatabase;
use engram_store::{Statement, Value};
use engram_testserver::{ServerConfig, TestServer};

/// 160 distinct memories: enough that the resident pick (2 × 30 ids) is full and the fast
/// form, not the exact fallback, answers.
fn corpus() -> Vec<(String, MemoryType)> {
    let subjects = [
        "The billing service",
        "Our CI pipeline",
        "The mobile client",
        "The search indexer",
        "The auth gateway",
        "The nightly export job",
        "The admin dashboard",
        "The payments webhook",
    ];
    let facts = [
        (
            "times out when the database pool is exhausted",
            MemoryType::ErrorPattern,
        ),
        (
            "must pin its Node version or builds drift",
            MemoryType::Gotcha,
        ),
        (
            "caches responses in Redis for five minutes",
            MemoryType::Decision,
        ),
        (
            "retries failed requests with exponential backoff",
            MemoryType::Pattern,
        ),
        ("logs secrets if debug mode is left on", MemoryType::Gotcha),
        (
            "was rewritten in Rust for lower latency",
            MemoryType::Decision,
        ),
        (
            "breaks when the locale is not UTF-8",
            MemoryType::ErrorPattern,
        ),
        (
            "needs a feature flag before each release",
            MemoryType::WorkflowRecipe,
        ),
        (
            "uses optimistic locking on every update",
            MemoryType::Pattern,
        ),
        ("tried GraphQL and went back to REST", MemoryType::DeadEnd),
        (
            "reads its config from environment variables only",
            MemoryType::Preference,
        ),
        (
            "fails its health check during cold starts",
            MemoryType::ErrorPattern,
        ),
        (
            "sends email through a queue, never inline",
            MemoryType::Decision,
        ),
        (
            "keeps timestamps in UTC and converts at the edge",
            MemoryType::Preference,
        ),
        (
            "deadlocks if two migrations run at once",
            MemoryType::Gotcha,
        ),
        (
            "has flaky snapshot tests on Windows",
            MemoryType::ErrorPattern,
        ),
        (
            "validates input with JSON schema at the boundary",
            MemoryType::Pattern,
        ),
        (
            "ships source maps only to the error tracker",
            MemoryType::Decision,
        ),
        (
            "is deployed by tagging a release on main",
            MemoryType::WorkflowRecipe,
        ),
        ("lost data once when a disk filled up", MemoryType::Gotcha),
    ];
    subjects
        .iter()
        .flat_map(|s| facts.iter().map(move |(f, t)| (format!("{s} {f}"), *t)))
        .collect()
}

/// A dense-only search, every hit kept: these tests compare how the dense path finds
/// neighbours, so the search's cut of unrelated hits stays off.
fn dense(text: &str) -> SearchQuery {
    SearchQuery {
        mode: SearchMode::Dense,
        limit: 10,
        stages: engram::Stages {
            cut: false,
            ..engram::Stages::default()
        },
        ..SearchQuery::new(text)
    }
}

/// Each hit's id, dense rank and dense similarity.
fn dense_hits(response: &SearchResponse) -> Vec<(String, u32, f64)> {
    response
        .hits
        .iter()
        .map(|h| {
            let dense = h.breakdown.dense.expect("a dense hit");
            (h.memory.id.clone(), dense.rank, dense.metric)
        })
        .collect()
}

fn assert_same(a: &SearchResponse, b: &SearchResponse, what: &str) {
    let (a, b) = (dense_hits(a), dense_hits(b));
    assert_eq!(a.len(), b.len(), "{what}");
    assert!(!a.is_empty(), "{what}: no hits");
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((&x.0, x.1), (&y.0, y.1), "{what}");
        assert!((x.2 - y.2).abs() < 1e-9, "{what}: {} vs {}", x.2, y.2);
    }
}

/// A dense search for `query` that, when the transport counts requests, must take exactly
/// one.
async fn search_counted<D: Database>(
    engram: &Engram<D>,
    query: &str,
    requests: &dyn Fn() -> Option<usize>,
    what: &str,
) -> SearchResponse {
    let before = requests();
    let response = engram.search(&dense(query)).await.unwrap();
    if let Some(before) = before {
        assert_eq!(requests(), Some(before + 1), "{what}: round trips");
    }
    response
}

/// Runs the scenario; `requests` reads the transport's request count when there is one.
async fn resident_matches_exact<D: Database + Copy>(db: D, requests: &dyn Fn() -> Option<usize>) {
    let model = Rc::new(real_model());
    let project = format!("rv-{}", nonce());
    let exact = open_with_model(db, &project, &model).await;
    let corpus = corpus();
    for (content, memory_type) in &corpus {
        exact
            .remember(NewMemory::new(*memory_type, content.as_str()))
            .await
            .unwrap();
    }
    // Another project's vectors reach the change log too and must never be ranked.
    let other = open_with_model(db, &format!("{project}-other"), &model).await;
    other
        .remember(NewMemory::new(MemoryType::Gotcha, corpus[0].0.as_str()))
        .await
        .unwrap();

    let mut resident = open_with_model(db, &project, &model).await;
    assert_eq!(resident.resident_vector_count(), None);
    resident.enable_resident_vectors().unwrap();
    assert_eq!(resident.resident_vector_count(), Some(0));

    let queries = [
        "connection pool runs out and requests hang",
        "which services cache data and for how long",
        "tests that fail only on one operating system",
        "how do we release to production",
    ];
    // The first search loads the set from the change log in the same round trip.
    let first = search_counted(&resident, queries[0], requests, "the loading search").await;
    assert_eq!(resident.resident_vector_count(), Some(corpus.len()));
    assert_same(
        &first,
        &exact.search(&dense(queries[0])).await.unwrap(),
        "loading",
    );
    for query in queries {
        let got = search_counted(&resident, query, requests, query).await;
        assert_same(&got, &exact.search(&dense(query)).await.unwrap(), query);
    }

    // Another writer stores the best match for a query: the next search must find it.
    let newcomer = exact
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "The release script publishes to production only from a signed tag",
        ))
        .await
        .unwrap();
    let query = "how do we release to production";
    // The set has not seen it when it picks; the statement ranks it all the same.
    let got = search_counted(&resident, query, requests, "after a write").await;
    assert!(got.hits.iter().any(|h| h.memory.id == newcomer.id));
    assert_same(
        &got,
        &exact.search(&dense(query)).await.unwrap(),
        "after a write",
    );
    assert_eq!(resident.resident_vector_count(), Some(corpus.len() + 1));

    // A change far from the query.
    let far = exact
        .remember(NewMemory::new(
            MemoryType::Preference,
            "Prefer tabs over spaces in the Makefile",
        ))
        .await
        .unwrap();
    let query = queries[0];
    let got = search_counted(&resident, query, requests, "unrelated change").await;
    assert_same(
        &got,
        &exact.search(&dense(query)).await.unwrap(),
        "unrelated change",
    );

    // Another writer rewrites the best match's vector unchanged: it is both picked and
    // changed, and must count once.
    let best = exact.search(&dense(query)).await.unwrap().hits[0]
        .memory
        .id
        .clone();
    let rewrite = Statement::with_params(
        "UPDATE memory_embeddings SET embedding = embedding WHERE memory_id = ?1",
        vec![Value::from(best.as_str())],
    );
    db.transaction(&[rewrite]).await.unwrap();
    let got = search_counted(&resident, query, requests, "picked and changed").await;
    assert_eq!(
        got.hits.iter().filter(|h| h.memory.id == best).count(),
        1,
        "picked and changed"
    );
    assert_same(
        &got,
        &exact.search(&dense(query)).await.unwrap(),
        "picked and changed",
    );

    // Another writer's forget and this instance's own write, then a filter that leaves
    // fewer than the dense limit among the picked ids (the exact fallback answers).
    let top = exact.search(&dense(queries[0])).await.unwrap().hits[0]
        .memory
        .id
        .clone();
    assert!(exact.forget(&top).await.unwrap());
    let own = resident
        .remember(NewMemory::new(
            MemoryType::DeadEnd,
            "When the connection pool runs out, requests hang",
        ))
        .await
        .unwrap();
    let got = search_counted(&resident, queries[0], requests, "after a forget").await;
    assert_same(
        &got,
        &exact.search(&dense(queries[0])).await.unwrap(),
        "own write",
    );
    assert!(got.hits.iter().all(|h| h.memory.id != top));
    assert_eq!(got.hits[0].memory.id, own.id);
    // Two writes and a forget since the count above: the forgotten vector left the set.
    assert_eq!(resident.resident_vector_count(), Some(corpus.len() + 2));
    let filtered = |q: &str| SearchQuery {
        types: vec![MemoryType::DeadEnd],
        ..dense(q)
    };
    let got = resident.search(&filtered(queries[1])).await.unwrap();
    assert!(got
        .hits
        .iter()
        .all(|h| h.memory.memory_type == MemoryType::DeadEnd));
    assert_same(
        &got,
        &exact.search(&filtered(queries[1])).await.unwrap(),
        "filtered",
    );

    // Another writer re-embeds most of a query's picked memories far from it: they no
    // longer count towards the fast form, which must not fill the dense top 30 with them
    // while unpicked memories now outrank them (the exact scan answers instead).
    let deep = |q: &str| SearchQuery {
        limit: 30,
        ..dense(q)
    };
    // The pick is 60 ids; 40 of them changed leave 20 that count, fewer than 30.
    let widest = SearchQuery {
        limit: 50,
        ..dense(queries[3])
    };
    let picked: Vec<String> = exact.search(&widest).await.unwrap().hits[..40]
        .iter()
        .map(|h| h.memory.id.clone())
        .collect();
    let reembed = Statement::with_params(
        "UPDATE memory_embeddings SET embedding = \
         (SELECT embedding FROM memory_embeddings WHERE memory_id = ?1) \
         WHERE memory_id IN (SELECT value FROM json_each(?2))",
        vec![
            Value::from(far.id.as_str()),
            Value::from(serde_json::to_string(&picked).unwrap()),
        ],
    );
    db.transaction(&[reembed]).await.unwrap();
    let before = requests();
    let got = resident.search(&deep(queries[3])).await.unwrap();
    if let Some(before) = before {
        assert_eq!(
            requests(),
            Some(before + 1),
            "after re-embedding: round trips"
        );
    }
    assert_same(
        &got,
        &exact.search(&deep(queries[3])).await.unwrap(),
        "after re-embedding",
    );

    // Hybrid searches use the same dense candidates.
    let hybrid = |q: &str| SearchQuery {
        mode: SearchMode::Hybrid,
        limit: 10,
        ..SearchQuery::new(q)
    };
    let a = resident.search(&hybrid(queries[2])).await.unwrap();
    let b = exact.search(&hybrid(queries[2])).await.unwrap();
    let ids = |r: &SearchResponse| {
        r.hits
            .iter()
            .map(|h| h.memory.id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&a), ids(&b));

    // Loading ahead of the searches: one round trip per batch (here one) brings in every
    // live vector of the project, and nothing of the other project's.
    let live = db
        .pipeline(&[Statement::with_params(
            "SELECT count(*) FROM memory_embeddings e JOIN memories m ON m.id = e.memory_id \
WHERE m.project_id = ?1 AND m.deprecated = 0",
            vec![project.as_str().into()],
        )])
        .await
        .unwrap()
        .remove(0)
        .unwrap()
        .rows[0][0]
        .as_i64("count")
        .unwrap() as usize;
    let mut loaded = open_with_model(db, &project, &model).await;
    assert_eq!(
        loaded.load_resident_vectors().await.unwrap(),
        0,
        "not enabled"
    );
    loaded.enable_resident_vectors().unwrap();
    let before = requests();
    assert_eq!(loaded.load_resident_vectors().await.unwrap(), live);
    if let Some(before) = before {
        assert_eq!(requests(), Some(before + 1), "loading: round trips");
    }
    assert_eq!(loaded.resident_vector_count(), Some(live));
    let got = search_counted(&loaded, queries[1], requests, "after loading").await;
    assert_same(
        &got,
        &exact.search(&dense(queries[1])).await.unwrap(),
        "after loading",
    );
    // Another writer's change arrives with the next load.
    exact
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "Loading ahead brings in other writers' vectors too",
        ))
        .await
        .unwrap();
    assert_eq!(loaded.load_resident_vectors().await.unwrap(), live + 1);
}

#[tokio::test]
async fn resident_vectors_on_the_test_server_over_http() {
    let server = TestServer::start(ServerConfig::default()).expect("test server starts");
    let db = HranaClient::new(CountingTransport::default(), &server.url(), None);
    let count = || Some(db.transport().requests.get());
    resident_matches_exact(&db, &count).await;
}

#[tokio::test]
async fn resident_vectors_on_an_embedded_libsql_file() {
    let path = temp_db("resident-vectors");
    let db = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
    resident_matches_exact(&db, &|| None).await;
}
