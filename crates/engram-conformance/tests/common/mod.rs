//! Helpers shared by the conformance test binaries.
#![allow(dead_code)]

use std::cell::Cell;
use std::path::{Path, PathBuf};

use engram_hrana::{HttpResponse, HttpTransport, ReqwestTransport};

/// The cross-host API vectors.
pub const API_VECTORS: &str = include_str!("../../../../tests/vectors/api.json");

/// A fresh database path in the temp folder, deleted with its `-wal`, `-shm` and
/// `-journal` companions when the guard drops. Declare it before the database that uses it,
/// so that the database closes first.
pub fn temp_db(name: &str) -> TempDb {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    TempDb(std::env::temp_dir().join(format!("engram-{name}-{}-{nanos}.db", std::process::id())))
}

/// A database path that removes its files on drop (see [`temp_db`]).
pub struct TempDb(PathBuf);

impl std::ops::Deref for TempDb {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut file = self.0.clone().into_os_string();
            file.push(suffix);
            let _ = std::fs::remove_file(file);
        }
    }
}

/// The real reqwest transport, counting the requests that pass through it.
#[derive(Default)]
pub struct CountingTransport {
    pub inner: ReqwestTransport,
    pub requests: Cell<usize>,
}

impl HttpTransport for CountingTransport {
    async fn post_json(
        &self,
        url: &str,
        bearer: Option<&str>,
        body: String,
    ) -> Result<HttpResponse, String> {
        self.requests.set(self.requests.get() + 1);
        self.inner.post_json(url, bearer, body).await
    }
}

/// A unique suffix for project ids and table names.
pub fn nonce() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{}x{nanos}", std::process::id())
}

/// An engram over `db` for `project`, on the native host, without an embedder.
pub async fn open_project<D: engram::Database>(db: D, project: &str) -> engram::Engram<D> {
    let config = engram::EngramConfig {
        project_id: project.to_owned(),
    };
    engram::Engram::open(db, config, engram::Host::native())
        .await
        .expect("open")
}

/// Fake embedder standing in for the host's model: one bucket per distinct word of more
/// than three letters, normalized.
pub struct FakeWordEmbedder;

impl engram::Embed for FakeWordEmbedder {
    fn model_id(&self) -> &str {
        "fake-words-64"
    }
    fn dims(&self) -> usize {
        64
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> engram::EmbedFuture<'a> {
        Box::pin(async move {
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v = vec![0f32; 64];
                    for w in t
                        .split(|c: char| !c.is_alphanumeric())
                        .filter(|w| w.len() > 3)
                    {
                        let h = w
                            .to_lowercase()
                            .bytes()
                            .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
                        v[(h % 64) as usize] += 1.0;
                    }
                    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
                    v.iter().map(|x| x / n).collect()
                })
                .collect())
        })
    }
}

/// Runs the async `scenario(db)` as two tests: `$file` on an embedded libSQL file and
/// `$http` on the test server over HTTP.
#[allow(unused_macros)]
macro_rules! on_a_file_and_over_http {
    ($scenario:ident, $file:ident, $http:ident) => {
        #[tokio::test]
        async fn $file() {
            let path = crate::common::temp_db(stringify!($file));
            let db = engram_libsql::LocalDatabase::open(path.to_str().unwrap())
                .await
                .unwrap();
            $scenario(&db).await;
        }

        #[tokio::test]
        async fn $http() {
            let server =
                engram_testserver::TestServer::start(engram_testserver::ServerConfig::default())
                    .expect("test server starts");
            let db = engram_hrana::HranaClient::new(
                engram_hrana::ReqwestTransport::new(),
                &server.url(),
                None,
            );
            $scenario(&db).await;
        }
    };
}

/// A clock that stands still, so decay is the same for every search of a test: two
/// searches compared to the bit must not see their memories a millisecond older.
pub struct StillClock;

impl engram::Clock for StillClock {
    fn now_millis(&self) -> i64 {
        1_800_000_000_000
    }
}
