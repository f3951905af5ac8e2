//! Remote rerankers against a real local HTTP server, through a real engram search on an
//! embedded libSQL file: both protocols reorder the best candidates by the service's
//! scores (fused with engram's own order) and record them in each hit's breakdown; the key is sent; a service that is
//! down, unauthorized or answers garbage leaves the order as it was, with a warning. The
//! server is a test double of a rerank service (not of engram): it scores a document by
//! how many of the query's words it contains, which is enough to tell its order from
//! engram's own.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use engram::{Engram, EngramConfig, Host, MemoryType, NewMemory, SearchQuery, SearchResponse};
use engram_http::ReqwestTransport;
use engram_libsql::LocalDatabase;
use engram_rerank_remote::{RemoteReranker, RerankConfig, RerankProtocol};
use serde_json::{json, Value};

const KEY: &str = "rk-test-key";

#[derive(Clone)]
struct Service {
    healthy: Arc<Mutex<bool>>,
    requests: Arc<AtomicUsize>,
    last_body: Arc<Mutex<Value>>,
}

/// The service's relevance: query words found in the document, most first.
fn overlap(query: &str, document: &str) -> f64 {
    let document = document.to_lowercase();
    query
        .to_lowercase()
        .split_whitespace()
        .filter(|w| document.contains(*w))
        .count() as f64
}

fn strings(body: &Value, key: &str) -> Vec<String> {
    body[key]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t.as_str().unwrap_or_default().to_owned())
        .collect()
}

async fn answer(
    service: &Service,
    headers: &HeaderMap,
    body: Value,
    documents_key: &str,
    shape: impl Fn(Vec<(usize, f64)>) -> Value,
) -> (StatusCode, String) {
    service.requests.fetch_add(1, Ordering::SeqCst);
    *service.last_body.lock().unwrap() = body.clone();
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if auth != format!("Bearer {KEY}") {
        return (
            StatusCode::UNAUTHORIZED,
            json!({"message": "invalid api token"}).to_string(),
        );
    }
    if !*service.healthy.lock().unwrap() {
        return (StatusCode::OK, "<html>upstream timed out</html>".into());
    }
    let query = body["query"].as_str().unwrap_or_default();
    let mut scored: Vec<(usize, f64)> = strings(&body, documents_key)
        .iter()
        .enumerate()
        .map(|(i, d)| (i, overlap(query, d)))
        .collect();
    // Services answer best first: clients must use `index`.
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    (StatusCode::OK, shape(scored).to_string())
}

async fn cohere(
    State(s): State<Service>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, String) {
    answer(&s, &headers, body, "documents", |scored| {
        let results: Vec<Value> = scored
            .into_iter()
            .map(|(index, score)| json!({"index": index, "relevance_score": score}))
            .collect();
        json!({"id": "r1", "results": results, "meta": {}})
    })
    .await
}

async fn tei(
    State(s): State<Service>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, String) {
    answer(&s, &headers, body, "texts", |scored| {
        Value::Array(
            scored
                .into_iter()
                .map(|(index, score)| json!({"index": index, "score": score}))
                .collect(),
        )
    })
    .await
}

/// Starts the service on 127.0.0.1 on its own thread; returns its base URL.
fn start_service() -> (String, Service) {
    let service = Service {
        healthy: Arc::new(Mutex::new(true)),
        requests: Arc::new(AtomicUsize::new(0)),
        last_body: Arc::new(Mutex::new(Value::Null)),
    };
    let app = Router::new()
        .route("/v2/rerank", post(cohere))
        .route("/rerank", post(tei))
        .with_state(service.clone());
    let url = engram_testserver::serve_router(app).expect("service starts");
    (url, service)
}

const QUERY: &str = "deploy release staging";

/// Memories the keyword path ranks one way and the service another: the service counts
/// the query's words inside longer words too (`redeployment`, `prereleases`), which the
/// keyword path's stems do not match, so it puts that memory among its best while BM25
/// puts it below a memory that repeats `staging`.
async fn engram_with(reranker: Option<RemoteReranker<ReqwestTransport>>) -> Engram<LocalDatabase> {
    // A private in-memory database: nothing is left behind in the temp dir.
    let db = LocalDatabase::open(":memory:").await.unwrap();
    let mut engram = Engram::open(db, EngramConfig::default(), Host::native())
        .await
        .unwrap();
    if let Some(reranker) = reranker {
        engram = engram.with_reranker(Box::new(reranker));
    }
    for content in [
        "staging staging staging is reset every night",
        "deploy scripts live in ops/",
        "To deploy a release, tag it; staging deploys the release candidate first",
        "release notes are generated from commit messages",
        "the staging database is a copy of production from last week",
        "deploy to staging before each release, never straight to production",
        "redeployment of prereleases goes through the staging queue",
    ] {
        engram
            .remember(NewMemory::new(MemoryType::Gotcha, content))
            .await
            .unwrap();
    }
    engram
}

/// The search for `QUERY` on a fresh engram with `reranker`.
async fn search_with(reranker: Option<RemoteReranker<ReqwestTransport>>) -> SearchResponse {
    engram_with(reranker)
        .await
        .search(&SearchQuery::new(QUERY))
        .await
        .unwrap()
}

fn contents(response: &SearchResponse) -> Vec<String> {
    response
        .hits
        .iter()
        .map(|h| h.memory.content.clone())
        .collect()
}

fn remote(url: &str, protocol: RerankProtocol, key: &str) -> RemoteReranker<ReqwestTransport> {
    let mut config = RerankConfig::new(protocol, url);
    config.model = Some("test-reranker".into());
    config.api_key = Some(key.into());
    RemoteReranker::new(ReqwestTransport::new(), config)
}

#[tokio::test]
async fn both_protocols_reorder_the_best_candidates_by_the_services_scores() {
    let (url, service) = start_service();
    let plain = search_with(None).await;
    assert!(plain.hits.iter().all(|h| h.breakdown.rerank.is_none()));
    for (protocol, base) in [
        (RerankProtocol::Cohere, format!("{url}/v2")),
        (RerankProtocol::Tei, url.clone()),
    ] {
        let engram = engram_with(Some(remote(&base, protocol, KEY))).await;
        let before = service.requests.load(Ordering::SeqCst);
        let response = engram.search(&SearchQuery::new(QUERY)).await.unwrap();
        assert_eq!(service.requests.load(Ordering::SeqCst), before + 1);
        assert!(response.warnings.is_empty(), "{:?}", response.warnings);
        // Every candidate reached the service, and the hits follow its scores.
        let sent = service.last_body.lock().unwrap().clone();
        let key = if protocol == RerankProtocol::Tei {
            "texts"
        } else {
            "documents"
        };
        assert_eq!(strings(&sent, key).len(), plain.hits.len());
        assert_eq!(sent["model"], "test-reranker");
        for hit in &response.hits {
            assert_eq!(
                hit.breakdown.rerank,
                Some(overlap(QUERY, &hit.memory.content))
            );
        }
        // Each hit's reranker rank follows the service's scores (the order itself fuses
        // those ranks with the pipeline's).
        let mut by_reranker: Vec<(u32, f64)> = response
            .hits
            .iter()
            .map(|h| {
                let b = &h.breakdown;
                (
                    b.rerank_rank.expect("a reranker rank"),
                    b.rerank.unwrap_or(-1.0),
                )
            })
            .collect();
        by_reranker.sort_by_key(|(rank, _)| *rank);
        let ranks: Vec<u32> = by_reranker.iter().map(|(rank, _)| *rank).collect();
        assert_eq!(ranks, (1..=response.hits.len() as u32).collect::<Vec<_>>());
        assert!(
            by_reranker.windows(2).all(|w| w[0].1 >= w[1].1),
            "{by_reranker:?}"
        );
        assert_eq!(
            response.hits[0].breakdown.rerank,
            Some(3.0),
            "a memory with every query word leads"
        );
        assert_ne!(contents(&response), contents(&plain), "the order changed");
    }
}

#[tokio::test]
async fn a_failing_service_leaves_the_order_and_says_why() {
    let (url, service) = start_service();
    let plain = contents(&search_with(None).await);

    let response = search_with(Some(remote(&url, RerankProtocol::Tei, "wrong"))).await;
    assert_eq!(contents(&response), plain);
    assert_eq!(
        response.warnings,
        ["rerank skipped: rerank service answered HTTP 401: invalid api token"]
    );

    *service.healthy.lock().unwrap() = false;
    let response = search_with(Some(remote(&url, RerankProtocol::Tei, KEY))).await;
    assert_eq!(contents(&response), plain);
    assert_warned(
        &response,
        "rerank skipped: rerank service answered malformed JSON",
    );
    assert!(response.hits.iter().all(|h| h.breakdown.rerank.is_none()));

    let unreachable = remote("http://127.0.0.1:9", RerankProtocol::Cohere, KEY);
    let response = search_with(Some(unreachable)).await;
    assert_eq!(contents(&response), plain);
    assert_warned(&response, "rerank skipped: rerank service unreachable");
}

fn assert_warned(response: &SearchResponse, prefix: &str) {
    assert!(
        response.warnings[0].starts_with(prefix),
        "{:?}",
        response.warnings
    );
}
