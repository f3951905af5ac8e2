//! `engram-eval observer`: the observer replayed over the development trajectories and
//! transcripts. For each trajectory, whether the files the real fix changed
//! (`swebench/dev_instances.jsonl` `gold_files`) are all among the observer's five hottest
//! files; what it promoted per session; and the cost per event and per finalize.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Value};

use super::{percentile, EvalArgs};
use crate::observe::{recordings, replay_file};
use crate::{CliError, Target};

/// Hot files that count as the observer's answer.
const TOP: usize = 5;

pub async fn run(
    args: &EvalArgs,
    data: &Path,
    target: &Target,
    json_out: bool,
) -> Result<(), CliError> {
    let trajectories = data.join("trajectories");
    let instances = data.join("swebench/dev_instances.jsonl");
    if !trajectories.is_dir() || !instances.is_file() {
        say!(
            "skipping observer eval: {} or {} is missing",
            trajectories.display(),
            instances.display()
        );
        return Ok(());
    }
    let gold = gold_files(&instances)?;
    let engram = super::open_memory("observer-eval", None, args, target).await?;

    let mut files = recordings(&[trajectories])?;
    if let Some(n) = args.queries {
        files.truncate(n);
    }
    let mut rows = Vec::new();
    let (mut resolved, mut resolved_hits, mut all_hits) = (0usize, 0usize, 0usize);
    let mut event_micros: Vec<f64> = Vec::new();
    let mut finalize_micros: Vec<f64> = Vec::new();
    let mut promoted_resolved = 0usize;
    for path in &files {
        let replayed = replay_file(&engram, path, "auto", &[]).await?;
        let id = replayed.session.id.clone();
        let Some(gold) = gold.get(&id) else {
            eprintln!("{id}: not in dev_instances.jsonl, skipped");
            continue;
        };
        let top: Vec<&str> = replayed
            .report
            .hot_files
            .iter()
            .take(TOP)
            .map(|h| h.path.as_str())
            .collect();
        let hit = gold.iter().all(|g| top.contains(&g.as_str()));
        let success = replayed.report.outcome == engram::observer::Outcome::Success;
        all_hits += usize::from(hit);
        if success {
            resolved += 1;
            resolved_hits += usize::from(hit);
            promoted_resolved += replayed.report.promoted.len();
        }
        event_micros.extend(&replayed.event_micros);
        finalize_micros.push(replayed.finalize_micros);
        if !json_out {
            say!(
                "{} {id:<32} {:<8} gold {:?} top5 {:?} promoted {}",
                if hit { "hit " } else { "miss" },
                if success { "resolved" } else { "failed" },
                gold,
                top,
                replayed.report.promoted.len()
            );
        }
        rows.push(json!({
            "instance": id, "resolved": success, "hit": hit, "gold": gold, "top": top,
            "promoted": replayed.report.promoted.iter().map(|m| json!({
                "signal": m.signal.map(|s| s.as_str()), "type": m.memory_type.as_str(),
                "confidence": m.confidence, "steps": m.evidence_steps, "content": m.content,
            })).collect::<Vec<_>>(),
        }));
    }
    let sessions = rows.len();
    event_micros.sort_by(f64::total_cmp);
    finalize_micros.sort_by(f64::total_cmp);
    let mean = |v: &[f64]| {
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let summary = json!({
        "sessions": sessions,
        "resolved": resolved,
        "resolvedTop5": resolved_hits,
        "resolvedTop5Rate": ratio(resolved_hits, resolved),
        "allTop5Rate": ratio(all_hits, sessions),
        "promotedPerResolvedSession": ratio(promoted_resolved, resolved),
        "events": event_micros.len(),
        "eventMicrosMean": mean(&event_micros),
        "eventMicrosP99": percentile(&event_micros, 0.99),
        "finalizeMillisMean": mean(&finalize_micros) / 1000.0,
        "finalizeMillisP99": percentile(&finalize_micros, 0.99) / 1000.0,
    });
    if json_out {
        say!("{}", json!({ "summary": summary, "sessions": rows }));
    } else {
        say!(
            "\nresolved sessions with every gold file in the top {TOP}: {resolved_hits}/{resolved} = {:.3} (all sessions {all_hits}/{sessions} = {:.3})",
            ratio(resolved_hits, resolved),
            ratio(all_hits, sessions)
        );
        say!(
            "memories promoted per resolved session: {:.2}",
            ratio(promoted_resolved, resolved)
        );
        say!(
            "observe: {} events, mean {:.2} µs, p99 {:.2} µs per event; finalize (with the database): mean {:.2} ms, p99 {:.2} ms",
            event_micros.len(),
            mean(&event_micros),
            percentile(&event_micros, 0.99),
            mean(&finalize_micros) / 1000.0,
            percentile(&finalize_micros, 0.99) / 1000.0
        );
    }
    Ok(())
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// `instance_id` → the files its real fix changed, from `swebench/*_instances.jsonl`.
pub(super) fn gold_files(path: &Path) -> Result<HashMap<String, Vec<String>>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
    let mut out = HashMap::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: Value = serde_json::from_str(line)
            .map_err(|e| CliError::Usage(format!("{} line {}: {e}", path.display(), i + 1)))?;
        let id = v
            .get("instance_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let files = v
            .get("gold_files")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        out.insert(id, files);
    }
    Ok(out)
}
