//! Code-index benchmark on a real repository and an embedded libSQL file:
//! `cargo run --release -p engram-eval --example index_bench -- DIR [EDITS]`.
//!
//! Prints the pure phases (outline = tree-sitter parse + outline, graph, closure), the full
//! `index_files` (those plus the write), then the time to re-index one changed file on a
//! warm instance (the host keeps its `Engram`) for three kinds of edit, over EDITS files each
//! (median and max), and on a cold instance (a new process: the outlines are read back first).

use std::path::Path;
use std::time::Instant;

use engram::{Engram, EngramConfig, Host, IndexOptions, SourceFile};
use engram_code::{build_graph, full_closure, FileSet, Language, Outliner, DEFAULT_CLOSURE_DEPTH};
use engram_libsql::LocalDatabase;

fn collect(root: &Path, dir: &Path, out: &mut Vec<SourceFile>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if path.is_dir() {
            if !matches!(
                name.as_str(),
                "target" | "node_modules" | ".git" | "vendor" | "dist" | "build"
            ) {
                collect(root, &path, out);
            }
        } else if Language::from_path(&name).is_some() {
            if let Ok(text) = std::fs::read_to_string(&path) {
                let rel = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned();
                out.push(SourceFile::new(rel, text));
            }
        }
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

async fn open(db: &LocalDatabase) -> Engram<&LocalDatabase> {
    Engram::open(db, EngramConfig::default(), Host::native())
        .await
        .expect("open")
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: index_bench DIR [EDITS]");
        std::process::exit(2);
    };
    let edits: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let mut files = Vec::new();
    collect(Path::new(&dir), Path::new(&dir), &mut files);
    let lines: usize = files.iter().map(|f| f.content.lines().count()).sum();
    println!("{dir}: {} files, {lines} lines", files.len());

    let t = Instant::now();
    let mut outliner = Outliner::new();
    let outlines: Vec<_> = files
        .iter()
        .filter_map(|f| outliner.outline(&f.path, &f.content))
        .collect();
    let outline_ms = ms(t);
    let t = Instant::now();
    let set = FileSet::new(files.iter().map(|f| f.path.as_str()));
    let graph = build_graph(&outlines, &set);
    let graph_ms = ms(t);
    let t = Instant::now();
    let closure = full_closure(&graph, DEFAULT_CLOSURE_DEPTH);
    let closure_ms = ms(t);
    println!(
        "pure: outline {outline_ms:.0} ms ({:.0} LOC/s), graph {graph_ms:.1} ms, closure {closure_ms:.1} ms \
({} nodes, {} edges, {} closure rows)",
        lines as f64 / outline_ms * 1e3,
        graph.nodes.len(),
        graph.edges.len(),
        closure.len()
    );

    let path = std::env::temp_dir().join(format!("engram-index-bench-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let db = LocalDatabase::open(path.to_str().unwrap_or_default())
        .await
        .expect("database");
    let engram = open(&db).await;
    let all = IndexOptions {
        complete: true,
        ..IndexOptions::default()
    };
    let t = Instant::now();
    let report = engram.index_files(&files, &all).await.expect("index");
    let full_ms = ms(t);
    println!(
        "full index: {full_ms:.0} ms = {:.0} LOC/s (parse+graph+closure {:.0} ms, write ≈ {:.0} ms)",
        lines as f64 / full_ms * 1e3,
        outline_ms + graph_ms + closure_ms,
        full_ms - outline_ms - graph_ms - closure_ms
    );
    assert_eq!(report.added as usize, files.len());

    // Re-index one changed file, three kinds of edit: (a) a change inside the file that
    // keeps its definitions' names and edges (a trailing comment; the file's part of the
    // graph is rebuilt), (b) a new function (the names changed: the whole graph is rebuilt
    // in memory, the delta written), (c) a new call (below).
    let step = (files.len() / edits).max(1);
    let candidates: Vec<usize> = (0..files.len()).step_by(step).take(edits).collect();
    let edited = |edit: &dyn Fn(usize, &SourceFile) -> Option<String>| -> Vec<SourceFile> {
        files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                edit(i, f)
                    .map(|suffix| SourceFile::new(f.path.clone(), f.content.clone() + &suffix))
            })
            .take(edits)
            .collect()
    };
    let picked = |i: usize| candidates.contains(&i);
    let body = edited(&|i, f| {
        picked(i).then(|| match Language::from_path(&f.path) {
            Some(Language::Python) => "\n# engram bench edit\n".to_owned(),
            _ => "\n// engram bench edit\n".to_owned(),
        })
    });
    let definition = edited(&|i, f| {
        picked(i).then(|| match Language::from_path(&f.path) {
            Some(Language::Python) => format!("\n\ndef engram_bench_{i}():\n    return len([])\n"),
            Some(Language::Rust) => format!("\n\npub fn engram_bench_{i}() -> usize {{ 0 }}\n"),
            Some(Language::Go) => format!("\n\nfunc EngramBench{i}() int {{ return 0 }}\n"),
            _ => format!("\n\nexport function engramBench{i}() {{ return 0; }}\n"),
        })
    });
    // (c) A module-level call to a Python file's first function: names unchanged, a
    // dependency edge added (the closure rows under it are recomputed).
    let call = edited(&|i, f| {
        let name = f.path.ends_with(".py").then(|| {
            f.content
                .lines()
                .find_map(|l| l.strip_prefix("def ").and_then(|r| r.split('(').next()))
        })??;
        Some(format!("\n\n{name}()  # engram bench {i}\n"))
    });
    for (label, changed) in [
        ("body edit", body),
        ("new definition", definition),
        ("call added", call),
    ] {
        if changed.is_empty() {
            continue;
        }
        let mut times = Vec::new();
        for one in &changed {
            let t = Instant::now();
            let r = engram
                .index_files(std::slice::from_ref(one), &IndexOptions::default())
                .await
                .expect("re-index");
            times.push(ms(t));
            assert_eq!(r.changed, 1);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "one changed file ({label}), warm instance: median {:.2} ms, max {:.2} ms over {} files",
            times[times.len() / 2],
            times[times.len() - 1],
            times.len()
        );
    }
    // A new instance (a new CLI process) reads the stored outlines back first.
    let cold = open(&db).await;
    let mut one = files[0].clone();
    one.content.push('\n');
    let t = Instant::now();
    cold.index_files(std::slice::from_ref(&one), &IndexOptions::default())
        .await
        .expect("re-index");
    println!("one changed file, cold instance: {:.0} ms", ms(t));
    let t = Instant::now();
    let impact = engram
        .analyze_impact(&files[0].path, 3)
        .await
        .expect("impact");
    println!(
        "analyze_impact({}, 3): {:.2} ms, {} impacted",
        files[0].path,
        ms(t),
        impact.impacted.len()
    );
    drop(engram);
    drop(cold);
    drop(db);
    let _ = std::fs::remove_file(&path);
}
