//! `engram search-many`: several searches from a JSON array on stdin or in a file, each
//! answered as `engram search` answers it alone, and a bad entry refused by its index.

mod common;

use std::process::Output;

use common::engram;
use serde_json::Value;

fn json(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON output")
}

/// The ids of a response's hits.
fn ids(response: &Value) -> Vec<String> {
    response["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .map(|h| h["memory"]["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_batch_answers_each_query_as_search_does_and_names_a_bad_entry() {
    let dir = std::env::temp_dir().join(format!("engram-cli-many-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("e.db");
    for (kind, content) in [
        ("gotcha", "the migration runner needs DATABASE_URL exported"),
        ("decision", "we pin tokio to one minor version per release"),
        (
            "gotcha",
            "flaky snapshot tests come from unsorted map output",
        ),
    ] {
        let added = engram(&db, &["remember", "--type", kind, content], None);
        assert!(added.status.success(), "{added:?}");
    }

    let batch = r#"["migration DATABASE_URL", {"text": "snapshot tests", "types": ["gotcha"], "limit": 2}, "tokio version"]"#;
    let answers = json(&engram(&db, &["--json", "search-many", "-"], Some(batch)));
    let answers = answers.as_array().expect("an array of responses");
    assert_eq!(answers.len(), 3);
    for (answer, alone) in answers.iter().zip([
        vec!["--json", "search", "migration DATABASE_URL"],
        vec![
            "--json",
            "search",
            "snapshot tests",
            "--type",
            "gotcha",
            "-n",
            "2",
        ],
        vec!["--json", "search", "tokio version"],
    ]) {
        let alone = json(&engram(&db, &alone, None));
        assert!(!ids(answer).is_empty(), "{answer}");
        assert_eq!(ids(answer), ids(&alone));
    }

    let file = dir.join("queries.json");
    std::fs::write(&file, r#"["snapshot tests"]"#).unwrap();
    let text = engram(&db, &["search-many", file.to_str().unwrap()], None);
    let printed = String::from_utf8_lossy(&text.stdout);
    assert!(printed.starts_with("[0] snapshot tests\n"), "{printed}");
    assert!(printed.contains("unsorted map output"), "{printed}");

    let bad = engram(
        &db,
        &["search-many", "-"],
        Some(r#"["ok", {"text": "x", "limit": 0}]"#),
    );
    assert!(!bad.status.success());
    let error = String::from_utf8_lossy(&bad.stderr);
    assert!(error.contains("[1].limit"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}
