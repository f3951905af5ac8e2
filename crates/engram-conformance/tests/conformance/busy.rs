//! A database file locked by another process: the write waits out the lock's timeout, is
//! reported `unavailable` (a passing failure, not a statement error) and is stored by a
//! retry once the lock is gone.

use std::time::Duration;

use engram::{Capabilities, Engram, EngramOptions, ErrorCode, Host, MemoryType, NewMemory};
use engram_libsql::LocalDatabase;
use engram_store::{Database, Statement};

use crate::common::temp_db;

/// Longer than the connection's 5 s busy timeout, so the first attempt meets the lock.
const LOCK_HELD: Duration = Duration::from_secs(7);

/// Holds an exclusive lock on `path` from another connection for [`LOCK_HELD`], on a thread
/// of its own (the waiting write blocks this one).
fn hold_lock(path: String) -> std::thread::JoinHandle<()> {
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async move {
            let holder = LocalDatabase::open(&path).await.expect("second connection");
            holder
                .pipeline(&[Statement::new("BEGIN EXCLUSIVE")])
                .await
                .expect("lock");
            locked_tx.send(()).expect("test waits");
            std::thread::sleep(LOCK_HELD);
            holder
                .pipeline(&[Statement::new("COMMIT")])
                .await
                .expect("unlock");
        });
    });
    locked_rx.recv().expect("the lock is taken");
    thread
}

async fn open(db: &LocalDatabase, delays: Vec<u32>, buffer: u32) -> Engram<&LocalDatabase> {
    let options = EngramOptions {
        local: true,
        retry_delays_ms: Some(delays),
        write_buffer: Some(buffer),
        ..EngramOptions::default()
    };
    Engram::open_with(db, &options, Capabilities::new(Host::native()))
        .await
        .expect("open")
}

#[tokio::test]
async fn a_locked_file_is_a_passing_failure_and_a_retry_stores_the_write() {
    let path = temp_db("busy");
    let db = LocalDatabase::open(path.to_str().expect("utf-8"))
        .await
        .expect("open");
    let once = open(&db, Vec::new(), 0).await;
    let holder = hold_lock(path.to_str().expect("utf-8").to_owned());
    let error = once
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "written while the file is locked",
        ))
        .await
        .expect_err("one attempt meets the lock");
    assert_eq!(error.code(), ErrorCode::Unavailable, "{error}");
    assert!(once.write_status().degraded);
    holder.join().expect("lock holder");

    let retrying = open(&db, vec![3_000], 50).await;
    let holder = hold_lock(path.to_str().expect("utf-8").to_owned());
    let stored = retrying
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "stored once the lock is gone",
        ))
        .await
        .expect("the retry after the lock is stored");
    holder.join().expect("lock holder");
    assert!(!stored.pending, "{stored:?}");
    assert!(retrying.get(&stored.id).await.expect("get").is_some());
    assert!(!retrying.write_status().degraded);
    drop((once, retrying));
    drop(db);
    drop(path);
}
