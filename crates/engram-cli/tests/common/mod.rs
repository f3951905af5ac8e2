//! The `engram` binary run on a database file, for the test binaries that shell out to it.
#![allow(dead_code)]

pub mod hook;

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `engram --db DB --no-embed ARGS` with `stdin` (or nothing) on its standard input.
pub fn engram(db: &std::path::Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_engram"))
        .arg("--db")
        .arg(db)
        .arg("--no-embed")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("engram runs");
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.unwrap_or_default().as_bytes())
        .expect("stdin written");
    drop(input);
    child.wait_with_output().expect("engram exits")
}

/// The standard output of a run that must have succeeded.
pub fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The rows `sql` reads from the database at `db`, with `params`.
pub fn rows(
    db: &std::path::Path,
    sql: &str,
    params: Vec<engram_store::Value>,
) -> Vec<Vec<engram_store::Value>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        use engram_store::Database as _;
        let db = engram_libsql::LocalDatabase::open(&db.to_string_lossy())
            .await
            .expect("open");
        let results = db
            .pipeline(&[engram_store::Statement::with_params(sql, params)])
            .await
            .expect("read");
        results.into_iter().next().expect("one").expect("ok").rows
    })
}

/// Every memory's content in the database at `db`, sorted.
pub fn memory_contents(db: &std::path::Path) -> Vec<String> {
    rows(
        db,
        "SELECT content FROM memories ORDER BY content",
        Vec::new(),
    )
    .iter()
    .map(|r| r[0].as_text("content").expect("text").to_owned())
    .collect()
}
