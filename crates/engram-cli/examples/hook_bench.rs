//! Hook latency as Claude Code's user feels it: the `engram` binary started once per event
//! with the payload on stdin, process start included, on a project holding 1K and 10K
//! memories.
//!
//! ```sh
//! cargo build --release -p engram-cli --bin engram
//! cargo run --release -p engram-cli --example hook_bench -- [--runs 50] [--sizes 1000,10000] [--model] [--helper]
//! ```
//!
//! `--helper` lets the hooks use the project's resident helper (started by the warm-up's
//! session start); without it every hook answers itself (`ENGRAM_HOOK_HELPER=off`). Each
//! event's first three runs are a warm-up and not counted. With `--model` the memories are
//! embedded first (`engram embed-pending`), so prompts and session starts rank densely.
//!
//! `--model` lets SessionStart and UserPromptSubmit use the bundled model (from
//! `ENGRAM_MODEL_DIR` or the default folder): without the helper, that is what a process
//! per prompt pays. Without it every event runs keyword-only.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use engram::{Engram, EngramConfig, Host, MemoryType, NewMemory};
use engram_libsql::LocalDatabase;
use serde_json::json;

struct Args {
    runs: usize,
    sizes: Vec<usize>,
    model: bool,
    helper: bool,
}

fn args() -> Args {
    let mut args = Args {
        runs: 50,
        sizes: vec![1_000, 10_000],
        model: false,
        helper: false,
    };
    let mut given = std::env::args().skip(1);
    while let Some(arg) = given.next() {
        match arg.as_str() {
            "--runs" => args.runs = given.next().and_then(|v| v.parse().ok()).unwrap_or(50),
            "--sizes" => {
                args.sizes = given
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .filter_map(|v| v.parse().ok())
                    .collect()
            }
            "--model" => args.model = true,
            "--helper" => args.helper = true,
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    args
}

/// The release `engram` beside this example.
fn engram_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("own path");
    let dir = exe.parent().and_then(Path::parent).expect("target dir");
    dir.join("engram")
}

const TOPICS: [&str; 8] = [
    "migrations must run before the integration tests",
    "the session cookie is set before login is called",
    "retry the flaky network test with a fresh port",
    "the cache key includes the tenant id",
    "timeouts are read from the environment at start",
    "the parser keeps byte offsets, not char offsets",
    "use the pool's connection inside a transaction",
    "config files are merged user over project",
];

/// A project of `n` memories, each about one of 200 files.
async fn project(root: &Path, n: usize) {
    std::fs::create_dir_all(root.join(".git")).expect("project");
    std::fs::create_dir_all(root.join(".engram")).expect("project");
    let db = LocalDatabase::open(&root.join(".engram/engram.db").to_string_lossy())
        .await
        .expect("database");
    let engram = Engram::open(&db, EngramConfig::default(), Host::native())
        .await
        .expect("engram");
    for i in 0..n {
        let mut memory = NewMemory::new(
            if i % 3 == 0 {
                MemoryType::Gotcha
            } else {
                MemoryType::Decision
            },
            format!(
                "{} (note {i} about module {})",
                TOPICS[i % TOPICS.len()],
                i % 37
            ),
        );
        memory.related_files = vec![format!("src/mod{}/file{}.py", i % 20, i % 200)];
        engram.remember(memory).await.expect("remember");
    }
}

fn payload(root: &Path, event: &str, i: usize) -> String {
    let file = root.join(format!("src/mod{}/file{}.py", i % 20, i % 200));
    let mut payload = json!({
        "hook_event_name": event,
        "session_id": format!("bench-{}", i % 5),
        "cwd": root,
        "transcript_path": "/nonexistent.jsonl",
    });
    let extra = match event {
        "SessionStart" => json!({"source": "startup"}),
        "UserPromptSubmit" => json!({"prompt": TOPICS[i % TOPICS.len()]}),
        "PreToolUse" => json!({"tool_name": "Read", "tool_input": {"file_path": file}}),
        "PostToolUse" => json!({"tool_name": "Read", "tool_input": {"file_path": file},
            "tool_response": {"type": "text", "file": {"filePath": file, "content": "x = 1\n".repeat(50)}},
            "tool_use_id": format!("t{i}")}),
        _ => json!({}),
    };
    if let (Some(p), Some(e)) = (payload.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    payload.to_string()
}

fn run_once(binary: &Path, root: &Path, args: &Args, body: &str) -> f64 {
    let start = Instant::now();
    let mut command = Command::new(binary);
    command.env("ENGRAM_HOOK_HELPER", if args.helper { "on" } else { "off" });
    let model = args.model;
    if !model {
        command.arg("--no-embed");
    }
    let mut child = command
        .arg("hook")
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("engram runs");
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(body.as_bytes());
    }
    let _ = child.wait();
    start.elapsed().as_secs_f64() * 1e3
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn main() {
    let args = args();
    let binary = engram_binary();
    assert!(
        binary.exists(),
        "build it first: cargo build --release -p engram-cli --bin engram"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for &size in &args.sizes {
        let root =
            std::env::temp_dir().join(format!("engram-hook-bench-{size}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let started = Instant::now();
        runtime.block_on(project(&root, size));
        eprintln!(
            "{size} memories written in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        if args.model {
            let started = Instant::now();
            let embedded = Command::new(&binary)
                .arg("--db")
                .arg(root.join(".engram/engram.db"))
                .args(["--json", "embed-pending", "--batch", "256"])
                .stdout(Stdio::null())
                .status()
                .expect("engram embed-pending runs");
            assert!(embedded.success(), "embed-pending failed");
            eprintln!("embedded in {:.1} s", started.elapsed().as_secs_f64());
        }
        for event in [
            "SessionStart",
            "PreToolUse",
            "PostToolUse",
            "UserPromptSubmit",
            "Stop",
        ] {
            for i in 0..3 {
                run_once(&binary, &root, &args, &payload(&root, event, 1000 + i));
            }
            let mut times: Vec<f64> = (0..args.runs)
                .map(|i| run_once(&binary, &root, &args, &payload(&root, event, i)))
                .collect();
            times.sort_by(f64::total_cmp);
            println!(
                "{size:>6} memories  {event:<17} p50 {:>7.1} ms  p95 {:>7.1} ms  ({} runs{})",
                percentile(&times, 0.5),
                percentile(&times, 0.95),
                args.runs,
                match (args.model, args.helper) {
                    (true, true) => ", model, helper",
                    (true, false) => ", model",
                    (false, true) => ", keyword only, helper",
                    (false, false) => ", keyword only",
                }
            );
        }
        let log = std::fs::read_to_string(root.join(".engram/hooks.log")).unwrap_or_default();
        if !log.is_empty() {
            println!("hook errors:\n{log}");
        }
        let _ = std::fs::remove_dir_all(&root);
    }
}
