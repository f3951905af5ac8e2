//! `engram-eval instructions`: every real instruction file of the eval set imported as
//! memories, then imported again (nothing may be written), then each history folder's
//! versions imported in order, counting what became of each rule beside what the
//! folder's README says changed, and scoring supersede/retire against a label read off the
//! versions (`updates`). `--explain NAME` prints the rules of the files whose name contains
//! NAME beside the memories made.

mod updates;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use engram::{Engram, FileImport, ImportRequest, InstructionFile, RuleOutcome};
use engram_store::{Database, Statement};
use serde_json::json;

use super::EvalArgs;
use crate::{CliError, Target};

/// One file of a manifest: its name in the eval folder and its path in its repository.
pub(super) struct Listed {
    pub(super) name: String,
    pub(super) repo: String,
    pub(super) path: String,
    /// For history rows, the commit and its date.
    commit: String,
    date: String,
    /// For history rows, the folder the version sits in.
    folder: Option<String>,
}

pub async fn run(
    args: &EvalArgs,
    data: &Path,
    target: &Target,
    json_out: bool,
) -> Result<(), CliError> {
    let dir = data.join("instructions");
    let listed = manifest(&dir.join("manifest.tsv"), false)?;
    // One project per repository: its files are imported together, as `engram import`
    // would in a checkout of it.
    let mut by_repo: BTreeMap<String, Vec<&Listed>> = BTreeMap::new();
    for l in &listed {
        by_repo.entry(l.repo.clone()).or_default().push(l);
    }
    let mut imported: Vec<(&Listed, FileImport)> = Vec::new();
    let (mut rows_before, mut rows_after) = ((0, 0, 0), (0, 0, 0));
    let mut unchanged_files = 0;
    for (repo, files) in &by_repo {
        let engram = super::open_memory(format!("instructions-{repo}"), None, args, target).await?;
        let request = ImportRequest {
            files: files
                .iter()
                .map(|l| read(&dir.join(&l.name), &l.path))
                .collect::<Result<_, _>>()?,
        };
        let first = engram.import_instructions(request.clone()).await?;
        let before = rows(&engram).await?;
        let again = engram.import_instructions(request).await?;
        let after = rows(&engram).await?;
        unchanged_files += again.files.iter().filter(|f| f.unchanged_file).count();
        rows_before = add(rows_before, before);
        rows_after = add(rows_after, after);
        imported.extend(files.iter().copied().zip(first.files));
    }
    imported.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    let first_files: Vec<&FileImport> = imported.iter().map(|(_, f)| f).collect();
    // Each repository is a project of its own: ids are its own.
    let mut added: HashMap<&str, HashMap<String, String>> = HashMap::new();
    for (l, f) in &imported {
        added
            .entry(l.repo.as_str())
            .or_default()
            .extend(added_texts(std::iter::once(f)));
    }
    let listed: Vec<&Listed> = imported.iter().map(|(l, _)| *l).collect();
    let (history, scores) = history(args, &dir.join("history"), target).await?;
    if json_out {
        let files: Vec<_> = first_files
            .iter()
            .zip(&listed)
            .map(|(f, l)| json!({"name": l.name, "format": f.format, "counts": counts(f), "unresolved": f.unresolved}))
            .collect();
        say!(
            "{}",
            json!({"files": files, "reimport": {"unchangedFiles": unchanged_files, "rowsBefore": rows_before, "rowsAfter": rows_after}, "history": history, "updates": scores.iter().map(|(folder, t)| {
                let (precision, recall) = t.precision_recall();
                json!({"folder": folder, "precision": precision, "recall": recall, "right": t.right, "wrong": t.wrong, "missed": t.missed})
            }).collect::<Vec<_>>()})
        );
        return Ok(());
    }
    say!(
        "import of {} files from {} repositories ({} rules)",
        first_files.len(),
        by_repo.len(),
        first_files.iter().map(|f| f.rules.len()).sum::<usize>()
    );
    say!(
        "  {:<86} {:>5} {:>5} {:>6}  types",
        "file",
        "rules",
        "new",
        "merged"
    );
    for (file, l) in first_files.iter().zip(&listed) {
        let mut types: BTreeMap<&str, usize> = BTreeMap::new();
        for rule in &file.rules {
            *types.entry(rule.memory_type.as_str()).or_default() += 1;
        }
        let types: Vec<String> = types.iter().map(|(t, n)| format!("{t} {n}")).collect();
        say!(
            "  {:<86} {:>5} {:>5} {:>6}  {}",
            l.name,
            file.rules.len(),
            file.count(RuleOutcome::Added),
            file.count(RuleOutcome::Merged),
            types.join(", ")
        );
        if !file.unresolved.is_empty() {
            say!("      unresolved imports: {}", file.unresolved.join(", "));
        }
        if args.explain.as_deref().is_some_and(|n| l.name.contains(n)) {
            explain(file, &added[l.repo.as_str()]);
        }
    }
    say!(
        "re-import: {unchanged_files} of {} files unchanged; rows (memories, history, origins) {rows_before:?} -> {rows_after:?}",
        first_files.len()
    );
    say!("history: versions imported in order (rules / unchanged / reformatted / revised / added / merged / retired)");
    for (folder, steps) in &history {
        say!("  {folder}");
        for step in steps {
            say!("    {step}");
        }
    }
    print_scores(&scores);
    Ok(())
}

/// Imports each repository's history in commit order into a project of its own: at each
/// commit, every version taken at it (the files a checkout of that commit holds) in one
/// request, so a rule that moves to another file in the same commit moves with it. One
/// line per file version.
async fn history(
    args: &EvalArgs,
    dir: &Path,
    target: &Target,
) -> Result<
    (
        BTreeMap<String, Vec<String>>,
        BTreeMap<String, updates::Tally>,
    ),
    CliError,
> {
    let listed = manifest(&dir.join("manifest.tsv"), true)?;
    let mut by_repo: BTreeMap<&str, BTreeMap<&str, Vec<&Listed>>> = BTreeMap::new();
    for l in &listed {
        by_repo
            .entry(l.repo.as_str())
            .or_default()
            .entry(l.commit.as_str())
            .or_default()
            .push(l);
    }
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut scores: BTreeMap<String, updates::Tally> = BTreeMap::new();
    for (repo, commits) in by_repo {
        let engram = super::open_memory(format!("history-{repo}"), None, args, target).await?;
        // The text each memory was added with, for saying what a rule merged into.
        let mut added: HashMap<String, String> = HashMap::new();
        // Each file's rules at its latest import, by its path in the repository.
        let mut latest: HashMap<String, Vec<updates::Imported>> = HashMap::new();
        // By date, and among commits of one day by their versions' numbers (the folders
        // number their versions in history order).
        let mut commits: Vec<Vec<&Listed>> = commits.into_values().collect();
        commits.sort_by_key(|versions| {
            let number = versions.iter().map(|v| v.name.get(..2).unwrap_or("")).min();
            (versions[0].date.clone(), number.unwrap_or("").to_owned())
        });
        for versions in &commits {
            let files = versions
                .iter()
                .map(|v| {
                    read(
                        &dir.join(v.folder.as_deref().unwrap_or("")).join(&v.name),
                        &v.path,
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let report = engram.import_instructions(ImportRequest { files }).await?;
            let before: Vec<Option<Vec<updates::Imported>>> = versions
                .iter()
                .zip(&report.files)
                .map(|(v, f)| latest.insert(v.path.clone(), updates::rules_of(f)))
                .collect();
            let said: HashSet<String> = latest
                .values()
                .flatten()
                .map(|rule| updates::normalized(&rule.text))
                .collect();
            for (version, old) in versions.iter().zip(&before) {
                if let Some(old) = old {
                    let tally = updates::score(&engram, old, &said).await?;
                    let folder = version.folder.clone().unwrap_or_default();
                    scores.entry(folder).or_default().add(&tally);
                }
            }
            added.extend(added_texts(report.files.iter()));
            for (version, f) in versions.iter().zip(&report.files) {
                let folder = version.folder.clone().unwrap_or_default();
                out.entry(folder.clone()).or_default().push(format!(
                    "{:<28} {:>4} / {:>4} / {:>3} / {:>3} / {:>3} / {:>3} / {:>3}",
                    version.name,
                    f.rules.len(),
                    f.count(RuleOutcome::Unchanged),
                    f.count(RuleOutcome::Reformatted),
                    f.count(RuleOutcome::Revised),
                    f.count(RuleOutcome::Added),
                    f.count(RuleOutcome::Merged),
                    f.retired.len()
                ));
                if args.explain.as_deref().is_some_and(|n| folder.contains(n)) {
                    say!("    {folder} {}", version.name);
                    explain(f, &added);
                }
            }
        }
    }
    Ok((out, scores))
}

/// Prints each folder's precision and recall of supersede/retire and the pooled figures,
/// with every rule acted on wrongly and every miss.
fn print_scores(scores: &BTreeMap<String, updates::Tally>) {
    say!("supersede/retire against the versions' own label (precision / recall: right, wrong, missed)");
    let mut all = updates::Tally::default();
    for (folder, tally) in scores {
        let (precision, recall) = tally.precision_recall();
        say!(
            "  {folder:<62} {precision:.2} / {recall:.2}: {}, {}, {}",
            tally.right,
            tally.wrong.len(),
            tally.missed.len()
        );
        all.add(tally);
    }
    let (precision, recall) = all.precision_recall();
    say!(
        "  {:<62} {precision:.2} / {recall:.2}: {}, {}, {}",
        "all",
        all.right,
        all.wrong.len(),
        all.missed.len()
    );
    for text in &all.wrong {
        say!("    acted on, yet kept: {text}");
    }
    for text in &all.missed {
        say!("    changed or went, missed: {text}");
    }
}

/// The text each memory was first added with, by memory id.
fn added_texts<'a>(files: impl Iterator<Item = &'a FileImport>) -> HashMap<String, String> {
    files
        .flat_map(|f| f.rules.iter())
        .filter(|r| r.outcome == RuleOutcome::Added)
        .map(|r| (r.id.clone(), r.text.clone()))
        .collect()
}

/// Prints a file's rules with what became of each; a merged rule with the text of the
/// memory it merged into, when that reads differently.
fn explain(file: &FileImport, added: &HashMap<String, String>) {
    for rule in &file.rules {
        let text: String = rule.text.replace('\n', " ⏎ ").chars().take(150).collect();
        say!(
            "      L{:<4} {:<11} {:<16} {} {}",
            rule.line,
            format!("{:?}", rule.outcome).to_lowercase(),
            rule.memory_type.as_str(),
            if rule.files.is_empty() {
                String::new()
            } else {
                format!("[{}]", rule.files.join(", "))
            },
            text
        );
        if rule.outcome == RuleOutcome::Merged {
            if let Some(into) = added.get(&rule.id).filter(|into| **into != rule.text) {
                let into: String = into.replace('\n', " ⏎ ").chars().take(150).collect();
                say!("            into: {into}");
            }
        }
    }
    for retired in &file.retired {
        let text: String = retired
            .text
            .replace('\n', " ⏎ ")
            .chars()
            .take(150)
            .collect();
        say!(
            "      L{:<4} retired                      {text}",
            retired.line
        );
    }
}

fn counts(file: &FileImport) -> serde_json::Value {
    json!({
        "rules": file.rules.len(),
        "added": file.count(RuleOutcome::Added),
        "merged": file.count(RuleOutcome::Merged),
        "unchanged": file.count(RuleOutcome::Unchanged),
        "reformatted": file.count(RuleOutcome::Reformatted),
        "revised": file.count(RuleOutcome::Revised),
        "retired": file.retired.len(),
    })
}

/// The manifest's rows: `file, repo, commit, path, …` (or `folder, file, repo, path, …`
/// for the history set).
pub(super) fn manifest(path: &Path, history: bool) -> Result<Vec<Listed>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
    let mut listed = Vec::new();
    for line in text.lines().skip(1) {
        let cells: Vec<&str> = line.split('\t').collect();
        let row = if history {
            let folder = cells.first().map(|f| (*f).to_owned());
            (cells.get(1), cells.get(2), cells.get(3), folder)
        } else {
            (cells.first(), cells.get(1), cells.get(3), None)
        };
        let cell = |i: usize| cells.get(i).map_or(String::new(), |c| (*c).to_owned());
        let (commit, date) = if history {
            (cell(4), cell(5))
        } else {
            (cell(2), String::new())
        };
        if let (Some(name), Some(repo), Some(path), folder) = row {
            listed.push(Listed {
                commit,
                date,
                name: (*name).to_owned(),
                repo: (*repo).to_owned(),
                path: (*path).to_owned(),
                folder,
            });
        }
    }
    Ok(listed)
}

pub(super) fn read(file: &Path, path: &str) -> Result<InstructionFile, CliError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", file.display())))?;
    Ok(InstructionFile {
        path: path.to_owned(),
        text,
    })
}

fn add(a: (i64, i64, i64), b: (i64, i64, i64)) -> (i64, i64, i64) {
    (a.0 + b.0, a.1 + b.1, a.2 + b.2)
}

/// Rows of the tables an import writes: memories, history entries, origins.
async fn rows<D: Database>(engram: &Engram<D>) -> Result<(i64, i64, i64), CliError> {
    let statements: Vec<Statement> = ["memories", "memory_history", "memory_origins"]
        .iter()
        .map(|t| Statement::new(format!("SELECT count(*) FROM {t}")))
        .collect();
    let answers = engram
        .database()
        .pipeline(&statements)
        .await
        .map_err(engram::EngramError::from)?;
    let mut counts = [0i64; 3];
    for (count, answer) in counts.iter_mut().zip(answers) {
        let rows =
            answer.map_err(|e| engram::EngramError::from(engram_store::StoreError::Sql(e)))?;
        *count = rows
            .rows
            .first()
            .and_then(|r| r.first())
            .and_then(|v| v.as_i64("count").ok())
            .unwrap_or(0);
    }
    Ok((counts[0], counts[1], counts[2]))
}
