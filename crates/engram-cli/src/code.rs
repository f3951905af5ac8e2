//! `engram index`, `engram impact` and `engram deps`: the CLI reads the repository (the
//! core never touches a file system) and prints what the code graph says.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use engram::{Database, Engram, ImpactReport, IndexOptions, IndexReport, SourceFile};

use crate::CliError;

/// Folders never indexed, whatever the ignore files say: dependencies, build output,
/// virtual environments, caches.
pub(crate) const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "vendor",
    "third_party",
    "target",
    "dist",
    "build",
    "out",
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".next",
    ".turbo",
    "coverage",
];

/// Extensions the graph understands; everything else is left on disk.
const EXTENSIONS: &[&str] = &[
    "ts", "mts", "cts", "tsx", "js", "jsx", "mjs", "cjs", "py", "pyi", "rs", "go",
];

/// `engram index <dir>`.
#[derive(Args)]
pub struct IndexArgs {
    /// The repository root (paths are stored relative to it).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Only these files or folders under the root (partial re-index; nothing is deleted
    /// except paths given with --removed).
    #[arg(long = "only", value_name = "PATH")]
    pub only: Vec<String>,
    /// Paths deleted since the last index (with --only).
    #[arg(long = "removed", value_name = "PATH")]
    pub removed: Vec<String>,
}

/// The supported source files under `root`, honouring `.gitignore`, `.ignore` and global
/// git excludes, skipping hidden and vendored folders. Paths are relative, with `/`.
pub fn collect(root: &Path, only: &[String]) -> Result<(Vec<SourceFile>, u64), CliError> {
    if !root.is_dir() {
        return Err(CliError::Usage(format!(
            "{} is not a folder",
            root.display()
        )));
    }
    let mut walker = ignore::WalkBuilder::new(root);
    walker
        .hidden(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            !(is_dir
                && entry.depth() > 0
                && SKIPPED_DIRS.contains(&&*entry.file_name().to_string_lossy()))
        });
    let mut files = Vec::new();
    let mut unreadable = 0;
    for entry in walker.build() {
        let Ok(entry) = entry else {
            unreadable += 1;
            continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let supported = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
        if !supported {
            continue;
        }
        let Ok(relative) = path.strip_prefix(root) else {
            continue;
        };
        let relative = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        if !only.is_empty()
            && !only.iter().any(|o| {
                relative == *o || relative.starts_with(&format!("{}/", o.trim_end_matches('/')))
            })
        {
            continue;
        }
        match std::fs::read_to_string(path) {
            Ok(content) => files.push(SourceFile::new(relative, content)),
            // Not UTF-8 or unreadable: not source code we can parse.
            Err(_) => unreadable += 1,
        }
    }
    Ok((files, unreadable))
}

/// Reads the repository, indexes it with a progress line, prints the summary.
pub async fn index<D: Database>(
    engram: &Engram<D>,
    args: &IndexArgs,
    json: bool,
) -> Result<(), CliError> {
    let started = Instant::now();
    let (files, unreadable) = collect(&args.dir, &args.only)?;
    let read = started.elapsed();
    let options = IndexOptions {
        complete: args.only.is_empty(),
        removed: args.removed.clone(),
    };
    let total_bytes: usize = files.iter().map(|f| f.content.len()).sum();
    let interactive = !json && std::io::stderr().is_terminal();
    if !json {
        eprintln!(
            "read {} files ({:.1} MB) from {} in {:.2} s",
            files.len(),
            total_bytes as f64 / 1e6,
            args.dir.display(),
            read.as_secs_f64()
        );
    }
    let parse_started = Instant::now();
    let mut last_print = Instant::now();
    let mut next_quarter = 1;
    let mut progress = |p: engram::IndexProgress| {
        if json || p.files_total == 0 {
            return;
        }
        let elapsed = parse_started.elapsed().as_secs_f64().max(1e-6);
        let fraction = p.files_done as f64 / p.files_total as f64;
        let line = format!(
            "indexing {}/{} files  {:>9.0} LOC/s  ETA {:.1} s",
            p.files_done,
            p.files_total,
            p.lines_parsed as f64 / elapsed,
            if fraction > 0.0 {
                elapsed * (1.0 - fraction) / fraction
            } else {
                0.0
            }
        );
        if interactive {
            if last_print.elapsed().as_millis() >= 100 || p.files_done == p.files_total {
                eprint!("\r{line}\x1b[K");
                let _ = std::io::stderr().flush();
                last_print = Instant::now();
            }
        } else if fraction * 4.0 >= f64::from(next_quarter) {
            eprintln!("{line}");
            next_quarter += 1;
        }
    };
    let report = engram
        .index_files_with_progress(&files, &options, &mut progress)
        .await?;
    if interactive {
        eprintln!();
    }
    let elapsed = started.elapsed().as_secs_f64();
    if json {
        say!("{}", serde_json::to_string(&report).unwrap_or_default());
    } else {
        summary(&report, elapsed, unreadable);
    }
    Ok(())
}

fn summary(r: &IndexReport, seconds: f64, unreadable: u64) {
    say!(
        "indexed {} files: {} added, {} changed, {} unchanged, {} deleted, {} renamed",
        r.files,
        r.added,
        r.changed,
        r.unchanged,
        r.deleted,
        r.renamed.len()
    );
    say!(
        "parsed {} lines in {:.2} s ({:.0} LOC/s overall)",
        r.lines_parsed,
        seconds,
        r.lines_parsed as f64 / seconds.max(1e-6)
    );
    say!(
        "graph: {} nodes, {} edges; wrote {} nodes, {} edges (-{}), {} closure rows for {} ancestors",
        r.nodes,
        r.edges,
        r.nodes_written,
        r.edges_added,
        r.edges_removed,
        r.closure_rows_written,
        r.closure_ancestors
    );
    for rename in &r.renamed {
        say!("  renamed {} -> {}", rename.from, rename.to);
    }
    for path in &r.too_large {
        say!("  skipped (over 1 MiB): {path}");
    }
    if unreadable > 0 {
        say!("  skipped {unreadable} unreadable or non-UTF-8 files");
    }
    if !r.changed_symbols.is_empty() {
        say!("{} symbols changed", r.changed_symbols.len());
    }
    for f in &r.flagged {
        say!("  memory {} flagged for review: {}", f.id, f.reason);
    }
}

/// The failure of a lookup of `target`, a file or symbol the code graph does not hold.
pub fn not_in_graph(target: &str) -> CliError {
    CliError::Engram(engram::EngramError::NotFound(format!(
        "{target} is not in the code graph (run `engram index` first?)"
    )))
}

/// Prints an impact report.
pub fn impact(report: &ImpactReport, json: bool) {
    if json {
        say!("{}", serde_json::to_string(report).unwrap_or_default());
        return;
    }
    say!(
        "{}: {} nodes; {} dependents in {} files",
        report.target,
        report.targets.len(),
        report.impacted.len(),
        report.files.len()
    );
    print_files(&report.files);
    for n in report.impacted.iter().take(30) {
        say!(
            "    {} {} [{}]{}",
            n.depth,
            n.id,
            n.edge_kinds.join(" > "),
            if n.stale { " (stale)" } else { "" }
        );
    }
    if report.impacted.len() > 30 {
        say!("    … {} more (use --json)", report.impacted.len() - 30);
    }
    for m in &report.memories {
        say!(
            "  memory {} ({}, depth {}, on {}){}: {}",
            m.id.chars().take(8).collect::<String>(),
            m.memory_type,
            m.depth,
            m.attached_to,
            if m.needs_review {
                " [needs review]"
            } else {
                ""
            },
            m.content
        );
    }
}

/// Prints what a file depends on.
pub fn dependencies(file: &str, files: &[engram::RelatedFile], json: bool) {
    if json {
        say!("{}", serde_json::to_string(files).unwrap_or_default());
        return;
    }
    say!("{file} depends on {} files", files.len());
    print_files(files);
}

fn print_files(files: &[engram::RelatedFile]) {
    for f in files {
        let nodes = f.nodes;
        say!(
            "  depth {}  weight {:.2}  {} ({nodes} nodes)",
            f.depth,
            f.weight,
            f.path
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collect_honours_gitignore_and_skips_vendored_hidden_and_other_files() {
        let root = std::env::temp_dir().join(format!("engram-collect-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let write = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("src/app.py", "def main():\n    pass\n");
        write("src/lib/util.ts", "export const x = 1;\n");
        write("src/generated.py", "x = 1\n");
        write(".gitignore", "src/generated.py\n");
        write("node_modules/pkg/index.js", "module.exports = 1;\n");
        write("build/out.js", "var a;\n");
        write(".hidden/secret.py", "x = 1\n");
        write("README.md", "# readme\n");
        std::fs::write(root.join("src/binary.py"), [0xff, 0xfe, 0x00]).unwrap();

        let (files, unreadable) = collect(&root, &[]).unwrap();
        let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["src/app.py", "src/lib/util.ts"]);
        assert_eq!(unreadable, 1);
        let (only, _) = collect(&root, &["src/lib".to_owned()]).unwrap();
        assert_eq!(only.len(), 1);
        assert_eq!(only[0].path, "src/lib/util.ts");
        assert!(collect(&root.join("missing"), &[]).is_err());
        let _ = std::fs::remove_dir_all(&root);
    }
}
