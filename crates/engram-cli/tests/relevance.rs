//! Relevance a person can read: `engram search` drops what is clearly unrelated and
//! `--auto` injects only what clears its bar, with the bundled model and keyword-only.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

/// Memories about other things than the queries below, and one about each query.
const STORE: [(&str, &str); 7] = [
    ("preference", "Use pnpm not npm in this repository"),
    (
        "decision",
        "Deploys go through the staging branch before main",
    ),
    (
        "gotcha",
        "The billing API returns timestamps in UTC, not local time",
    ),
    (
        "pattern",
        "React components live in src/components, one per file",
    ),
    (
        "decision",
        "Feature flags are read from LaunchDarkly at startup",
    ),
    (
        "gotcha",
        "The integration tests are flaky when the Redis container starts slowly; retry them once",
    ),
    (
        "error_pattern",
        "SQLite says database is locked when two processes write at once; open it in WAL mode",
    ),
];

/// Runs `engram --db DB --json ARGS`, with the bundled model unless `keyword_only`.
fn run(db: &Path, keyword_only: bool, args: &[&str]) -> Value {
    let mut command = Command::new(env!("CARGO_BIN_EXE_engram"));
    command.arg("--db").arg(db).arg("--json");
    if keyword_only {
        command.arg("--no-embed");
    } else {
        command.env("ENGRAM_MODEL_DIR", common::hook::model_dir());
    }
    let output: Output = command.args(args).output().expect("engram runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON output")
}

fn contents(response: &Value) -> Vec<String> {
    response["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["memory"]["content"].as_str().expect("content").to_owned())
        .collect()
}

fn store(name: &str, keyword_only: bool) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("engram-relevance-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = dir.join("e.db");
    for (kind, content) in STORE {
        run(&db, keyword_only, &["remember", "--type", kind, content]);
    }
    db
}

#[test]
fn search_and_auto_keep_what_is_related_and_drop_what_is_not() {
    for keyword_only in [false, true] {
        let db = store(if keyword_only { "keyword" } else { "model" }, keyword_only);
        let mode = if keyword_only {
            "keyword only"
        } else {
            "with the model"
        };

        let flaky = run(&db, keyword_only, &["search", "flaky tests"]);
        assert_eq!(
            contents(&flaky),
            [STORE[5].1],
            "{mode}: only the memory about flaky tests: {flaky}"
        );
        let relevance = flaky["hits"][0]["breakdown"]["relevance"]
            .as_f64()
            .expect("a relevance");
        assert!((0.0..=1.0).contains(&relevance), "{flaky}");

        let locked = run(
            &db,
            keyword_only,
            &["search", "--auto", "database is locked"],
        );
        assert_eq!(contents(&locked), [STORE[6].1], "{mode}: {locked}");

        // Nothing in the store is about either of these.
        for query in [
            "kubernetes pod eviction",
            "how do we rotate the signing keys",
        ] {
            let search = run(&db, keyword_only, &["search", query]);
            assert_eq!(contents(&search), Vec::<String>::new(), "{mode}: {search}");
            // With the model the dense path always finds candidates, and says why none
            // was kept; keyword-only, no word of these queries is in the store.
            if !keyword_only {
                assert!(
                    search["emptyReason"]
                        .as_str()
                        .is_some_and(|r| r.contains("nothing related")),
                    "{mode}: {search}"
                );
            }
            let auto = run(&db, keyword_only, &["search", "--auto", query]);
            assert_eq!(contents(&auto), Vec::<String>::new(), "{mode}: {auto}");
        }
        let _ = std::fs::remove_dir_all(db.parent().expect("a folder"));
    }
}
