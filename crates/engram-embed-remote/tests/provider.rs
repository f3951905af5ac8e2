//! Remote providers against a real local HTTP server: healthy, down, wrong dimensions,
//! garbage, unauthorized; the circuit breaker opening, staying shut and recovering; and
//! nothing lost on the way. The provider server is a test double of the provider (not of
//! engram): a small axum app whose behaviour the test switches. Time is a fake clock so the
//! 30 s half-open wait does not sleep.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use engram::{
    Circuit, Clock, Engram, EngramConfig, EngramError, Host, MemoryType, NewMemory, OsEntropy,
    SearchMode, SearchQuery, RETRY_AFTER_MILLIS,
};
use engram_embed_remote::{Protocol, RemoteConfig, RemoteEmbedder};
use engram_http::ReqwestTransport;
use engram_libsql::LocalDatabase;
use serde_json::{json, Value};

const DIMS: usize = 8;
const KEY: &str = "sk-test-key";

/// What the provider does with the next requests.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Behaviour {
    Healthy,
    Down,
    WrongDims,
    Garbage,
}

#[derive(Clone)]
struct Provider {
    behaviour: Arc<Mutex<Behaviour>>,
    requests: Arc<AtomicUsize>,
}

impl Provider {
    fn set(&self, b: Behaviour) {
        *self.behaviour.lock().unwrap() = b;
    }
    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// A deterministic bag-of-words vector: texts sharing words point the same way.
fn vector_of(text: &str, dims: usize) -> Vec<f32> {
    let mut v = vec![0.0f32; dims];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let h = word
            .to_lowercase()
            .bytes()
            .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        v[h as usize % dims] += 1.0;
    }
    v[0] += 0.01;
    v
}

fn texts_of(body: &Value) -> Vec<String> {
    body["input"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| t.as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

async fn answer(
    provider: &Provider,
    headers: &HeaderMap,
    body: &Value,
    shape: impl Fn(Vec<Vec<f32>>) -> Value,
) -> (StatusCode, String) {
    provider.requests.fetch_add(1, Ordering::SeqCst);
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if auth != format!("Bearer {KEY}") {
        return (
            StatusCode::UNAUTHORIZED,
            json!({"error": {"message": "invalid api key"}}).to_string(),
        );
    }
    let behaviour = *provider.behaviour.lock().unwrap();
    let dims = if behaviour == Behaviour::WrongDims {
        DIMS + 1
    } else {
        DIMS
    };
    match behaviour {
        Behaviour::Down => (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"error": "model is loading"}).to_string(),
        ),
        Behaviour::Garbage => (StatusCode::OK, "<html>upstream timed out</html>".into()),
        Behaviour::Healthy | Behaviour::WrongDims => {
            let vectors = texts_of(body).iter().map(|t| vector_of(t, dims)).collect();
            (StatusCode::OK, shape(vectors).to_string())
        }
    }
}

async fn ollama(
    State(p): State<Provider>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, String) {
    answer(&p, &headers, &body, |v| json!({ "embeddings": v })).await
}

async fn openai(
    State(p): State<Provider>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, String) {
    answer(&p, &headers, &body, |vectors| {
        // Answer in reverse order: clients must use `index`.
        let data: Vec<Value> = vectors
            .into_iter()
            .enumerate()
            .rev()
            .map(|(i, e)| json!({"object": "embedding", "index": i, "embedding": e}))
            .collect();
        json!({ "object": "list", "data": data, "model": "test" })
    })
    .await
}

/// Starts the provider on 127.0.0.1 on its own thread; returns its base URL.
fn start_provider() -> (String, Provider) {
    let provider = Provider {
        behaviour: Arc::new(Mutex::new(Behaviour::Healthy)),
        requests: Arc::new(AtomicUsize::new(0)),
    };
    let app = Router::new()
        .route("/api/embed", post(ollama))
        .route("/v1/embeddings", post(openai))
        .with_state(provider.clone());
    let url = engram_testserver::serve_router(app).expect("provider starts");
    (url, provider)
}

/// A fake clock the test moves by hand.
#[derive(Clone, Default)]
struct FakeClock(Rc<Cell<i64>>);

impl Clock for FakeClock {
    fn now_millis(&self) -> i64 {
        self.0.get()
    }
}

async fn open(config: RemoteConfig, clock: FakeClock) -> Engram<LocalDatabase> {
    // A private in-memory database: nothing is left behind in the temp dir.
    let db = LocalDatabase::open(":memory:").await.unwrap();
    Engram::open(db, EngramConfig::default(), Host::new(clock, OsEntropy))
        .await
        .unwrap()
        .with_embedder(Box::new(RemoteEmbedder::new(
            ReqwestTransport::new(),
            config,
        )))
}

fn config(protocol: Protocol, url: &str) -> RemoteConfig {
    let base = match protocol {
        Protocol::OpenAiCompatible => format!("{url}/v1"),
        Protocol::Ollama => url.to_owned(),
    };
    let mut c = RemoteConfig::new(protocol, &base, "test", DIMS);
    c.api_key = Some(KEY.into());
    c
}

fn memory(text: &str) -> NewMemory {
    NewMemory::new(MemoryType::Gotcha, text)
}

fn dense(text: &str) -> SearchQuery {
    SearchQuery {
        mode: SearchMode::Dense,
        ..SearchQuery::new(text)
    }
}

#[tokio::test]
async fn both_protocols_embed_and_search() {
    let (url, provider) = start_provider();
    for protocol in [Protocol::Ollama, Protocol::OpenAiCompatible] {
        let engram = open(config(protocol, &url), FakeClock::default()).await;
        let a = engram
            .remember(memory("vite dev server port conflicts"))
            .await
            .unwrap();
        let b = engram
            .remember(memory("postgres migrations need a lock timeout"))
            .await
            .unwrap();
        let expected = format!("{}:test", protocol.as_str());
        assert_eq!(a.embedding_model.as_deref(), Some(expected.as_str()));
        assert_eq!(b.embedding_error, None);
        let found = engram
            .search(&dense("postgres lock timeout"))
            .await
            .unwrap();
        assert_eq!(found.hits[0].memory.id, b.id, "{protocol:?}");
        assert!(found.warnings.is_empty(), "{:?}", found.warnings);
    }
    assert!(provider.requests() >= 6);
}

#[tokio::test]
async fn provider_down_opens_the_circuit_and_nothing_is_lost() {
    let (url, provider) = start_provider();
    let clock = FakeClock::default();
    clock.0.set(1_000_000);
    let engram = open(config(Protocol::Ollama, &url), clock.clone()).await;
    provider.set(Behaviour::Down);

    let mut ids = Vec::new();
    for i in 0..3 {
        let stored = engram
            .remember(memory(&format!("flaky network gotcha number {i}")))
            .await
            .unwrap();
        let error = stored.embedding_error.unwrap();
        assert!(error.contains("HTTP 503: model is loading"), "{error}");
        assert!(error.contains("queued"), "{error}");
        assert_eq!(stored.embedding_model, None);
        ids.push(stored.id);
    }
    assert_eq!(provider.requests(), 3);
    let status = engram.embedding_status().await.unwrap().unwrap();
    assert_eq!(
        status.circuit,
        Circuit::Open {
            retry_at: 1_000_000 + RETRY_AFTER_MILLIS
        }
    );
    assert_eq!(status.pending, 3);

    // Open: no calls, memories still stored, search keyword-only with a warning.
    let stored = engram
        .remember(memory("flaky network gotcha while open"))
        .await
        .unwrap();
    assert!(stored
        .embedding_error
        .unwrap()
        .contains("3 consecutive failures"));
    ids.push(stored.id);
    let hybrid = engram
        .search(&SearchQuery::new("flaky network gotcha"))
        .await
        .unwrap();
    assert_eq!(hybrid.hits.len(), 4);
    assert!(hybrid.warnings[0].contains("dense path skipped"));
    assert!(hybrid.hits.iter().all(|h| h.breakdown.dense.is_none()));
    match engram.embed_pending(10).await {
        Err(EngramError::EmbedderUnavailable {
            retry_at: Some(t), ..
        }) => assert_eq!(t, 1_000_000 + RETRY_AFTER_MILLIS),
        other => panic!("expected the circuit to refuse: {other:?}"),
    }
    assert_eq!(provider.requests(), 3, "an open circuit must not call out");

    // Half-open after 30 s: a failed trial re-opens it for another period.
    clock.0.set(1_000_000 + RETRY_AFTER_MILLIS);
    assert_eq!(
        engram.embedding_status().await.unwrap().unwrap().circuit,
        Circuit::HalfOpen
    );
    assert!(engram.embed_pending(10).await.is_err());
    assert_eq!(provider.requests(), 4);
    assert!(matches!(
        engram.embedding_status().await.unwrap().unwrap().circuit,
        Circuit::Open { .. }
    ));

    // Provider back: the next trial closes the circuit and the queue drains.
    provider.set(Behaviour::Healthy);
    clock.0.set(1_000_000 + 2 * RETRY_AFTER_MILLIS);
    let progress = engram.embed_pending(10).await.unwrap();
    assert_eq!((progress.embedded, progress.remaining), (4, 0));
    let status = engram.embedding_status().await.unwrap().unwrap();
    assert_eq!(
        status.circuit,
        Circuit::Closed {
            consecutive_failures: 0
        }
    );
    assert_eq!(status.pending, 0);
    let found = engram
        .search(&dense("flaky network gotcha while open"))
        .await
        .unwrap();
    assert_eq!(found.hits.len(), 4);
    assert_eq!(&found.hits[0].memory.id, ids.last().unwrap());
    for id in &ids {
        assert!(engram.get(id).await.unwrap().is_some());
    }
}

#[tokio::test]
async fn wrong_dims_garbage_and_bad_keys_are_failures_not_vectors() {
    let (url, provider) = start_provider();
    let engram = open(
        config(Protocol::OpenAiCompatible, &url),
        FakeClock::default(),
    )
    .await;

    provider.set(Behaviour::WrongDims);
    let stored = engram.remember(memory("wrong dims text")).await.unwrap();
    let error = stored.embedding_error.unwrap();
    assert!(error.contains("9 dimensions, configured 8"), "{error}");

    provider.set(Behaviour::Garbage);
    let stored = engram
        .remember(memory("garbage answer text"))
        .await
        .unwrap();
    let error = stored.embedding_error.unwrap();
    assert!(error.contains("malformed JSON"), "{error}");
    assert!(error.contains("upstream timed out"), "{error}");

    // A success in between resets the count: the circuit stays closed.
    provider.set(Behaviour::Healthy);
    let ok = engram.remember(memory("healthy text")).await.unwrap();
    assert!(ok.embedding_error.is_none());
    assert_eq!(
        engram.embedding_status().await.unwrap().unwrap(),
        engram::EmbeddingStatus {
            model: "openai:test".into(),
            dims: DIMS,
            circuit: Circuit::Closed {
                consecutive_failures: 0
            },
            pending: 2,
        }
    );

    let mut bad = config(Protocol::OpenAiCompatible, &url);
    bad.api_key = Some("sk-wrong".into());
    let engram = open(bad, FakeClock::default()).await;
    let stored = engram.remember(memory("unauthorized text")).await.unwrap();
    let error = stored.embedding_error.unwrap();
    assert!(error.contains("HTTP 401: invalid api key"), "{error}");
    assert!(!error.contains("sk-wrong"));
    assert!(engram.get(&stored.id).await.unwrap().is_some());
}

#[tokio::test]
async fn unreachable_provider_is_a_clear_failure() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let engram = open(config(Protocol::Ollama, &url), FakeClock::default()).await;
    let stored = engram.remember(memory("offline text")).await.unwrap();
    let error = stored.embedding_error.unwrap();
    assert!(error.starts_with("provider unreachable"), "{error}");
    let found = engram.search(&SearchQuery::new("offline")).await.unwrap();
    assert_eq!(found.hits[0].memory.id, stored.id);
}
