//! `engram-eval staleness`: pytest indexed at one release, memories attached to its code,
//! then the next release indexed over it. The memories the index flags stale are scored
//! against the graph's own diff: a memory should be flagged exactly when the symbol it
//! was made from changed or went, or its file was deleted.
//!
//! The memories are made mechanically from the first release's graph, three kinds per
//! sampled definition: one targeting the definition's node, one naming it (its last name
//! part, in backticks, as people write it) in a memory about its file, and one about its
//! file that names no symbol. Beside the scores: what the rule engram had before (flag
//! every memory about a changed or deleted file) would have flagged.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use engram::{IndexOptions, MemoryType, NewMemory, SourceFile};
use serde_json::json;

use super::EvalArgs;
use crate::{CliError, Target};

/// Every this many definitions of the first release becomes a memory of each kind.
const SAMPLE_EVERY: usize = 3;
/// The releases compared unless `--from`/`--to`-style queries say otherwise.
const FROM: &str = "4.4.1";
const TO: &str = "4.5.0";

/// One memory made for the eval, and what the graph's diff says should happen to it.
struct Made {
    kind: &'static str,
    id: String,
    /// The definition it was made from (for a file memory, any of its file's).
    node: String,
    file: String,
}

/// Scores of one kind of memory.
#[derive(Default)]
struct Score {
    memories: u64,
    should_flag: u64,
    flagged: u64,
    right: u64,
    /// What flagging every memory about a changed or deleted file flags.
    file_rule_flags: u64,
}

pub async fn run(args: &EvalArgs, target: &Target, json_out: bool) -> Result<(), CliError> {
    let corpora = args
        .corpora
        .clone()
        .or_else(|| super::home_cache("corpora/swebench"))
        .unwrap_or_else(|| std::path::PathBuf::from("corpora/swebench"));
    let release = |v: &str| -> Result<Vec<SourceFile>, CliError> {
        let dir = corpora.join(format!("pytest-{v}"));
        if !dir.join(".complete").exists() {
            return Err(CliError::Usage(format!(
                "no pytest {v} at {} (run scripts/fetch-swebench.sh {FROM} {TO})",
                dir.display()
            )));
        }
        package_files(&dir)
    };
    let (old, new) = (release(FROM)?, release(TO)?);
    let engram = super::open_memory("staleness-eval", None, args, target).await?;
    let complete = IndexOptions {
        complete: true,
        ..IndexOptions::default()
    };
    engram.index_files(&old, &complete).await?;
    let made = remember_about(&engram, &old).await?;
    let report = engram.index_files(&new, &complete).await?;

    let changed: BTreeSet<&str> = report.changed_symbols.iter().map(String::as_str).collect();
    let renamed: BTreeSet<&str> = report.renamed.iter().map(|r| r.from.as_str()).collect();
    let new_paths: BTreeSet<&str> = new.iter().map(|f| f.path.as_str()).collect();
    let old_contents: BTreeMap<&str, &str> = old
        .iter()
        .map(|f| (f.path.as_str(), f.content.as_str()))
        .collect();
    let deleted = |file: &str| !new_paths.contains(file) && !renamed.contains(file);
    let file_changed = |file: &str| {
        deleted(file)
            || new
                .iter()
                .find(|f| f.path == file)
                .is_some_and(|f| old_contents.get(file) != Some(&f.content.as_str()))
    };
    let flagged: BTreeMap<&str, &str> = report
        .flagged
        .iter()
        .map(|f| (f.id.as_str(), f.reason.as_str()))
        .collect();
    let mut scores: BTreeMap<&str, Score> = BTreeMap::new();
    let mut wrong: Vec<String> = Vec::new();
    for memory in &made {
        let should = match memory.kind {
            "file" => deleted(&memory.file),
            _ => changed.contains(memory.node.as_str()) || deleted(&memory.file),
        };
        let got = flagged.get(memory.id.as_str());
        if should != got.is_some() {
            wrong.push(format!(
                "  {} {} about {}: {}",
                if should { "missed" } else { "false flag" },
                memory.kind,
                memory.node,
                got.copied().unwrap_or("not flagged")
            ));
        }
        let got = got.is_some();
        let score = scores.entry(memory.kind).or_default();
        score.memories += 1;
        score.should_flag += u64::from(should);
        score.flagged += u64::from(got);
        score.right += u64::from(should && got);
        score.file_rule_flags += u64::from(file_changed(&memory.file));
    }
    print_scores(&scores, &report, json_out);
    if !json_out {
        for line in &wrong {
            say!("{line}");
        }
    }
    Ok(())
}

/// The release's Python files under `src/` (the package; its tests are not what memories
/// are about).
fn package_files(dir: &Path) -> Result<Vec<SourceFile>, CliError> {
    let mut files = super::swebench::python_files(dir)?;
    files.retain(|f| f.path.starts_with("src/"));
    Ok(files)
}

/// Remembers the three kinds of memory about every [`SAMPLE_EVERY`]th definition of the
/// first release's graph.
async fn remember_about(
    engram: &engram::Engram<engram_libsql::LocalDatabase>,
    files: &[SourceFile],
) -> Result<Vec<Made>, CliError> {
    let graph =
        engram_code::graph_of_files(files.iter().map(|f| (f.path.as_str(), f.content.as_str())));
    let mut made = Vec::new();
    let mut named: BTreeSet<(String, String)> = BTreeSet::new();
    let mut about_file: BTreeSet<String> = BTreeSet::new();
    let definitions = graph.nodes.iter().filter(|n| n.kind != "file");
    for node in definitions.step_by(SAMPLE_EVERY) {
        let short = node
            .label
            .rsplit('.')
            .next()
            .unwrap_or(&node.label)
            .to_owned();
        let mut targeted = NewMemory::new(
            MemoryType::Gotcha,
            format!("Check the callers of {} before changing it", node.label),
        );
        targeted.target_node_id = Some(node.id.clone());
        targeted.related_files = vec![node.path.clone()];
        made.push(remembered(engram, "target", targeted, node).await?);
        // One memory per name and file: two alike would merge.
        if named.insert((node.path.clone(), short.clone())) {
            let mut by_name = NewMemory::new(
                MemoryType::Gotcha,
                format!(
                    "`{short}` has callers outside {}: check them first",
                    node.path
                ),
            );
            by_name.related_files = vec![node.path.clone()];
            made.push(remembered(engram, "named", by_name, node).await?);
        }
        if about_file.insert(node.path.clone()) {
            let mut file = NewMemory::new(
                MemoryType::Pattern,
                format!("{} is loaded by the plugin manager at start-up", node.path),
            );
            file.related_files = vec![node.path.clone()];
            made.push(remembered(engram, "file", file, node).await?);
        }
    }
    Ok(made)
}

async fn remembered(
    engram: &engram::Engram<engram_libsql::LocalDatabase>,
    kind: &'static str,
    memory: NewMemory,
    node: &engram_code::GraphNode,
) -> Result<Made, CliError> {
    let text = memory.content.clone();
    let stored = engram.remember(memory).await?;
    if stored.merged || stored.superseded.is_some() {
        let other = stored.superseded.as_deref().unwrap_or(&stored.id);
        let history = engram.history(other).await?;
        let said: Vec<String> = history
            .iter()
            .map(|e| format!("{}: {} {:?}", e.action.as_str(), e.reason, e.before))
            .collect();
        return Err(CliError::Usage(format!(
            "{text:?} was consolidated with memory {other} ({}): the eval's texts must differ",
            said.join("; ")
        )));
    }
    Ok(Made {
        kind,
        id: stored.id,
        node: node.id.clone(),
        file: node.path.clone(),
    })
}

fn print_scores(scores: &BTreeMap<&str, Score>, report: &engram::IndexReport, json_out: bool) {
    let rows: Vec<serde_json::Value> = scores
        .iter()
        .map(|(kind, s)| {
            json!({
                "kind": kind, "memories": s.memories, "shouldFlag": s.should_flag,
                "flagged": s.flagged, "right": s.right,
                "falseFlags": s.flagged - s.right, "missed": s.should_flag - s.right,
                "fileRuleFlags": s.file_rule_flags,
            })
        })
        .collect();
    if json_out {
        say!(
            "{}",
            json!({
                "from": FROM, "to": TO, "changedFiles": report.changed,
                "deletedFiles": report.deleted, "renamedFiles": report.renamed.len(),
                "changedSymbols": report.changed_symbols.len(), "kinds": rows,
            })
        );
        return;
    }
    say!(
        "pytest {FROM} → {TO}: {} files changed, {} deleted, {} renamed; {} symbols changed or removed",
        report.changed,
        report.deleted,
        report.renamed.len(),
        report.changed_symbols.len()
    );
    say!(
        "{:<8} {:>8} {:>11} {:>8} {:>6} {:>11} {:>7} {:>14}",
        "kind",
        "memories",
        "should flag",
        "flagged",
        "right",
        "false flags",
        "missed",
        "file rule flags"
    );
    for (kind, s) in scores {
        say!(
            "{:<8} {:>8} {:>11} {:>8} {:>6} {:>11} {:>7} {:>14}",
            kind,
            s.memories,
            s.should_flag,
            s.flagged,
            s.right,
            s.flagged - s.right,
            s.should_flag - s.right,
            s.file_rule_flags
        );
    }
}
