//! Where the transformer's memory goes, natively: resident memory after reading the ONNX
//! file, after loading (parse, fold the int8 weights to f32, declutter, the 16-token plan),
//! and after texts that need each longer length bucket's plan.
//! With `compact`, the same for [`Footprint::Compact`] (int8 weights, plans without them).
//! `cargo run --release -p engram-embed --example memory -- MODEL_DIR [compact]`

use engram_embed::{Embedder, Footprint, BUCKETS};

/// Resident memory in MiB, from /proc (Linux).
fn resident_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / (1024.0 * 1024.0)
}

/// Peak resident memory in MiB (`VmHWM`, Linux).
fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: memory MODEL_DIR [compact]");
        std::process::exit(2);
    };
    let dir = std::path::Path::new(&dir);
    let start = resident_mib();
    let onnx = std::fs::read(dir.join("model.onnx")).expect("model.onnx");
    let tokenizer = std::fs::read(dir.join("tokenizer.json")).expect("tokenizer.json");
    println!("start {start:.0} MiB; files read {:.0} MiB", resident_mib());
    let footprint = match std::env::args().nth(2).as_deref() {
        Some("compact") => Footprint::Compact,
        _ => Footprint::Fast,
    };
    let embedder =
        Embedder::load_with(&onnx, &tokenizer, "memory", footprint).expect("the model loads");
    drop((onnx, tokenizer));
    println!(
        "{footprint:?}: loaded (one plan, files dropped) {:.0} MiB",
        resident_mib()
    );
    for &bucket in &BUCKETS[1..] {
        let text = vec!["word"; bucket - 4].join(" ");
        embedder.embed(&text).expect("embeds");
        println!("after a {bucket}-token text {:.0} MiB", resident_mib());
    }
    println!("peak {:.0} MiB", peak_mib());
}
