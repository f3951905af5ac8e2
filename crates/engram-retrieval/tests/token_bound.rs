//! The token estimate never undercounts the real cl100k and o200k BPE tokenizers on the
//! evaluation data: code (CoSQA's 6,267 functions), issue reports (SWE-bench), and agent
//! transcripts (every string in the Claude Code sessions). Skips, with a message, when the
//! data is absent.

use std::path::{Path, PathBuf};

use engram_retrieval::tokens::estimate;
use serde_json::Value;

fn eval_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("ENGRAM_EVAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval"));
    dir.is_dir().then_some(dir)
}

fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) if !s.is_empty() => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

fn texts(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(text) = std::fs::read_to_string(dir.join("cosqa/code_idx_map.txt")) {
        if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&text) {
            out.extend(map.keys().cloned());
        }
    }
    if let Ok(text) = std::fs::read_to_string(dir.join("cosqa/cosqa-retrieval-dev-500.json")) {
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            for q in v.as_array().into_iter().flatten() {
                if let Some(doc) = q["doc"].as_str() {
                    out.push(doc.to_owned());
                }
            }
        }
    }
    if let Ok(text) = std::fs::read_to_string(dir.join("swebench/dev_instances.jsonl")) {
        for line in text.lines() {
            if let Ok(v) = serde_json::from_str::<Value>(line) {
                if let Some(p) = v["problem_statement"].as_str() {
                    out.push(p.to_owned());
                }
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir(dir.join("transcripts")) {
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        files.sort();
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            for line in text.lines() {
                if let Ok(v) = serde_json::from_str::<Value>(line) {
                    strings(&v, &mut out);
                }
            }
        }
    }
    out
}

#[test]
fn the_estimate_never_undercounts_real_bpe_tokenizers() {
    let Some(dir) = eval_dir() else {
        eprintln!("skipping: no evaluation data (set ENGRAM_EVAL_DIR)");
        return;
    };
    let texts = texts(&dir);
    assert!(
        texts.len() > 6000,
        "expected the eval texts, found {}",
        texts.len()
    );
    let tokenizers = [
        (
            "cl100k",
            tiktoken_rs::cl100k_base().expect("cl100k vocabulary"),
        ),
        (
            "o200k",
            tiktoken_rs::o200k_base().expect("o200k vocabulary"),
        ),
    ];
    for (name, bpe) in &tokenizers {
        let (mut estimated, mut real, mut tightest) = (0usize, 0usize, f64::INFINITY);
        let (mut ratios, mut loosest) = (Vec::new(), 0f64);
        for text in &texts {
            let tokens = bpe.encode_ordinary(text).len();
            let guess = estimate(text);
            assert!(
                guess >= tokens,
                "{name}: estimate {guess} < {tokens} real tokens for {:?}",
                text.chars().take(200).collect::<String>()
            );
            estimated += guess;
            real += tokens;
            if tokens > 0 {
                let ratio = guess as f64 / tokens as f64;
                tightest = tightest.min(ratio);
                loosest = loosest.max(ratio);
                ratios.push(ratio);
            }
        }
        let mean = ratios.iter().sum::<f64>() / ratios.len().max(1) as f64;
        eprintln!(
            "{name}: {} texts, {real} tokens, estimate {estimated} ({:.2}× overall; per text \
             mean {mean:.2}×, tightest {tightest:.2}×, loosest {loosest:.2}×)",
            texts.len(),
            estimated as f64 / real as f64,
        );
    }
}
