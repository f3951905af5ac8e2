//! `engram-eval duplicates`: every trajectory and transcript of the development data
//! replayed five times, each pass in another order, into one database with the bundled
//! model: once as the same sessions again, once with each pass as new sessions (the same
//! work done again). Reports the live memories
//! after the first pass and after all five, what consolidation did (merges, which without
//! it would each have been one more memory, and supersessions), and the near-duplicate
//! pairs left (cosine ≥ 0.95, same type).

use std::path::{Path, PathBuf};

use engram::Database;
use engram_store::{Statement, Value};
use serde_json::json;

use super::EvalArgs;
use crate::observe::{recordings, replay_file_as};
use crate::{CliError, Target};

/// Passes over the recordings.
const PASSES: usize = 5;
/// Cosine at or above which two live memories of one type count as a near-duplicate pair.
const NEAR: f64 = 0.95;

pub async fn run(
    args: &EvalArgs,
    data: &Path,
    target: &Target,
    json_out: bool,
) -> Result<(), CliError> {
    let mut files = recordings(&[data.join("trajectories"), data.join("transcripts")])?;
    if let Some(n) = args.queries {
        files.truncate(n);
    }
    let Some(model) = crate::model::load(target)? else {
        return Err(CliError::Usage(
            "the duplicates eval needs the model (run scripts/fetch-model.sh)".into(),
        ));
    };
    let cached = std::rc::Rc::new(super::CachedEmbedder::new(model, None));
    let mut summaries = Vec::new();
    for new_sessions in [false, true] {
        let engram = super::open_memory("duplicates-eval", Some(&cached), args, target).await?;
        let run = replay_passes(&engram, &files, new_sessions).await?;
        summaries.push(report(&engram, &run, files.len(), json_out).await?);
    }
    if json_out {
        say!(
            "{}",
            json!({ "sameSessions": summaries[0], "newSessions": summaries[1] })
        );
    }
    Ok(())
}

/// What the passes over the recordings did.
struct Passes {
    new_sessions: bool,
    live: Vec<u64>,
    promoted: usize,
    merged: usize,
    superseded: usize,
}

/// Replays every recording [`PASSES`] times, each pass in its own order: as the same
/// sessions again (a replayed session learns only what it did since), or with
/// `new_sessions` as new sessions doing the same work.
async fn replay_passes<D: Database>(
    engram: &engram::Engram<D>,
    files: &[PathBuf],
    new_sessions: bool,
) -> Result<Passes, CliError> {
    let mut run = Passes {
        new_sessions,
        live: Vec::new(),
        promoted: 0,
        merged: 0,
        superseded: 0,
    };
    for pass in 0..PASSES {
        let suffix = new_sessions.then(|| format!("#pass{pass}"));
        for path in &pass_order(files, pass) {
            let replayed = replay_file_as(engram, path, "auto", &[], suffix.as_deref()).await?;
            let promoted = &replayed.report.promoted;
            run.promoted += promoted.len();
            run.merged += promoted.iter().filter(|m| m.merged).count();
            run.superseded += promoted.iter().filter(|m| m.superseded.is_some()).count();
        }
        let live = live_memories(engram.database()).await?;
        eprintln!(
            "{} sessions, pass {}: {live} live memories",
            if new_sessions { "new" } else { "same" },
            pass + 1
        );
        run.live.push(live);
    }
    Ok(run)
}

/// Prints (or, for JSON, returns) the figures of one run.
async fn report<D: Database>(
    engram: &engram::Engram<D>,
    run: &Passes,
    recordings: usize,
    json_out: bool,
) -> Result<serde_json::Value, CliError> {
    let pairs = near_pairs(engram.database()).await?;
    let by_type = live_by_type(engram.database()).await?;
    let replaced = supersessions(engram.database()).await?;
    let first = run.live.first().copied().unwrap_or(0);
    let last = run.live.last().copied().unwrap_or(0);
    let ratio = if first == 0 {
        0.0
    } else {
        last as f64 / first as f64
    };
    // Without consolidation every merge is one more live memory and a superseded one
    // stays live beside its replacement.
    let without = last + (run.merged + run.superseded) as u64;
    let summary = json!({
        "recordings": recordings, "passes": PASSES, "newSessions": run.new_sessions,
        "liveAfterEachPass": run.live, "liveRatio": ratio, "promoted": run.promoted,
        "merged": run.merged, "superseded": run.superseded,
        "liveWithoutLifecycle": without, "liveByType": by_type,
        "nearDuplicatePairs": pairs.len(),
        "pairs": pairs.iter().map(|(a, b, c)| json!({"a": a, "b": b, "cosine": c})).collect::<Vec<_>>(),
        "supersessions": replaced.iter().map(|(old, new, _)| json!({"old": old, "new": new})).collect::<Vec<_>>(),
    });
    if json_out {
        return Ok(summary);
    }
    say!(
        "{} sessions: {recordings} recordings x {PASSES} passes: live memories {:?} \
(after 5 / after 1 = {ratio:.3}); without the lifecycle {without}",
        if run.new_sessions { "new" } else { "same" },
        run.live
    );
    say!(
        "  promoted {}: merged {}, superseded {}",
        run.promoted,
        run.merged,
        run.superseded
    );
    say!("  live by type: {by_type:?}");
    say!(
        "  near-duplicate pairs left (cosine >= {NEAR}, same type): {}",
        pairs.len()
    );
    for (a, b, c) in pairs.iter().take(10) {
        say!("    {c:.3}  {a:?}\n           {b:?}");
    }
    say!("  supersessions (every one, old then new):");
    for (old, new, cosine) in &replaced {
        say!("    {cosine:.3}  {old:?}\n        ->  {new:?}");
    }
    Ok(summary)
}

/// The recordings in the order of pass `pass`: as listed, reversed, then rotations.
fn pass_order(files: &[PathBuf], pass: usize) -> Vec<PathBuf> {
    let mut order = files.to_vec();
    if pass % 2 == 1 {
        order.reverse();
    }
    if !order.is_empty() {
        let len = order.len();
        order.rotate_left((pass * 7) % len);
    }
    order
}

async fn live_memories<D: Database>(db: &D) -> Result<u64, CliError> {
    let rows = db
        .transaction(&[Statement::new(
            "SELECT count(*) FROM memories WHERE deprecated = 0",
        )])
        .await
        .map_err(engram::EngramError::from)?;
    let count = rows
        .first()
        .and_then(|r| r.rows.first())
        .and_then(|r| r.first())
        .map_or(Ok(0), |v| v.as_i64("count"))
        .map_err(engram::EngramError::from)?;
    Ok(count.max(0) as u64)
}

/// Live memory pairs of one type whose vectors are at least [`NEAR`] alike.
async fn near_pairs<D: Database>(db: &D) -> Result<Vec<(String, String, f64)>, CliError> {
    text_pairs(
        db,
        Statement::with_params(
            "SELECT a.content, b.content, 1.0 - vector_distance_cos(ea.embedding, eb.embedding) AS c \
FROM memories a JOIN memories b ON a.type = b.type AND a.id < b.id \
JOIN memory_embeddings ea ON ea.memory_id = a.id JOIN memory_embeddings eb ON eb.memory_id = b.id \
WHERE a.deprecated = 0 AND b.deprecated = 0 AND a.project_id = b.project_id \
AND 1.0 - vector_distance_cos(ea.embedding, eb.embedding) >= ?1 ORDER BY c DESC",
            vec![Value::from(NEAR)],
        ),
    )
    .await
}

/// Live memories per type, most first.
async fn live_by_type<D: Database>(db: &D) -> Result<Vec<(String, i64)>, CliError> {
    let rows = db
        .transaction(&[Statement::new(
            "SELECT type, count(*) AS n FROM memories WHERE deprecated = 0 GROUP BY type ORDER BY n DESC",
        )])
        .await
        .map_err(engram::EngramError::from)?;
    let mut out = Vec::new();
    for row in rows.first().map(|r| r.rows.as_slice()).unwrap_or_default() {
        let kind = row
            .first()
            .and_then(|v| v.as_text("type").ok())
            .unwrap_or("")
            .to_owned();
        let n = row.get(1).and_then(|v| v.as_i64("n").ok()).unwrap_or(0);
        out.push((kind, n));
    }
    Ok(out)
}

/// Every superseded memory with the memory that replaced it and their cosine.
async fn supersessions<D: Database>(db: &D) -> Result<Vec<(String, String, f64)>, CliError> {
    text_pairs(
        db,
        Statement::new(
            "SELECT o.content, n.content, 1.0 - vector_distance_cos(eo.embedding, en.embedding) \
FROM memories o JOIN memories n ON n.id = o.superseded_by \
JOIN memory_embeddings eo ON eo.memory_id = o.id JOIN memory_embeddings en ON en.memory_id = n.id \
ORDER BY o.rowid",
        ),
    )
    .await
}

/// The rows of `statement`, each two contents and a cosine.
async fn text_pairs<D: Database>(
    db: &D,
    statement: Statement,
) -> Result<Vec<(String, String, f64)>, CliError> {
    let rows = db
        .transaction(&[statement])
        .await
        .map_err(engram::EngramError::from)?;
    let mut out = Vec::new();
    for row in rows.first().map(|r| r.rows.as_slice()).unwrap_or_default() {
        let text = |i: usize| {
            row.get(i)
                .and_then(|v| v.as_text("content").ok())
                .unwrap_or("")
                .to_owned()
        };
        let cosine = row
            .get(2)
            .and_then(|v| v.as_f64("cosine").ok())
            .unwrap_or(0.0);
        out.push((text(0), text(1), cosine));
    }
    Ok(out)
}
