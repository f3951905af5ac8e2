//! Chunking throughput on a real source tree: `cargo run --release -p engram-code --example
//! code_bench -- DIR [MAX_CHARS]`. Reads every supported file under DIR (skipping `target`,
//! `node_modules`, `.git`, vendored folders), then times chunking all of them, three runs.

use std::path::Path;
use std::time::Instant;

use engram_code::{build_graph, chunk_file, ChunkOptions, FileSet, Language, Outliner};

fn collect(dir: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(
                name.as_str(),
                "target" | "node_modules" | ".git" | "vendor" | "dist" | "build"
            ) {
                collect(&path, out);
            }
        } else if Language::from_path(&name).is_some() {
            if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((path.to_string_lossy().into_owned(), text));
            }
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: code_bench DIR [MAX_CHARS]");
        std::process::exit(2);
    };
    let max_chars = args.next().and_then(|a| a.parse().ok()).unwrap_or(1500);
    let mut files = Vec::new();
    collect(Path::new(&dir), &mut files);
    let lines: usize = files.iter().map(|(_, t)| t.lines().count()).sum();
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    println!("{} files, {lines} lines, {bytes} bytes", files.len());
    let options = ChunkOptions {
        max_chars,
        ..ChunkOptions::default()
    };
    for run in 1..=3 {
        let started = Instant::now();
        let chunks: usize = files
            .iter()
            .map(|(p, t)| chunk_file(p, t, &options).len())
            .sum();
        let secs = started.elapsed().as_secs_f64();
        println!(
            "run {run}: {chunks} chunks in {:.3} s: {:.0} LOC/s, {:.1} MB/s",
            secs,
            lines as f64 / secs,
            bytes as f64 / secs / 1e6
        );
    }
    for run in 1..=3 {
        let started = Instant::now();
        let mut outliner = Outliner::new();
        let outlines: Vec<_> = files
            .iter()
            .filter_map(|(p, t)| outliner.outline(p, t))
            .collect();
        let set = FileSet::new(files.iter().map(|(p, _)| p.as_str()));
        let graph = build_graph(&outlines, &set);
        let secs = started.elapsed().as_secs_f64();
        println!(
            "graph run {run}: {} nodes, {} edges in {:.3} s: {:.0} LOC/s",
            graph.nodes.len(),
            graph.edges.len(),
            secs,
            lines as f64 / secs
        );
    }
    let (largest_path, largest) = files
        .iter()
        .max_by_key(|(_, t)| t.len())
        .map(|(p, t)| (p.clone(), t.clone()))
        .unwrap_or_default();
    let started = Instant::now();
    for _ in 0..10 {
        chunk_file(&largest_path, &largest, &options);
    }
    println!(
        "largest file ({} lines): {:.2} ms per chunking",
        largest.lines().count(),
        started.elapsed().as_secs_f64() * 100.0
    );
}
