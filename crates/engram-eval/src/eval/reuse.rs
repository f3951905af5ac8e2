//! `engram-eval reuse`: experience brought back. The development trajectories of each
//! repository are replayed in the order of their issues; before each one whose real fix
//! shares a file with an earlier one's (a pair), the session-start context for its task is
//! asked for, as a new session on that task would get it. Scored per later task:
//!
//! - hit: the context brings back the record of an earlier session of a pair;
//! - recall: the share of the later fix's files (`gold_files`) the context names;
//! - tokens: what the context costs.
//!
//! Beside it, the baseline a person could write in an afternoon: BM25 over the earlier
//! tasks' texts, its top 1 and top 3 (the files those sessions changed count as named),
//! and the oracle (the best earlier session of a pair, always).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use engram::observer::scratchpad::task_text;
use engram::observer::transcript;
use engram::{Database, Engram, SessionStart};
use serde_json::{json, Value};

use super::EvalArgs;
use crate::observe::replay_file;
use crate::{CliError, Target};

/// The baseline's second form reads only this much of each task: an issue's title and
/// first lines, where most of what it is about is said.
const HEAD_CHARS: usize = 400;
/// Tokens the session-start context may cost.
const START_BUDGET: u32 = 800;

/// One development trajectory with what the evaluation knows of it.
struct Task {
    id: String,
    repo: String,
    number: u64,
    path: PathBuf,
    text: String,
    gold: Vec<String>,
    /// Files the session's trajectory changed (its final patch), for the baseline.
    changed: Vec<String>,
}

/// What one system brought back for one later task.
#[derive(Default, Clone, Copy)]
struct Score {
    hits: usize,
    recall: f64,
    tokens: usize,
    max_tokens: usize,
}

impl Score {
    fn add(&mut self, hit: bool, recall: f64, tokens: usize) {
        self.hits += usize::from(hit);
        self.recall += recall;
        self.tokens += tokens;
        self.max_tokens = self.max_tokens.max(tokens);
    }
}

pub async fn run(
    args: &EvalArgs,
    data: &Path,
    target: &Target,
    json_out: bool,
) -> Result<(), CliError> {
    let instances = data.join("swebench/dev_instances.jsonl");
    let folder = data.join("trajectories");
    if !folder.is_dir() || !instances.is_file() {
        return Err(CliError::Usage(format!(
            "the reuse eval needs {} and {}",
            folder.display(),
            instances.display()
        )));
    }
    let gold = super::observer::gold_files(&instances)?;
    let tasks = tasks(&folder, &gold)?;
    let mut by_repo: BTreeMap<String, Vec<&Task>> = BTreeMap::new();
    for task in &tasks {
        by_repo.entry(task.repo.clone()).or_default().push(task);
    }
    let model = super::cached_model(args, target, &[super::system("full")?])?;
    let mut engram_score = Score::default();
    let mut top1 = Score::default();
    let mut top3 = Score::default();
    let mut head1 = Score::default();
    let mut head3 = Score::default();
    let mut oracle = Score::default();
    let mut later_tasks = 0usize;
    let mut pairs = 0usize;
    let mut rows = Vec::new();
    for (repo, mut repo_tasks) in by_repo {
        repo_tasks.sort_by_key(|t| t.number);
        let engram =
            super::open_memory(format!("reuse-{repo}"), model.as_ref(), args, target).await?;
        let mut earlier: Vec<&Task> = Vec::new();
        for task in repo_tasks {
            let partners: Vec<&Task> = earlier
                .iter()
                .copied()
                .filter(|e| e.gold.iter().any(|g| task.gold.contains(g)))
                .collect();
            if !partners.is_empty() && args.queries.is_none_or(|n| later_tasks < n) {
                later_tasks += 1;
                pairs += partners.len();
                let asked = start_context(&engram, &task.text).await?;
                let partner_ids: HashSet<&str> = partners.iter().map(|p| p.id.as_str()).collect();
                let hit = asked
                    .sessions
                    .iter()
                    .any(|s| partner_ids.contains(s.as_str()));
                let recall = share_named(&task.gold, |f| asked.text.contains(f));
                engram_score.add(hit, recall, asked.tokens);
                let ranked = bm25_rank(&task.text, &earlier, usize::MAX);
                let ranked_heads = bm25_rank(&task.text, &earlier, HEAD_CHARS);
                for (k, score, ranked) in [
                    (1, &mut top1, &ranked),
                    (3, &mut top3, &ranked),
                    (1, &mut head1, &ranked_heads),
                    (3, &mut head3, &ranked_heads),
                ] {
                    let top: Vec<&Task> = ranked.iter().take(k).map(|&i| earlier[i]).collect();
                    let hit = top.iter().any(|t| partner_ids.contains(t.id.as_str()));
                    let recall = share_named(&task.gold, |f| {
                        top.iter().any(|t| t.changed.iter().any(|c| c == f))
                    });
                    score.add(hit, recall, 0);
                }
                let best = partners
                    .iter()
                    .map(|p| share_named(&task.gold, |f| p.changed.iter().any(|c| c == f)))
                    .fold(0.0, f64::max);
                oracle.add(true, best, 0);
                if !json_out {
                    say!(
                        "{} {:<30} partners {:?} context {:?} recall {recall:.2} tokens {}",
                        if hit { "hit " } else { "miss" },
                        task.id,
                        partners.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(),
                        asked.sessions,
                        asked.tokens
                    );
                }
                rows.push(json!({
                    "task": task.id, "partners": partners.iter().map(|p| &p.id).collect::<Vec<_>>(),
                    "hit": hit, "recall": recall, "tokens": asked.tokens,
                    "sessions": asked.sessions, "context": asked.text,
                    "bm25Top3": ranked.iter().take(3).map(|&i| &earlier[i].id).collect::<Vec<_>>(),
                }));
            }
            replay_file(&engram, &task.path, "auto", &[]).await?;
            earlier.push(task);
        }
    }
    let n = later_tasks.max(1) as f64;
    let line = |name: &str, s: &Score, tokens: bool| {
        let cost = if tokens {
            format!("{:>8.0} {:>6}", s.tokens as f64 / n, s.max_tokens)
        } else {
            format!("{:>8} {:>6}", "-", "-")
        };
        format!(
            "{name:<28} {:>5.3} ({:>2}/{later_tasks}) {:>7.3} {cost}",
            s.hits as f64 / n,
            s.hits,
            s.recall / n
        )
    };
    if json_out {
        let figure = |s: &Score| {
            json!({ "hit": s.hits as f64 / n, "hits": s.hits, "recall": s.recall / n,
                    "meanTokens": s.tokens as f64 / n, "maxTokens": s.max_tokens })
        };
        say!(
            "{}",
            json!({
                "laterTasks": later_tasks, "pairs": pairs,
                "sessionStart": figure(&engram_score), "bm25Top1": figure(&top1),
                "bm25Top3": figure(&top3), "bm25HeadsTop1": figure(&head1),
                "bm25HeadsTop3": figure(&head3), "oracle": figure(&oracle), "tasks": rows,
            })
        );
        return Ok(());
    }
    say!(
        "\nexperience reuse: {later_tasks} later tasks in {pairs} pairs (fixes sharing a file), {}",
        if model.is_some() {
            "hybrid (MiniLM)"
        } else {
            "keyword only (no model)"
        }
    );
    say!(
        "{:<28} {:>13} {:>7} {:>8} {:>6}",
        "system",
        "hit",
        "recall",
        "tokens",
        "max"
    );
    say!("{}", line("session start (engram)", &engram_score, true));
    say!("{}", line("BM25 over past tasks, top 1", &top1, false));
    say!("{}", line("BM25 over past tasks, top 3", &top3, false));
    say!("{}", line("BM25, tasks' heads, top 1", &head1, false));
    say!("{}", line("BM25, tasks' heads, top 3", &head3, false));
    say!("{}", line("oracle", &oracle, false));
    Ok(())
}

/// What a session-start context for `task` holds.
struct Asked {
    text: String,
    tokens: usize,
    /// Sessions whose records it brings back.
    sessions: Vec<String>,
}

async fn start_context<D: Database>(engram: &Engram<D>, task: &str) -> Result<Asked, CliError> {
    // A prompt reaches engram cut at the hook's limit; so does the task here.
    let start = SessionStart {
        task: Some(super::truncate_bytes(
            task,
            engram::agent_loop::hook::MAX_PROMPT_BYTES,
        )),
        budget: Some(START_BUDGET),
        ..SessionStart::default()
    };
    let context = engram.session_context(&start).await?;
    let mut sessions = Vec::new();
    for id in &context.packed.memory_ids {
        if let Some(memory) = engram.get(id).await? {
            if engram::observer::finalize::is_session_record(&memory.tags) {
                sessions.extend(memory.session_id);
            }
        }
    }
    Ok(Asked {
        text: context.packed.text,
        tokens: context.packed.tokens,
        sessions,
    })
}

/// A task's text without the harness's framing, whole (not cut as a record keeps it).
fn full_task(text: &str) -> Option<String> {
    let body = text
        .split_once("<pr_description>")
        .map_or(text, |(_, rest)| {
            rest.split("</pr_description>").next().unwrap_or(rest)
        });
    let body = body
        .trim()
        .trim_start_matches("Consider the following PR description:")
        .trim();
    task_text(body).map(|_| body.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The share of `gold` that `named` says is named.
fn share_named(gold: &[String], named: impl Fn(&str) -> bool) -> f64 {
    if gold.is_empty() {
        return 0.0;
    }
    gold.iter().filter(|g| named(g)).count() as f64 / gold.len() as f64
}

/// The development trajectories with their task text, gold files and changed files.
fn tasks(folder: &Path, gold: &HashMap<String, Vec<String>>) -> Result<Vec<Task>, CliError> {
    let mut out = Vec::new();
    for path in crate::observe::recordings(&[folder.to_path_buf()])? {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
        let session = transcript::parse(&text)
            .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
        let Some(files) = gold.get(&session.id) else {
            continue;
        };
        // The task as the person stated it, whole: what a new session's first prompt is.
        let task = session.events.iter().find_map(|e| match e {
            engram::observer::Event::Task { text } => full_task(text),
            _ => None,
        });
        let Some((repo, number)) = session.id.rsplit_once('-') else {
            continue;
        };
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        out.push(Task {
            id: session.id.clone(),
            repo: repo.to_owned(),
            number: number.parse().unwrap_or(0),
            path,
            text: task.unwrap_or_default(),
            gold: files.clone(),
            changed: patched_files(value.pointer("/info/submission").and_then(Value::as_str)),
        });
    }
    Ok(out)
}

/// The files a unified diff changes.
fn patched_files(patch: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = patch
        .unwrap_or("")
        .lines()
        .filter_map(|l| l.strip_prefix("diff --git a/"))
        .filter_map(|rest| rest.split(" b/").next())
        .map(str::to_owned)
        .collect();
    out.dedup();
    out
}

/// Words of a task for the baseline: lower-case runs of letters, digits and `_`, two
/// characters or more, common English words left out.
fn words(text: &str) -> Vec<String> {
    const STOP: &[&str] = &[
        "the", "and", "is", "in", "it", "of", "to", "a", "an", "for", "on", "with", "as", "be",
        "this", "that", "not", "are", "or", "if", "by", "at", "from", "but", "we", "i", "you",
        "when", "should", "can", "was", "have", "has", "which", "would",
    ];
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map(str::to_lowercase)
        .filter(|w| w.len() >= 2 && !STOP.contains(&w.as_str()))
        .collect()
}

/// Indexes of `docs` ranked by BM25 (k1 = 1.2, b = 0.75) against `query`, best first,
/// over the first `chars` characters of each text (query included).
fn bm25_rank(query: &str, docs: &[&Task], chars: usize) -> Vec<usize> {
    let head = |text: &str| text.chars().take(chars).collect::<String>();
    let query = head(query);
    let tokenized: Vec<Vec<String>> = docs.iter().map(|d| words(&head(&d.text))).collect();
    let n = tokenized.len() as f64;
    let mean_len = tokenized.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0);
    let mut df: HashMap<&str, f64> = HashMap::new();
    for doc in &tokenized {
        let unique: HashSet<&str> = doc.iter().map(String::as_str).collect();
        for word in unique {
            *df.entry(word).or_default() += 1.0;
        }
    }
    let query: HashSet<String> = words(&query).into_iter().collect();
    let mut scored: Vec<(usize, f64)> = tokenized
        .iter()
        .enumerate()
        .map(|(i, doc)| {
            let mut tf: HashMap<&str, f64> = HashMap::new();
            for word in doc {
                *tf.entry(word.as_str()).or_default() += 1.0;
            }
            let len = doc.len() as f64;
            let score = query
                .iter()
                .filter_map(|q| {
                    let f = tf.get(q.as_str())?;
                    let d = df.get(q.as_str()).copied().unwrap_or(0.0);
                    let idf = ((n - d + 0.5) / (d + 0.5) + 1.0).ln();
                    Some(idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len / mean_len.max(1.0))))
                })
                .sum();
            (i, score)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.into_iter().map(|(i, _)| i).collect()
}
