//! `engram-eval audit`: everything the observer learns from the development trajectories
//! and transcripts, read as a person would: how many memories of each signal class, how
//! many cite a file that is not the project's, whether any comes from a retired template
//! class, and a printed sample of each class.
//!
//! Whether a file is the project's is judged apart from the observer's own rule: a file
//! the trajectory's final patch adds as new (the agent created it and left it: a
//! reproduction script, build output), a backup, build or cache file by its path, or a
//! file named as a one-off script (`reproduce_issue.py`, `debug_x.py`, `test_fix.py` at the
//! top of the repository) is not.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use engram::observer::paths::is_scratch_path;
use engram::observer::SignalClass;
use serde_json::{json, Value};

use super::EvalArgs;
use crate::observe::{recordings, replay_file};
use crate::{CliError, Target};

/// Memories printed per class.
const SAMPLE: usize = 6;

pub async fn run(
    args: &EvalArgs,
    data: &Path,
    target: &Target,
    json_out: bool,
) -> Result<(), CliError> {
    let folders: Vec<_> = ["trajectories", "transcripts"]
        .iter()
        .map(|f| data.join(f))
        .filter(|p| p.is_dir())
        .collect();
    if folders.is_empty() {
        return Err(CliError::Usage(format!(
            "no trajectories or transcripts under {}",
            data.display()
        )));
    }
    let mut files = recordings(&folders)?;
    if let Some(n) = args.queries {
        files.truncate(n);
    }
    let engram = super::open_memory("audit-eval", None, args, target).await?;
    let mut by_class: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut foreign: Vec<Value> = Vec::new();
    let mut retired = 0usize;
    let mut total = 0usize;
    let mut sessions = 0usize;
    for path in &files {
        let replayed = replay_file(&engram, path, "auto", &[]).await?;
        sessions += 1;
        let created = created_by_patch(path);
        let memories = replayed
            .report
            .promoted
            .iter()
            .chain(replayed.report.record.iter());
        for memory in memories {
            total += 1;
            let class = memory
                .signal
                .map_or("session_record", SignalClass::as_str)
                .to_owned();
            if memory.signal.is_some_and(SignalClass::retired) {
                retired += 1;
            }
            let entry = json!({
                "session": replayed.session.id, "class": class, "type": memory.memory_type.as_str(),
                "files": memory.files, "content": memory.content,
            });
            let not_projects: Vec<&String> = memory
                .files
                .iter()
                .filter(|f| !is_projects(f, &created))
                .collect();
            if !not_projects.is_empty() {
                foreign.push(json!({ "memory": entry, "files": not_projects }));
            }
            by_class.entry(class).or_default().push(entry);
        }
    }
    let counts: BTreeMap<&String, usize> = by_class.iter().map(|(c, m)| (c, m.len())).collect();
    if json_out {
        say!(
            "{}",
            json!({
                "sessions": sessions, "memories": total, "perClass": counts,
                "citingNonProjectFiles": foreign.len(), "retiredClasses": retired,
                "nonProject": foreign, "memoriesByClass": by_class,
            })
        );
        return Ok(());
    }
    say!("memory audit: {total} memories learned from {sessions} recorded sessions");
    for (class, memories) in &by_class {
        say!("\n== {class}: {} ==", memories.len());
        for memory in memories.iter().take(SAMPLE) {
            say!(
                "- [{}] {}",
                memory["session"].as_str().unwrap_or(""),
                memory["content"]
                    .as_str()
                    .unwrap_or("")
                    .replace('\n', "\n    ")
            );
        }
    }
    for item in &foreign {
        say!("non-project file cited: {}", item);
    }
    say!(
        "\nmemories citing a file that is not the project's: {} of {total}",
        foreign.len()
    );
    say!("memories from retired template classes: {retired}");
    Ok(())
}

/// Files a trajectory's final patch adds as new (`new file mode`): created by the agent.
fn created_by_patch(path: &Path) -> HashSet<String> {
    let mut out = HashSet::new();
    let Some(text) = std::fs::read_to_string(path).ok() else {
        return out;
    };
    let Ok(value) = serde_json::from_str::<Value>(&text) else {
        return out;
    };
    let patch = value
        .pointer("/info/submission")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut current: Option<&str> = None;
    for line in patch.lines() {
        if let Some(rest) = line.strip_prefix("diff --git a/") {
            current = rest.split(" b/").next();
        } else if line.starts_with("new file mode") {
            if let Some(file) = current {
                out.insert(file.to_owned());
            }
        }
    }
    out
}

/// Whether `file` is the project's own (see the module's comment).
fn is_projects(file: &str, created: &HashSet<String>) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file).to_ascii_lowercase();
    let top_level = !file.contains('/');
    let one_off = [
        "reproduce",
        "repro",
        "debug",
        "scratch",
        "temp",
        "tmp",
        "check_",
        "verify",
        "test_fix",
        "test_issue",
        "test_repro",
        "test_reproduce",
    ]
    .iter()
    .any(|p| name.starts_with(p));
    !(created.contains(file) || is_scratch_path(file) || (top_level && one_off))
}
