//! Human and JSON output.

use engram::{Memory, Remembered, SearchResponse};
use serde_json::json;

use crate::CliError;

pub fn remembered(stored: &Remembered, json: bool) {
    if json {
        println!("{}", serde_json::to_string(stored).unwrap_or_default());
        return;
    }
    println!("remembered {}", stored.id);
    if !stored.redacted.is_empty() {
        println!("  redacted secrets: {}", stored.redacted.join(", "));
    }
    if stored.secret_scan_skipped {
        println!("  warning: the secret scanner was unavailable; memory flagged for audit");
    }
}

pub fn search(response: &SearchResponse, json: bool) {
    if json {
        println!("{}", serde_json::to_string(response).unwrap_or_default());
        return;
    }
    if response.hits.is_empty() {
        println!("  no memories matched");
    }
    for (i, hit) in response.hits.iter().enumerate() {
        println!(
            "  {}. [{}] {} (score {:.3}, id {})",
            i + 1,
            hit.memory.memory_type,
            hit.memory.content,
            hit.score,
            &hit.memory.id
        );
        if !hit.memory.related_files.is_empty() {
            println!("     files: {}", hit.memory.related_files.join(", "));
        }
    }
}

pub fn memory(memory: &Memory, json: bool) {
    if json {
        println!("{}", serde_json::to_string(memory).unwrap_or_default());
        return;
    }
    println!(
        "{} [{}] confidence {:.2}",
        memory.id, memory.memory_type, memory.confidence
    );
    println!("{}", memory.content);
    if !memory.tags.is_empty() {
        println!("tags: {}", memory.tags.join(", "));
    }
    if !memory.related_files.is_empty() {
        println!("files: {}", memory.related_files.join(", "));
    }
    println!("created {} by {}", memory.created_at, memory.source);
}

pub fn forgotten(id: &str, json: bool) {
    if json {
        println!("{}", json!({ "forgotten": id }));
    } else {
        println!("forgot {id}");
    }
}

pub fn error(error: &CliError, json: bool) {
    let (code, message, violations) = match error {
        CliError::Engram(e) => (e.code(), e.to_string(), e.violations().to_vec()),
        CliError::NotFound(id) => ("not_found", format!("no memory with id {id}"), Vec::new()),
        CliError::Usage(m) => ("usage", m.clone(), Vec::new()),
    };
    if json {
        eprintln!(
            "{}",
            json!({ "error": { "code": code, "message": message, "violations": violations } })
        );
    } else {
        eprintln!("error: {message}");
    }
}

pub fn progress(progress: &engram::EmbedProgress, json: bool) {
    if json {
        println!("{}", serde_json::to_string(progress).unwrap_or_default());
    } else {
        println!(
            "embedded {}; {} remaining",
            progress.embedded, progress.remaining
        );
    }
}
