//! Benchmark: microseconds per observed event and per finalize (pure, no database) over every
//! recording in the evaluation data. `cargo run --release -p engram-observer --example
//! observe_bench [EVAL_DIR]`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use engram_observer::{transcript, Outcome, PathNormalizer, Prior, Scratchpad, SessionKind};

fn recordings(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        if path.is_dir() {
            recordings(&path, out);
        } else if name.ends_with(".jsonl") || name.ends_with(".traj.json") {
            out.push(path);
        }
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted
        .get(((sorted.len() as f64 - 1.0) * p).round() as usize)
        .copied()
        .unwrap_or(0.0)
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("ENGRAM_EVAL_DIR").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("../shared/eval"));
    let mut files = Vec::new();
    recordings(&dir.join("trajectories"), &mut files);
    recordings(&dir.join("transcripts"), &mut files);
    files.sort();
    if files.is_empty() {
        println!("skipping: no recordings under {}", dir.display());
        return;
    }
    let sessions: Vec<transcript::Session> = files
        .iter()
        .filter_map(|f| transcript::parse(&std::fs::read_to_string(f).ok()?).ok())
        .collect();
    // Events as hosts send them: JSON text, parsed per event.
    let json_events: Vec<Vec<String>> = sessions
        .iter()
        .map(|s| {
            s.events
                .iter()
                .map(|e| serde_json::to_string(e).unwrap_or_default())
                .collect()
        })
        .collect();
    let mut per_json_event = Vec::new();
    for round in 0..2 {
        for (session, events) in sessions.iter().zip(&json_events) {
            let mut pad = Scratchpad::new(
                session.id.clone(),
                SessionKind::Build,
                PathNormalizer::new(session.roots.clone()),
            );
            for text in events {
                let start = Instant::now();
                if let Ok(event) = serde_json::from_str::<engram_observer::Event>(text) {
                    pad.observe(&event);
                }
                if round > 0 {
                    per_json_event.push(start.elapsed().as_secs_f64() * 1e6);
                }
            }
        }
    }
    per_json_event.sort_by(f64::total_cmp);
    let mut per_event = Vec::new();
    let mut finalize = Vec::new();
    for round in 0..3 {
        for session in &sessions {
            let mut pad = Scratchpad::new(
                session.id.clone(),
                SessionKind::Build,
                PathNormalizer::new(session.roots.clone()),
            );
            for event in &session.events {
                let start = Instant::now();
                pad.observe(event);
                if round > 0 {
                    per_event.push(start.elapsed().as_secs_f64() * 1e6);
                }
            }
            let start = Instant::now();
            let done = pad.finalize(Outcome::Success, &Prior::default());
            if round > 0 {
                finalize.push(start.elapsed().as_secs_f64() * 1e3);
            }
            std::hint::black_box(done);
        }
    }
    per_event.sort_by(f64::total_cmp);
    finalize.sort_by(f64::total_cmp);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    println!(
        "from JSON text (parse + observe): mean {:.2} µs, p50 {:.2} µs, p99 {:.2} µs",
        per_json_event.iter().sum::<f64>() / per_json_event.len().max(1) as f64,
        percentile(&per_json_event, 0.5),
        percentile(&per_json_event, 0.99)
    );
    println!(
        "{} sessions, {} events timed (2 rounds after a warm-up): observe mean {:.2} µs, p50 {:.2} µs, p99 {:.2} µs, max {:.1} µs; finalize mean {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        sessions.len(),
        per_event.len(),
        mean(&per_event),
        percentile(&per_event, 0.5),
        percentile(&per_event, 0.99),
        per_event.last().copied().unwrap_or(0.0),
        mean(&finalize),
        percentile(&finalize, 0.99),
        finalize.last().copied().unwrap_or(0.0)
    );
}
