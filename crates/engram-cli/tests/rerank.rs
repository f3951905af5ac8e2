//! `engram search` with `--rerank-provider`: the binary, a database file, and a real local
//! HTTP server standing in for a text-embeddings-inference rerank service (it scores a
//! document by how many of the query's words it contains).

use std::process::Command;

use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};

fn start_service() -> String {
    async fn rerank(Json(body): Json<Value>) -> Json<Value> {
        let query = body["query"].as_str().unwrap_or_default().to_lowercase();
        let scored: Vec<Value> = body["texts"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(index, text)| {
                let text = text.as_str().unwrap_or_default().to_lowercase();
                let score = query
                    .split_whitespace()
                    .filter(|w| text.contains(*w))
                    .count();
                json!({"index": index, "score": score})
            })
            .collect();
        Json(Value::Array(scored))
    }
    let app = Router::new().route("/rerank", post(rerank));
    engram_testserver::serve_router(app).expect("service starts")
}

fn engram(db: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_engram"))
        .arg("--db")
        .arg(db)
        .arg("--no-embed")
        .args(args)
        .env_remove("ENGRAM_RERANK_PROVIDER")
        .output()
        .expect("engram runs")
}

#[test]
fn search_reranks_through_the_service_and_reports_a_bad_provider() {
    let dir = std::env::temp_dir().join(format!("engram-cli-rerank-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("e.db");
    for content in [
        "staging staging staging is reset every night",
        "deploy to staging before each release",
        "release notes are generated from commit messages",
    ] {
        assert!(engram(&db, &["remember", content]).status.success());
    }
    let url = start_service();
    let query = "deploy release staging";
    let output = engram(
        &db,
        &[
            "--json",
            "--rerank-provider",
            "tei",
            "--rerank-url",
            &url,
            "search",
            query,
        ],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let response: Value = serde_json::from_slice(&output.stdout).unwrap();
    let hits = response["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 3);
    let scores: Vec<f64> = hits
        .iter()
        .map(|h| h["breakdown"]["rerank"].as_f64().expect("a rerank score"))
        .collect();
    assert_eq!(scores, [3.0, 1.0, 1.0]);
    assert_eq!(
        hits[0]["memory"]["content"],
        "deploy to staging before each release"
    );

    let output = engram(
        &db,
        &[
            "--rerank-provider",
            "bm25",
            "--rerank-url",
            &url,
            "search",
            query,
        ],
    );
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("invalid --rerank-provider \"bm25\""));
    let output = engram(
        &db,
        &[
            "--rerank-provider",
            "cohere",
            "--rerank-url",
            &url,
            "search",
            query,
        ],
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("--rerank-model is required"));
    let _ = std::fs::remove_dir_all(&dir);
}
