//! `engram import`: the instruction files of a project (CLAUDE.md, AGENTS.md, GEMINI.md,
//! Cursor, Windsurf and Copilot rules, nested ones too) read from disk, with the files
//! they `@import`, and handed to the engine in one import.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use engram::{Database, Engram, ImportReport, ImportRequest, InstructionFile, RuleOutcome};
use engram_instructions::{Format, MAX_FILE_BYTES};

use crate::CliError;

/// How deep `@path` imports are followed (an import of an import of …).
const MAX_IMPORT_DEPTH: usize = 5;

/// `engram import [PATH…]`.
#[derive(Args)]
pub struct ImportArgs {
    /// Instruction files to import (default: every one under the project root).
    pub paths: Vec<PathBuf>,
    /// The project root the files' paths are relative to.
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
    /// Print each rule with its memory and what became of it.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

/// A file found on disk, before it is read.
struct Found {
    /// From the project root, `/`-separated.
    path: String,
    disk: PathBuf,
}

pub async fn run<D: Database>(
    engram: &Engram<D>,
    args: &ImportArgs,
    json: bool,
) -> Result<(), CliError> {
    let root = args
        .root
        .canonicalize()
        .map_err(|e| CliError::Usage(format!("cannot open {}: {e}", args.root.display())))?;
    let found = if args.paths.is_empty() {
        instruction_files(&root)?
    } else {
        args.paths
            .iter()
            .map(|p| given(&root, p))
            .collect::<Result<_, _>>()?
    };
    let (files, aliases) = read_with_imports(&root, found)?;
    if files.is_empty() {
        return Err(CliError::Usage(format!(
            "no instruction files under {} (CLAUDE.md, AGENTS.md, GEMINI.md, .cursorrules, .cursor/rules/*.mdc, .windsurf/rules/*.md, .github/copilot-instructions.md)",
            root.display()
        )));
    }
    let report = engram.import_instructions(ImportRequest { files }).await?;
    print(&report, &aliases, args.verbose, json);
    Ok(())
}

/// The instruction files under `root` (nested ones too), honouring ignore files and
/// skipping dependency and build folders; a symlink is listed as itself.
fn instruction_files(root: &Path) -> Result<Vec<Found>, CliError> {
    let mut walker = ignore::WalkBuilder::new(root);
    walker
        .hidden(false)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let name = entry.file_name().to_string_lossy();
            !(is_dir
                && entry.depth() > 0
                && (crate::code::SKIPPED_DIRS.contains(&&*name) || name == ".engram"))
        });
    let mut found = Vec::new();
    for entry in walker.build() {
        let entry =
            entry.map_err(|e| CliError::Usage(format!("cannot walk {}: {e}", root.display())))?;
        if !entry.path().is_file() {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let path = relative.to_string_lossy().replace('\\', "/");
        // Plain markdown is read only when an instruction file imports it; MEMORY.md
        // only when named (Claude Code keeps it outside the project).
        if matches!(
            Format::of_path(&path),
            None | Some(Format::Markdown) | Some(Format::ClaudeMemory)
        ) {
            continue;
        }
        found.push(Found {
            path,
            disk: entry.path().to_path_buf(),
        });
    }
    Ok(found)
}

/// A path given on the command line, as a path from the root.
fn given(root: &Path, path: &Path) -> Result<Found, CliError> {
    let disk = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| CliError::Usage(format!("no current folder: {e}")))?
            .join(path)
    };
    let canonical_parent = disk
        .parent()
        .and_then(|p| p.canonicalize().ok())
        .ok_or_else(|| CliError::Usage(format!("{} does not exist", path.display())))?;
    let name = disk
        .file_name()
        .ok_or_else(|| CliError::Usage(format!("{} is not a file", path.display())))?;
    let relative = canonical_parent
        .join(name)
        .strip_prefix(root)
        .map(|r| r.to_string_lossy().replace('\\', "/"))
        .map_err(|_| {
            CliError::Usage(format!(
                "{} is outside the project root {} (pass --root)",
                path.display(),
                root.display()
            ))
        })?;
    Ok(Found {
        path: relative,
        disk,
    })
}

/// Reads `found` and, transitively, the files they import; a symlink to another file of
/// the set is an alias, not a second source. Returns the files and the aliases (path →
/// the file it points to).
fn read_with_imports(
    root: &Path,
    found: Vec<Found>,
) -> Result<(Vec<InstructionFile>, BTreeMap<String, String>), CliError> {
    let mut by_target: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut aliases = BTreeMap::new();
    let mut files: Vec<InstructionFile> = Vec::new();
    let mut queue: Vec<(Found, usize)> = found.into_iter().map(|f| (f, 0)).collect();
    // Real files first, so a symlink finds the file it aliases already taken.
    queue.sort_by_key(|(f, _)| f.disk.is_symlink());
    let mut next = 0;
    while next < queue.len() {
        let (path, disk, depth) = (
            queue[next].0.path.clone(),
            queue[next].0.disk.clone(),
            queue[next].1,
        );
        let entry = Found { path, disk };
        next += 1;
        let target = entry
            .disk
            .canonicalize()
            .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", entry.disk.display())))?;
        if let Some(first) = by_target.get(&target) {
            if *first != entry.path {
                aliases.insert(entry.path.clone(), first.clone());
            }
            continue;
        }
        by_target.insert(target.clone(), entry.path.clone());
        let bytes = read_capped(&target, &entry.path)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            invalid(
                &entry.path,
                format!(
                    "is not text (binary data at byte {})",
                    e.utf8_error().valid_up_to()
                ),
            )
        })?;
        if depth < MAX_IMPORT_DEPTH {
            if let Ok(read) = engram_instructions::parse(&entry.path, text.as_bytes()) {
                for import in read.imports {
                    let Some(resolved) = import.resolved else {
                        continue;
                    };
                    let disk = root.join(&resolved);
                    if disk.is_file() && Format::of_path(&resolved).is_some() {
                        queue.push((
                            Found {
                                path: resolved,
                                disk,
                            },
                            depth + 1,
                        ));
                    }
                }
            }
        }
        files.push(InstructionFile {
            path: entry.path.clone(),
            text,
        });
    }
    Ok((files, aliases))
}

/// The file's bytes, refusing one larger than an instruction file can be before reading
/// it all.
fn read_capped(path: &Path, name: &str) -> Result<Vec<u8>, CliError> {
    let size = std::fs::metadata(path)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?
        .len();
    if size > MAX_FILE_BYTES as u64 {
        return Err(invalid(
            name,
            format!("is {size} bytes; instruction files are read up to {MAX_FILE_BYTES}"),
        ));
    }
    std::fs::read(path).map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))
}

/// The engine's typed error for a file that cannot be an instruction file, named by its
/// path, as the engine gives it for the same file sent as text.
fn invalid(path: &str, problem: String) -> CliError {
    CliError::Engram(engram::EngramError::from(engram::ValidationError::field(
        path, problem,
    )))
}

fn print(report: &ImportReport, aliases: &BTreeMap<String, String>, verbose: bool, json: bool) {
    if json {
        let value = serde_json::json!({ "report": report, "aliases": aliases });
        say!("{value}");
        return;
    }
    for file in &report.files {
        let counts: Vec<String> = [
            (RuleOutcome::Added, "new"),
            (RuleOutcome::Merged, "merged into existing memories"),
            (RuleOutcome::Unchanged, "unchanged"),
            (RuleOutcome::Reformatted, "reformatted"),
            (RuleOutcome::Revised, "revised (the old form superseded)"),
            (RuleOutcome::Forgotten, "forgotten earlier, left forgotten"),
        ]
        .iter()
        .map(|(outcome, name)| (file.count(*outcome), name))
        .filter(|(n, _)| *n > 0)
        .map(|(n, name)| format!("{n} {name}"))
        .collect();
        let state = if file.unchanged_file {
            "unchanged since the last import".to_owned()
        } else {
            counts.join(", ")
        };
        say!(
            "{} ({}): {} rules{}{}",
            engram_cli::for_terminal(&file.path),
            file.format.as_str(),
            file.rules.len(),
            if state.is_empty() {
                String::new()
            } else {
                format!(" — {state}")
            },
            if file.retired.is_empty() {
                String::new()
            } else {
                format!("; {} removed rules retired", file.retired.len())
            }
        );
        for target in &file.unresolved {
            say!(
                "  import not followed: @{}",
                engram_cli::for_terminal(target)
            );
        }
        if verbose {
            for rule in &file.rules {
                let text: String = rule.text.replace('\n', " ").chars().take(100).collect();
                say!(
                    "  {} L{:<4} {:<12} {:<16} {}",
                    &rule.id.get(..8).unwrap_or(&rule.id),
                    rule.line,
                    format!("{:?}", rule.outcome).to_lowercase(),
                    rule.memory_type.as_str(),
                    engram_cli::for_terminal(&text)
                );
            }
            for retired in &file.retired {
                let text: String = retired.text.replace('\n', " ").chars().take(100).collect();
                say!(
                    "  {} L{:<4} retired      {}",
                    &retired.id.get(..8).unwrap_or(&retired.id),
                    retired.line,
                    engram_cli::for_terminal(&text)
                );
            }
        }
    }
    for (alias, file) in aliases {
        say!(
            "{} is a link to {}: imported once",
            engram_cli::for_terminal(alias),
            engram_cli::for_terminal(file)
        );
    }
    if report.pending {
        say!("the database is out of reach: the import waits in the write buffer");
    }
}
