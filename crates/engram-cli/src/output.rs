//! Human and JSON output.

use engram::{IntegrityReport, KeywordRebuild, Memory, Remembered, SearchQuery, SearchResponse};

use crate::backup::Backup;
use serde_json::json;

use crate::CliError;

/// Prints what `remember` stored.
pub fn remembered(stored: &Remembered, json: bool) {
    if json {
        say!("{}", serde_json::to_string(stored).unwrap_or_default());
        return;
    }
    if stored.merged {
        say!(
            "merged into {} (it says the same; counted once more)",
            stored.id
        );
    } else {
        say!("remembered {}", stored.id);
    }
    if let Some(old) = &stored.superseded {
        say!("  supersedes {old} (retired; `engram history {old}` says why)");
    }
    if let Some(other) = &stored.conflicts_with {
        say!("  contradicts {other}, which is trusted more: both kept, this one needs review");
    }
    if !stored.redacted.is_empty() {
        say!("  redacted secrets: {}", stored.redacted.join(", "));
    }
    if stored.secret_scan_skipped {
        say!("  warning: the secret scanner was unavailable; memory flagged for audit");
    }
    if let Some(error) = &stored.embedding_error {
        eprintln!("warning: stored keyword-searchable only: {error}");
    }
}

/// Prints the answers of a batch: each under its query's text, or one JSON array.
pub fn searches(queries: &[SearchQuery], responses: &[SearchResponse], json: bool, explain: bool) {
    if json {
        say!("{}", serde_json::to_string(responses).unwrap_or_default());
        return;
    }
    for (i, (query, response)) in queries.iter().zip(responses).enumerate() {
        say!("[{i}] {}", query.text);
        search(response, false, explain);
    }
}

/// Prints a search's hits (with `explain`, their score breakdowns and the stage timings).
pub fn search(response: &SearchResponse, json: bool, explain: bool) {
    if json {
        say!("{}", serde_json::to_string(response).unwrap_or_default());
        return;
    }
    for warning in &response.warnings {
        eprintln!("warning: {}", crate::for_terminal(warning));
    }
    if response.hits.is_empty() {
        match &response.empty_reason {
            Some(reason) => say!("  nothing to inject: {reason}"),
            None => say!("  no memories matched"),
        }
    }
    for (i, hit) in response.hits.iter().enumerate() {
        say!(
            "  {}. [{}] {} (relevance {:.2}, id {})",
            i + 1,
            hit.memory.memory_type,
            hit.memory.content,
            hit.breakdown.relevance,
            &hit.memory.id
        );
        if !hit.memory.related_files.is_empty() {
            say!("     files: {}", hit.memory.related_files.join(", "));
        }
        for old in &hit.superseded {
            say!("     replaced: {} (id {}, retired)", old.content, &old.id);
        }
        if explain {
            let b = &hit.breakdown;
            let path = |name: &str, p: &Option<engram::PathScore>| {
                p.map(|p| {
                    format!(
                        "{name} #{} ({:.3}) × {:.2} × {:.2} = {:.5}",
                        p.rank, p.metric, p.weight, p.scale, p.contribution
                    )
                })
            };
            let paths: Vec<String> = [
                path("keyword", &b.keyword),
                path("dense", &b.dense),
                path("graph", &b.graph),
            ]
            .into_iter()
            .flatten()
            .collect();
            say!("     fused {:.5}: {}", b.fused, paths.join(" + "));
            if b.graph_boost > 0.0 {
                say!(
                    "     graph boost +{:.5} (neighbours {})",
                    b.graph_boost,
                    b.boosted_by.join(", ")
                );
            }
            say!(
                "     × phase {:.2} × trust {:.2} × role {:.2} × confidence {:.2} × decay {:.3} = score {:.5}",
                b.phase_weight,
                b.trust_weight,
                b.role_weight,
                b.confidence,
                b.decay,
                b.score
            );
            say!(
                "     relevance {:.2} from similarity {} and {:.0}% of the query's terms",
                b.relevance,
                b.dense
                    .map_or("-".to_owned(), |d| format!("{:.2}", d.metric)),
                b.coverage * 100.0
            );
        }
    }
    if let Some(packed) = &response.packed {
        say!(
            "\npacked context ({} of {} tokens, {} omitted):\n{}",
            packed.tokens,
            packed.budget,
            packed.omitted.len(),
            packed.text
        );
    }
    if explain {
        let t = &response.timings;
        say!(
            "query type {:?}, {} candidates; µs: analysis {:.0}, embed {:.0}, candidates {:.0}, \
             ranking {:.0}, rerank {:.0}, packing {:.0}, total {:.0}",
            response.query_type,
            response.candidates,
            t.analysis,
            t.embed,
            t.candidates,
            t.ranking,
            t.rerank,
            t.packing,
            t.total
        );
    }
}

/// Prints one memory.
pub fn memory(memory: &Memory, json: bool) {
    if json {
        say!("{}", serde_json::to_string(memory).unwrap_or_default());
        return;
    }
    say!(
        "{} [{}] confidence {:.2}",
        memory.id,
        memory.memory_type,
        memory.confidence
    );
    say!("{}", memory.content);
    if !memory.tags.is_empty() {
        say!("tags: {}", memory.tags.join(", "));
    }
    if !memory.related_files.is_empty() {
        say!("files: {}", memory.related_files.join(", "));
    }
    say!("created {} by {}", memory.created_at, memory.source);
}

/// Prints that a memory was forgotten.
pub fn forgotten(id: &str, json: bool) {
    if json {
        say!("{}", json!({ "forgotten": id }));
    } else {
        say!("forgot {id}");
    }
}

fn backup_json(backup: &Backup) -> serde_json::Value {
    json!({
        "path": backup.path.display().to_string(),
        "takenAtMs": backup.taken_at_ms,
        "memories": backup.memories,
    })
}

/// Prints what `engram doctor` found.
pub fn integrity(report: &IntegrityReport, backups: &[Backup], json: bool) {
    if json {
        let backups: Vec<_> = backups.iter().map(backup_json).collect();
        say!("{}", json!({ "integrity": report, "backups": backups }));
        return;
    }
    say!(
        "memories: {} ({} live), keyword index rows: {}",
        report.memories,
        report.live_memories,
        report.keyword_rows
    );
    if report.is_whole() {
        say!("the database is whole");
    }
    for problem in &report.problems {
        say!("problem: {problem}");
    }
    if !report.is_whole() {
        let fix = if report.keyword_index_only {
            "`engram repair` rebuilds the keyword index from the memories"
        } else {
            "`engram repair --restore` brings the newest backup back"
        };
        say!("fix: {fix}");
    }
    match backups.first() {
        Some(newest) => say!(
            "backups: {} (newest {} with {} memories)",
            backups.len(),
            newest.path.display(),
            newest.memories
        ),
        None => say!("backups: none yet"),
    }
}

/// Prints what `engram repair` rebuilt.
pub fn repaired(
    before: &IntegrityReport,
    rebuilt: KeywordRebuild,
    after: &IntegrityReport,
    json: bool,
) {
    if json {
        say!(
            "{}",
            json!({ "before": before, "rebuilt": rebuilt, "after": after })
        );
        return;
    }
    say!(
        "rebuilt the keyword index: {} live memories indexed",
        rebuilt.indexed
    );
    if after.is_whole() {
        say!("the database is whole");
    }
    for problem in &after.problems {
        say!("still wrong: {problem}");
    }
}

/// Prints the backup `engram repair --restore` put back.
pub fn restored(db: &std::path::Path, backup: &Backup, json: bool) {
    if json {
        say!(
            "{}",
            json!({ "restored": backup_json(backup), "db": db.display().to_string() })
        );
    } else {
        say!(
            "restored {} from {} ({} memories); the replaced file is kept beside it as {}.damaged-*",
            db.display(),
            backup.path.display(),
            backup.memories,
            db.display()
        );
    }
}

/// Prints the backup `engram backup` made.
pub fn backed_up(backup: &Backup, json: bool) {
    if json {
        say!("{}", backup_json(backup));
    } else {
        say!(
            "backed up {} memories to {}",
            backup.memories,
            backup.path.display()
        );
    }
}

/// Prints a failure to stderr (as JSON with `--json`).
pub fn error(error: &CliError, json: bool) {
    let (code, message, violations) = match error {
        CliError::Engram(e) => (e.code().as_str(), e.to_string(), e.violations().to_vec()),
        CliError::NotFound(id) => (
            engram::ErrorCode::NotFound.as_str(),
            format!("no memory with id {id}"),
            Vec::new(),
        ),
        CliError::Usage(m) => ("usage", m.clone(), Vec::new()),
    };
    if json {
        eprintln!(
            "{}",
            json!({ "error": { "code": code, "message": message, "violations": violations } })
        );
    } else {
        eprintln!("error: {}", crate::for_terminal(&message));
    }
}

/// Prints an embedding job's progress.
pub fn progress(progress: &engram::EmbedProgress, json: bool) {
    if json {
        say!("{}", serde_json::to_string(progress).unwrap_or_default());
    } else {
        say!(
            "embedded {}; {} remaining",
            progress.embedded,
            progress.remaining
        );
    }
}

/// Prints the embedder's state.
/// What `engram status` says about the agent hooks of the project.
#[derive(Debug)]
pub struct HooksView {
    /// Settings files that run `engram hook`.
    pub installed_in: Vec<std::path::PathBuf>,
    /// What the hooks have seen.
    pub status: engram::HookStatus,
    /// The last lines of the hook log.
    pub recent_errors: Vec<String>,
    /// The project's resident hook helpers running: (process id, started at).
    pub helpers: Vec<(u32, String)>,
}

/// Prints the embedder's and the hooks' state.
pub fn status(status: Option<&engram::EmbeddingStatus>, hooks: &HooksView, json: bool) {
    if json {
        let mut view = serde_json::to_value(&hooks.status).unwrap_or_default();
        view["installedIn"] = json!(hooks.installed_in);
        view["recentErrors"] = json!(hooks.recent_errors);
        view["helpers"] = json!(hooks
            .helpers
            .iter()
            .map(|(pid, since)| json!({"pid": pid, "startedAt": since}))
            .collect::<Vec<_>>());
        say!("{}", json!({ "embedder": status, "hooks": view }));
        return;
    }
    embedder_status(status);
    let where_ = if hooks.installed_in.is_empty() {
        "not installed".to_owned()
    } else {
        let files: Vec<String> = hooks
            .installed_in
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        format!("installed in {}", files.join(", "))
    };
    say!("claude code hooks: {where_}");
    let h = &hooks.status;
    say!(
        "  {} sessions observed ({} tool events); {} finalized, {} memories learned in the last five",
        h.sessions_logged,
        h.events_logged,
        h.sessions_finalized,
        h.learned_recently
    );
    if hooks.helpers.is_empty() {
        say!("  no resident helper (one starts with the next session)");
    }
    for (pid, since) in &hooks.helpers {
        say!("  resident helper: process {pid}, running since {since}");
    }
    if hooks.recent_errors.is_empty() {
        say!("  no hook errors");
    } else {
        say!("  last hook errors:");
        for line in &hooks.recent_errors {
            say!("    {line}");
        }
    }
}

fn embedder_status(status: Option<&engram::EmbeddingStatus>) {
    let Some(status) = status else {
        say!("no embedder: keyword search only");
        return;
    };
    let circuit = match status.circuit {
        engram::Circuit::Closed {
            consecutive_failures: 0,
        } => "healthy".to_owned(),
        engram::Circuit::Closed {
            consecutive_failures,
        } => format!("{consecutive_failures} recent failure(s)"),
        engram::Circuit::Open { retry_at } => format!(
            "circuit open (keyword-only) until {}",
            engram_core::time::rfc3339_from_millis(retry_at)
        ),
        engram::Circuit::HalfOpen => "circuit half-open: the next call is a trial".to_owned(),
    };
    say!(
        "embedder {} ({} dims): {circuit}",
        status.model,
        status.dims
    );
    say!(
        "{} memories waiting for a vector{}",
        status.pending,
        if status.pending > 0 {
            " (run `engram embed-pending`)"
        } else {
            ""
        }
    );
}

/// Whether `ENGRAM_VERBOSE` asks for diagnostics on stderr (the model's load time, one JSON
/// line per eval query). See [`verbose_value`].
pub fn verbose() -> bool {
    verbose_value(std::env::var_os("ENGRAM_VERBOSE").as_deref())
}

/// Whether a value of `ENGRAM_VERBOSE` turns diagnostics on: any value but empty, `0`,
/// `false`, `no` or `off` (in any case), so `ENGRAM_VERBOSE=0` means off as it reads.
fn verbose_value(value: Option<&std::ffi::OsStr>) -> bool {
    let Some(value) = value else {
        return false;
    };
    let value = value.to_string_lossy();
    let value = value.trim();
    !(value.is_empty()
        || ["0", "false", "no", "off"]
            .iter()
            .any(|off| value.eq_ignore_ascii_case(off)))
}

/// Prints a memory's history, oldest first.
pub fn history(entries: &[engram::HistoryEntry], json: bool) {
    if json {
        say!("{}", serde_json::to_string(entries).unwrap_or_default());
        return;
    }
    for entry in entries {
        let related = entry
            .related_id
            .as_deref()
            .map(|id| format!(" [{id}]"))
            .unwrap_or_default();
        say!(
            "{}  {:<11} by {}{}: {}",
            entry.at,
            entry.action.as_str(),
            entry.actor,
            related,
            engram_core::quote::for_terminal(&entry.reason)
        );
        if let Some(after) = entry.after.as_ref().and_then(|a| a.get("content")) {
            if let Some(text) = after.as_str() {
                say!("      wording: {}", engram_core::quote::for_terminal(text));
            }
        }
        if let Some(evidence) = entry.after.as_ref().and_then(evidence_line) {
            say!(
                "      evidence: {}",
                engram_core::quote::for_terminal(&evidence)
            );
        }
    }
}

/// What an observer memory stands on, from its `created` entry's `after`: `self_correction
/// at steps 10, 11 of session S`.
fn evidence_line(after: &serde_json::Value) -> Option<String> {
    let steps: Vec<String> = after
        .get("steps")?
        .as_array()?
        .iter()
        .map(|s| s.to_string())
        .collect();
    let signal = after
        .get("signal")
        .and_then(|s| s.as_str())
        .unwrap_or("observed");
    let session = after.get("session").and_then(|s| s.as_str()).unwrap_or("?");
    let noun = if steps.len() == 1 { "step" } else { "steps" };
    Some(format!(
        "{signal} at {noun} {} of session {session}",
        steps.join(", ")
    ))
}

/// Prints what a prune run did (or would do).
pub fn pruned(report: &engram::PruneReport, json: bool) {
    if json {
        say!("{}", serde_json::to_string(report).unwrap_or_default());
        return;
    }
    let verb = if report.dry_run { "would" } else { "did" };
    say!(
        "prune {verb}: retire {} decayed, evict {} over the cap, delete {} past the grace; live {} -> {}",
        report.retired.len(),
        report.evicted.len(),
        report.deleted.len(),
        report.live_before,
        report.live_after
    );
    for (what, decisions) in [
        ("retire", &report.retired),
        ("evict", &report.evicted),
        ("delete", &report.deleted),
    ] {
        for d in decisions {
            say!("  {what} {}: {}", d.id, d.reason);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::verbose_value;
    use std::ffi::OsStr;

    #[test]
    fn verbose_reads_off_values_as_off() {
        for on in ["1", "true", "yes", "on", "2"] {
            assert!(verbose_value(Some(OsStr::new(on))), "{on}");
        }
        for off in ["0", "false", "FALSE", "no", "Off", "", " 0 "] {
            assert!(!verbose_value(Some(OsStr::new(off))), "{off:?}");
        }
        assert!(!verbose_value(None));
    }
}
