//! AST chunking on real code: hashbrown's `set.rs` (an 88 KB Rust file, copied with
//! text-splitter's snapshots from ../shared/eval/chunking into tests/fixtures, MIT), checked
//! for the invariants at text-splitter's budgets and compared with its snapshots. Kinds and names in every
//! language are checked by the cross-host vectors (tests/vectors.rs).

use std::path::PathBuf;

use engram_code::{chunk_file, Chunk, ChunkOptions};

fn eval_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chunking")
}

fn hashbrown() -> String {
    std::fs::read_to_string(eval_dir().join("hashbrown_set_rs.txt"))
        .expect("tests/fixtures/chunking/hashbrown_set_rs.txt")
}

fn options(max_chars: usize) -> ChunkOptions {
    ChunkOptions {
        max_chars,
        ..ChunkOptions::default()
    }
}

/// Byte ranges of every top-level and nested `fn` item, found by a scan independent of the
/// chunker: a line starting (after indentation, attributes aside) with `fn`/`pub fn` and
/// the matching closing brace at the same indentation.
fn rust_functions(source: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut offset = 0;
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    let mut starts = Vec::new();
    for line in &lines {
        starts.push(offset);
        offset += line.len();
    }
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let is_fn = [
            "fn ",
            "pub fn ",
            "pub(crate) fn ",
            "unsafe fn ",
            "pub unsafe fn ",
            "const fn ",
            "pub const fn ",
        ]
        .iter()
        .any(|p| trimmed.starts_with(p));
        if !is_fn || trimmed.trim_end().ends_with(';') {
            continue;
        }
        let close = " ".repeat(indent) + "}";
        if let Some(j) = (i..lines.len())
            .find(|&j| lines[j].trim_end() == close || (j == i && line.trim_end().ends_with('}')))
        {
            let name = trimmed
                .split("fn ")
                .nth(1)
                .unwrap_or("")
                .split(['(', '<'])
                .next()
                .unwrap_or("")
                .to_owned();
            out.push((
                starts[i] + indent,
                starts[j] + lines[j].trim_end().len(),
                name,
            ));
        }
    }
    out
}

fn check_invariants(source: &str, chunks: &[Chunk], budget: usize) {
    let mut last_end = 0;
    for c in chunks {
        assert!(
            c.start_byte >= last_end,
            "chunks overlap or go backwards at {}",
            c.start_byte
        );
        assert_eq!(&source[c.start_byte..c.end_byte], c.content);
        let oversized = c.content.len() > budget;
        assert!(
            !oversized || !c.content.trim_end().contains('\n'),
            "a multi-line chunk of {} bytes exceeds {budget}",
            c.content.len()
        );
        // Nothing but whitespace is dropped between chunks.
        assert!(
            source[last_end..c.start_byte].trim().is_empty(),
            "lost text before line {}",
            c.start_line
        );
        last_end = c.end_byte;
    }
    assert!(source[last_end..].trim().is_empty());
}

#[test]
fn hashbrown_chunks_keep_every_function_that_fits_whole() {
    let source = hashbrown();
    let functions = rust_functions(&source);
    assert!(
        functions.len() > 100,
        "found only {} functions",
        functions.len()
    );
    for budget in [32, 512, 1500, 8192] {
        let chunks = chunk_file("src/set.rs", &source, &options(budget));
        check_invariants(&source, &chunks, budget);
        let mut fitting = 0;
        for (start, end, name) in &functions {
            if end - start > budget {
                continue;
            }
            fitting += 1;
            assert!(
                chunks
                    .iter()
                    .any(|c| c.start_byte <= *start && *end <= c.end_byte),
                "budget {budget}: fn {name} ({} bytes) was split",
                end - start
            );
        }
        assert!(budget < 512 || fitting > 50);
    }
}

/// text-splitter's chunks (trimmed) located in the source, as byte ranges.
fn text_splitter_ranges(source: &str, snapshot: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut from = 0;
    for line in snapshot.lines().filter(|l| l.starts_with("- \"")) {
        let text: String =
            serde_json::from_str(&line[2..]).expect("snapshot entries are JSON strings");
        if let Some(i) = source[from..].find(&text) {
            ranges.push((from + i, from + i + text.len()));
            from += i + text.len();
        }
    }
    ranges
}

#[test]
fn compared_with_text_splitter_snapshots() {
    let source = hashbrown();
    let functions = rust_functions(&source);
    for budget in [512, 8192] {
        let snapshot = std::fs::read_to_string(eval_dir().join(format!(
            "snapshots__hashbrown_set_rs_code_Characters_trim_{budget}.snap"
        )))
        .unwrap();
        let theirs = text_splitter_ranges(&source, &snapshot);
        let ours: Vec<(usize, usize)> = chunk_file("src/set.rs", &source, &options(budget))
            .iter()
            .map(|c| (c.start_byte, c.end_byte))
            .collect();
        let split_in = |ranges: &[(usize, usize)]| {
            functions
                .iter()
                .filter(|(s, e, _)| {
                    e - s <= budget && !ranges.iter().any(|(a, b)| a <= s && e <= b)
                })
                .count()
        };
        let boundaries = |ranges: &[(usize, usize)]| {
            ranges
                .iter()
                .map(|r| r.0)
                .collect::<std::collections::BTreeSet<_>>()
        };
        let shared = boundaries(&ours).intersection(&boundaries(&theirs)).count();
        eprintln!(
            "budget {budget}: text-splitter {} chunks, {} fitting functions split; engram {} chunks, {} split; {} chunk starts in common",
            theirs.len(),
            split_in(&theirs),
            ours.len(),
            split_in(&ours),
            shared
        );
        assert_eq!(split_in(&ours), 0);
        assert!(!theirs.is_empty());
    }
}

#[test]
fn unsupported_and_broken_files_fall_back_to_lines() {
    let json = (0..300)
        .map(|i| format!("  \"key{i}\": {i},\n"))
        .collect::<String>();
    let chunks = chunk_file("config.json", &json, &ChunkOptions::default());
    assert!(chunks
        .iter()
        .all(|c| c.kind == "lines" && c.language.is_none()));
    assert!(chunks
        .iter()
        .all(|c| c.end_line - c.start_line < 100 && c.content.len() <= 1500));
    assert_eq!(chunks[0].start_line, 1);
    assert_eq!(chunks.last().unwrap().end_line, 300);
    let broken = "fn ( { [ <<< >>> ]]] ) fn fn fn {{{{ \n".repeat(20);
    let chunks = chunk_file("broken.rs", &broken, &ChunkOptions::default());
    assert!(chunks.iter().all(|c| c.kind == "lines"));
    assert!(chunk_file("empty.py", "", &ChunkOptions::default()).is_empty());
    // A line longer than the budget is cut, not dropped.
    let long = "x".repeat(5000);
    let chunks = chunk_file("notes.md", &long, &ChunkOptions::default());
    assert_eq!(chunks.iter().map(|c| c.content.len()).sum::<usize>(), 5000);
}
