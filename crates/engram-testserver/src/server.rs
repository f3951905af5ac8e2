//! The HTTP side: routes, auth, streams and batons.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use engram_hrana::proto::{PipelineRequest, PipelineResponse, StreamRequest, StreamResult};

use crate::execute::{protocol_error, run_request};

/// Streams idle longer than this are closed (their open transactions roll back).
const STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// How to run a test server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The database file; `None` makes a fresh file in the system temp folder.
    pub db_path: Option<std::path::PathBuf>,
    /// The bearer token clients must send; `None` accepts any request.
    pub auth_token: Option<String>,
    /// Serve `/v3/pipeline`; when false only `/v2/pipeline` exists (to test fallback).
    pub v3: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            db_path: None,
            auth_token: None,
            v3: true,
        }
    }
}

struct Stream {
    conn: libsql::Connection,
    baton: String,
    last_used: Instant,
}

struct AppState {
    db: libsql::Database,
    config: ServerConfig,
    streams: Mutex<HashMap<u64, Stream>>,
    next_stream: AtomicU64,
    next_baton: AtomicU64,
    pipeline_requests: AtomicU64,
}

/// A server running on its own thread and runtime, for tests on any executor. Dropping it
/// deletes its database file: serve a file that must outlive the server with [`serve`].
pub struct TestServer {
    addr: SocketAddr,
    db_path: std::path::PathBuf,
    config: ServerConfig,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestServer {
    /// Starts a server on a free port of 127.0.0.1.
    pub fn start(config: ServerConfig) -> std::io::Result<TestServer> {
        TestServer::start_on(
            config,
            "127.0.0.1:0".parse().map_err(std::io::Error::other)?,
        )
    }

    /// Stops the server (requests in flight are answered first) and starts it again on the
    /// same port and database, as a crashed server comes back.
    pub fn restart(&mut self) -> std::io::Result<()> {
        self.stop();
        let config = ServerConfig {
            db_path: Some(self.db_path.clone()),
            ..self.config.clone()
        };
        let mut next = TestServer::start_on(config, self.addr)?;
        self.shutdown = next.shutdown.take();
        self.thread = next.thread.take();
        // `next` keeps no thread now; its drop must not delete the shared database.
        next.db_path = std::path::PathBuf::new();
        Ok(())
    }

    /// Stops the server; [`TestServer::restart`] brings it back.
    pub fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }

    fn start_on(config: ServerConfig, bind: SocketAddr) -> std::io::Result<TestServer> {
        // Everything async happens on the server's own thread so callers may be inside
        // any runtime (or none).
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let started = (|| {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()?;
                let listener = runtime.block_on(tokio::net::TcpListener::bind(bind))?;
                let addr = listener.local_addr()?;
                Ok::<_, std::io::Error>((runtime, listener, addr))
            })();
            let (runtime, listener, addr) = match started {
                Ok(parts) => parts,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            let db_path = config
                .db_path
                .clone()
                .unwrap_or_else(|| fresh_db_path(addr.port()));
            let config = ServerConfig {
                db_path: Some(db_path.clone()),
                ..config
            };
            let _ = ready_tx.send(Ok((addr, db_path, config.clone())));
            runtime.block_on(async move {
                let stop = async {
                    let _ = rx.await;
                };
                if let Err(e) = serve(listener, config, stop).await {
                    eprintln!("engram-testserver stopped: {e}");
                }
            });
        });
        let (addr, db_path, config) = ready_rx
            .recv()
            .map_err(|_| std::io::Error::other("test server thread died"))??;
        Ok(TestServer {
            addr,
            db_path,
            config,
            shutdown: Some(tx),
            thread: Some(thread),
        })
    }

    /// The base URL, e.g. `http://127.0.0.1:41234`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The database file the server uses.
    pub fn db_path(&self) -> &std::path::Path {
        &self.db_path
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
        if !self.db_path.as_os_str().is_empty() {
            remove_db_files(&self.db_path);
        }
    }
}

/// Deletes a database file with its `-wal` and `-shm` companions (whichever exist).
pub fn remove_db_files(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.to_path_buf().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

fn fresh_db_path(port: u16) -> std::path::PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    std::env::temp_dir().join(format!(
        "engram-testserver-{}-{port}-{nanos}.db",
        std::process::id()
    ))
}

/// Serves the Hrana endpoints on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    config: ServerConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let config_path_given = config.db_path.is_some();
    let path = config
        .db_path
        .clone()
        .unwrap_or_else(|| fresh_db_path(listener.local_addr().map(|a| a.port()).unwrap_or(0)));
    let db = libsql::Builder::new_local(&path)
        .build()
        .await
        .map_err(|e| std::io::Error::other(format!("cannot open {}: {e}", path.display())))?;
    let state = Arc::new(AppState {
        db,
        config,
        streams: Mutex::new(HashMap::new()),
        next_stream: AtomicU64::new(1),
        next_baton: AtomicU64::new(1),
        pipeline_requests: AtomicU64::new(0),
    });
    let app = Router::new()
        .route("/", get(|| async { "engram-testserver" }))
        .route("/health", get(|| async { "ok" }))
        .route("/v2", get(|| async { "" }))
        .route("/v3", get(version_check))
        .route("/{version}/pipeline", post(pipeline))
        .route("/engram-test/stats", get(stats))
        .with_state(state)
        .layer(axum::middleware::from_fn(cors));
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await;
    // A database the server made up for itself is its own to delete; one it was given is not.
    if !config_path_given {
        remove_db_files(&path);
    }
    served
}

/// Lets browser pages on any origin call the server, as libSQL servers do.
async fn cors(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let preflight = request.method() == axum::http::Method::OPTIONS;
    let mut response = if preflight {
        StatusCode::NO_CONTENT.into_response()
    } else {
        next.run(request).await
    };
    let headers = response.headers_mut();
    for (name, value) in [
        ("access-control-allow-origin", "*"),
        ("access-control-allow-methods", "GET, POST, OPTIONS"),
        (
            "access-control-allow-headers",
            "authorization, content-type",
        ),
        ("access-control-max-age", "600"),
    ] {
        headers.insert(name, axum::http::HeaderValue::from_static(value));
    }
    response
}

async fn version_check(State(state): State<Arc<AppState>>) -> StatusCode {
    if state.config.v3 {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    }
}

async fn stats(State(state): State<Arc<AppState>>) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "pipelineRequests": state.pipeline_requests.load(Ordering::SeqCst),
    }))
}

fn error_response(status: StatusCode, message: &str) -> Response {
    (status, Json(serde_json::json!({ "error": message }))).into_response()
}

async fn pipeline(
    State(state): State<Arc<AppState>>,
    Path(version): Path<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let v3 = match version.as_str() {
        "v3" if state.config.v3 => true,
        "v2" => false,
        _ => return error_response(StatusCode::NOT_FOUND, "no such endpoint"),
    };
    state.pipeline_requests.fetch_add(1, Ordering::SeqCst);
    if let Some(expected) = &state.config.auth_token {
        let given = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if given != Some(expected.as_str()) {
            return error_response(StatusCode::UNAUTHORIZED, "invalid or missing auth token");
        }
    }
    let request: PipelineRequest = match serde_json::from_str(&body) {
        Ok(r) => r,
        Err(e) => {
            return error_response(StatusCode::BAD_REQUEST, &format!("malformed request: {e}"))
        }
    };
    let (stream_id, conn) = match take_stream(&state, request.baton.as_deref()) {
        Ok(found) => found,
        Err(response) => return response,
    };
    let mut results = Vec::with_capacity(request.requests.len());
    let mut open = true;
    for req in request.requests {
        if !open {
            results.push(StreamResult::Error {
                error: protocol_error("the stream is closed"),
            });
            continue;
        }
        if matches!(req, StreamRequest::Close) {
            open = false;
        }
        results.push(run_request(&conn, req, v3).await);
    }
    let baton = if open {
        let baton = format!(
            "b{stream_id}x{}",
            state.next_baton.fetch_add(1, Ordering::SeqCst)
        );
        lock(&state).insert(
            stream_id,
            Stream {
                conn,
                baton: baton.clone(),
                last_used: Instant::now(),
            },
        );
        Some(baton)
    } else {
        None
    };
    Json(PipelineResponse {
        baton,
        base_url: None,
        results,
    })
    .into_response()
}

fn lock(state: &AppState) -> std::sync::MutexGuard<'_, HashMap<u64, Stream>> {
    // A poisoned map only means another request panicked mid-insert; the data is still a
    // valid map.
    state.streams.lock().unwrap_or_else(|p| p.into_inner())
}

#[allow(clippy::result_large_err)]
fn take_stream(
    state: &AppState,
    baton: Option<&str>,
) -> Result<(u64, libsql::Connection), Response> {
    let mut streams = lock(state);
    streams.retain(|_, s| s.last_used.elapsed() < STREAM_IDLE_TIMEOUT);
    match baton {
        None => {
            drop(streams);
            let conn = state
                .db
                .connect()
                .map_err(|e| error_response(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()))?;
            let _ = conn.busy_timeout(Duration::from_secs(5));
            Ok((state.next_stream.fetch_add(1, Ordering::SeqCst), conn))
        }
        Some(baton) => {
            let id = baton
                .strip_prefix('b')
                .and_then(|rest| rest.split('x').next())
                .and_then(|id| id.parse::<u64>().ok());
            match id.and_then(|id| streams.remove(&id).map(|s| (id, s))) {
                Some((id, stream)) if stream.baton == baton => Ok((id, stream.conn)),
                Some((id, stream)) => {
                    // A stale baton must not close the stream for its rightful holder.
                    streams.insert(id, stream);
                    Err(error_response(StatusCode::BAD_REQUEST, "stale baton"))
                }
                None => Err(error_response(
                    StatusCode::BAD_REQUEST,
                    "unknown or expired baton",
                )),
            }
        }
    }
}

/// Serves `app` — a test double of some other service a test talks to (an embedding
/// provider, a rerank service) — on a free port of 127.0.0.1, on its own thread and runtime
/// for the life of the process, so callers may be inside any runtime (or none). Returns
/// the base URL, e.g. `http://127.0.0.1:41234`.
pub fn serve_router(app: axum::Router) -> std::io::Result<String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}", listener.local_addr()?);
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    std::thread::spawn(move || {
        runtime.block_on(async move {
            match tokio::net::TcpListener::from_std(listener) {
                Ok(listener) => {
                    if let Err(e) = axum::serve(listener, app).await {
                        eprintln!("test double stopped: {e}");
                    }
                }
                Err(e) => eprintln!("test double cannot listen: {e}"),
            }
        });
    });
    Ok(url)
}
