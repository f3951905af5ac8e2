//! Writes through a proxy that fails a large share of requests and a server that is killed
//! and restarted under them: every write acknowledged is stored once, every write reported
//! pending is stored once after the flush, every write reported failed is not stored, and a
//! caller's retry with its idempotency key stores it exactly once.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use engram::{Capabilities, Engram, EngramOptions, Host, MemoryType, NewMemory};
use engram_hrana::{HranaClient, ReqwestTransport};
use engram_store::{Database, Statement, Value};
use engram_testserver::{ServerConfig, TestServer};

use crate::common::nonce;
use crate::fault_proxy::FaultProxy;

const TOKEN: &str = "fault-token-0123456789";
/// Writes in the run; with the retries and flushes they make about three times as many
/// requests, half of them faulted.
const WRITES: usize = 1_200;
const FAULT_RATE_PER_MILLE: u64 = 500;

/// Kills and restarts the server on its own thread until told to stop.
struct Restarter {
    stop: Arc<AtomicBool>,
    restarts: Arc<AtomicU64>,
    thread: std::thread::JoinHandle<TestServer>,
}

impl Restarter {
    fn spawn(mut server: TestServer, seed: u64) -> Restarter {
        let stop = Arc::new(AtomicBool::new(false));
        let restarts = Arc::new(AtomicU64::new(0));
        let (theirs, count) = (Arc::clone(&stop), Arc::clone(&restarts));
        let thread = std::thread::spawn(move || {
            let mut state = seed;
            let mut next = move |range: u64| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (state >> 33) % range
            };
            while !theirs.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(300 + next(500)));
                server.stop();
                std::thread::sleep(Duration::from_millis(30 + next(200)));
                let mut attempts = 0;
                while let Err(e) = server.restart() {
                    attempts += 1;
                    assert!(attempts < 50, "the server does not come back: {e}");
                    std::thread::sleep(Duration::from_millis(20));
                }
                count.fetch_add(1, Ordering::SeqCst);
            }
            server
        });
        Restarter {
            stop,
            restarts,
            thread,
        }
    }

    fn finish(self) -> (TestServer, u64) {
        self.stop.store(true, Ordering::SeqCst);
        let server = self.thread.join().expect("the restarter thread");
        (server, self.restarts.load(Ordering::SeqCst))
    }
}

fn memory(i: usize) -> NewMemory {
    let mut memory = NewMemory::new(
        MemoryType::Gotcha,
        format!("fault suite memory number {i} survives the network"),
    );
    // Half the writes carry a key of the caller's, as a hook that may run twice would.
    if i % 2 == 0 {
        memory.idempotency_key = Some(format!("fault-{i}"));
    }
    memory
}

fn number_of(content: &str) -> Option<usize> {
    content
        .strip_prefix("fault suite memory number ")?
        .split(' ')
        .next()?
        .parse()
        .ok()
}

/// How many times each write's memory is stored, read straight from the server.
async fn stored_counts(db: &impl Database, project: &str) -> (HashMap<usize, i64>, i64, i64) {
    let results = db
        .pipeline(&[
            Statement::with_params(
                "SELECT content, count(*) FROM memories WHERE project_id = ?1 GROUP BY content",
                vec![Value::from(project)],
            ),
            Statement::with_params(
                "SELECT count(*) FROM memories WHERE project_id = ?1",
                vec![Value::from(project)],
            ),
            Statement::with_params(
                "SELECT count(*) FROM memories_fts WHERE memory_id IN (SELECT id FROM memories WHERE project_id = ?1)",
                vec![Value::from(project)],
            ),
        ])
        .await
        .expect("read the stored memories");
    let mut rows = results.into_iter().map(|r| r.expect("statement"));
    let by_content = rows.next().expect("counts");
    let mut counts = HashMap::new();
    for row in &by_content.rows {
        let content = row[0].as_text("content").expect("text");
        let n = row[1].as_i64("count").expect("count");
        let i = number_of(content).unwrap_or_else(|| panic!("unexpected memory {content:?}"));
        counts.insert(i, n);
    }
    let single = |rows: Option<engram_store::Rows>| {
        rows.and_then(|r| r.rows.first().and_then(|row| row[0].as_i64("n").ok()))
            .expect("a count")
    };
    let memories = single(rows.next());
    let keyword_rows = single(rows.next());
    (counts, memories, keyword_rows)
}

#[tokio::test(flavor = "current_thread")]
async fn writes_through_faults_and_restarts_are_stored_once_or_reported() {
    let server = TestServer::start(ServerConfig {
        auth_token: Some(TOKEN.into()),
        ..ServerConfig::default()
    })
    .expect("test server");
    let upstream: SocketAddr = server
        .url()
        .trim_start_matches("http://")
        .parse()
        .expect("address");
    let direct = HranaClient::new(ReqwestTransport::new(), &server.url(), Some(TOKEN.into()));
    let proxy = FaultProxy::start(upstream, 0, 0x5EED_FA17);
    let project = format!("faults-{}", nonce());
    let options = EngramOptions {
        url: Some(proxy.url()),
        auth_token: Some(TOKEN.into()),
        project_id: Some(project.clone()),
        retry_delays_ms: Some(vec![10, 20, 40, 80]),
        write_buffer: Some(50),
        ..EngramOptions::default()
    };
    let client = HranaClient::new(ReqwestTransport::new(), &proxy.url(), Some(TOKEN.into()));
    let engram = Engram::open_with(&client, &options, Capabilities::new(Host::native()))
        .await
        .expect("open before the faults start");

    proxy.set_rate_per_mille(FAULT_RATE_PER_MILLE);
    let restarter = Restarter::spawn(server, 0xC0FFEE);
    let mut acknowledged = Vec::new();
    let mut pending = Vec::new();
    let mut failed: BTreeMap<&'static str, Vec<usize>> = BTreeMap::new();
    let mut ids = HashMap::new();
    for i in 0..WRITES {
        match engram.remember(memory(i)).await {
            Ok(r) => {
                assert!(
                    !r.replayed,
                    "write {i} is new, yet was answered as a replay"
                );
                ids.insert(i, r.id.clone());
                if r.pending {
                    pending.push(i);
                } else {
                    acknowledged.push(i);
                }
            }
            Err(e) => failed.entry(e.code().as_str()).or_default().push(i),
        }
    }
    let (server, restarts) = restarter.finish();
    proxy.set_rate_per_mille(0);
    let mut status = engram.flush_writes().await;
    for _ in 0..20 {
        if status.pending == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        status = engram.flush_writes().await;
    }
    assert_eq!(
        status.pending, 0,
        "the buffer drains once the server is back: {status:?}"
    );
    assert_eq!(
        status.dropped, 0,
        "no buffered write was refused: {status:?}"
    );
    assert!(!status.degraded, "{status:?}");

    let (counts, memories, keyword_rows) = stored_counts(&direct, &project).await;
    let stored = |i: &usize| counts.get(i).copied().unwrap_or(0);
    let lost: Vec<usize> = acknowledged
        .iter()
        .copied()
        .filter(|i| stored(i) != 1)
        .collect();
    assert!(
        lost.is_empty(),
        "acknowledged writes not stored exactly once: {lost:?}"
    );
    let lost: Vec<usize> = pending.iter().copied().filter(|i| stored(i) != 1).collect();
    assert!(
        lost.is_empty(),
        "pending writes not stored exactly once: {lost:?}"
    );
    for (code, writes) in &failed {
        assert!(
            ["buffer_full", "storage_error"].contains(code),
            "writes failed with {code}: {writes:?}"
        );
        let applied: Vec<usize> = writes.iter().copied().filter(|i| stored(i) != 0).collect();
        assert!(
            applied.is_empty(),
            "writes reported {code} were stored: {applied:?}"
        );
    }
    let doubled: Vec<(&usize, &i64)> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(doubled.is_empty(), "stored twice: {doubled:?}");
    assert_eq!(memories, keyword_rows, "every memory has its keyword row");

    // A caller retries what failed, and repeats some of what succeeded, with its keys.
    let retried: Vec<usize> = failed
        .values()
        .flatten()
        .copied()
        .filter(|i| i % 2 == 0)
        .collect();
    for &i in &retried {
        let r = engram
            .remember(memory(i))
            .await
            .expect("the retry is stored");
        assert!(!r.pending && !r.replayed, "{r:?}");
    }
    let repeated: Vec<usize> = acknowledged
        .iter()
        .copied()
        .filter(|i| i % 2 == 0)
        .take(25)
        .collect();
    for &i in &repeated {
        let r = engram
            .remember(memory(i))
            .await
            .expect("the repeat is answered");
        assert!(r.replayed, "a repeated key is a replay: {r:?}");
        assert_eq!(
            Some(&r.id),
            ids.get(&i),
            "a replay answers with the first id"
        );
    }
    let (counts, _, _) = stored_counts(&direct, &project).await;
    for i in retried.iter().chain(&repeated) {
        assert_eq!(
            counts.get(i).copied(),
            Some(1),
            "write {i} after the caller's retry"
        );
    }

    let faults: u64 = proxy.counts().iter().map(|(_, n)| n).sum();
    eprintln!(
        "faults: {writes} writes, {acked} acknowledged, {pending} pending then flushed, \
         failed {failed:?}; {faults} faults injected {counts:?}, {restarts} server restarts, \
         {refused} requests refused while down; {retried} caller retries, {repeated} repeats",
        writes = WRITES,
        acked = acknowledged.len(),
        pending = pending.len(),
        failed = failed
            .iter()
            .map(|(c, w)| (*c, w.len()))
            .collect::<Vec<_>>(),
        counts = proxy.counts(),
        refused = proxy.refused(),
        retried = retried.len(),
        repeated = repeated.len(),
    );
    assert!(faults >= 1_000, "only {faults} faults were injected");
    assert!(restarts >= 3, "only {restarts} restarts");
    drop(server);
}
