//! CoSQA dev: 500 natural-language queries, each with one gold Python function among 6,267.
//! Score: MRR over the top 50, hit@1/5/10.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use engram::{EngramError, MemoryType, NewMemory};
use engram_core::ChunkMeta;
use serde_json::{json, Value};

use super::{
    cached_model, percentile, report, save_vectors, timed_search, warm_queries, EvalArgs,
    GoldRanks, System,
};
use crate::{CliError, Target};

pub(super) async fn run(
    args: &EvalArgs,
    data: &Path,
    systems: &[System],
    target: &Target,
    json: bool,
) -> Result<(), CliError> {
    let dir = data.join("cosqa");
    if !dir.is_dir() {
        say!("skipping eval: no CoSQA data in {}", dir.display());
        return Ok(());
    }
    let read_json = |name: &str| -> Result<Value, CliError> {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
        serde_json::from_str(&text).map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))
    };
    let pool = read_json("code_idx_map.txt")?;
    let split = super::split_file(&dir, "cosqa-retrieval-", &args.split, ".json")?;
    let queries = read_json(&split.file_name().unwrap_or_default().to_string_lossy())?;
    let pool = pool
        .as_object()
        .ok_or_else(|| CliError::Usage("code_idx_map.txt is not an object".into()))?;
    let mut queries: Vec<(String, u64)> = queries
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|q| Some((q["doc"].as_str()?.to_owned(), q["retrieval_idx"].as_u64()?)))
        .collect();
    if let Some(n) = args.queries {
        queries.truncate(n);
    }
    // A smaller pool keeps every scored query's gold function, then the first N others by
    // index (deterministic).
    let mut functions: Vec<(u64, &str)> = pool
        .iter()
        .filter_map(|(code, idx)| Some((idx.as_u64()?, code.as_str())))
        .collect();
    functions.sort_by_key(|(idx, _)| *idx);
    if let Some(extra) = args.pool {
        let gold: BTreeSet<u64> = queries.iter().map(|(_, g)| *g).collect();
        let mut others = 0;
        functions.retain(|(idx, _)| {
            let keep = gold.contains(idx) || others < extra;
            if !gold.contains(idx) && keep {
                others += 1;
            }
            keep
        });
    }

    let embedder = cached_model(args, target, systems)?;
    let engram = super::open_memory("cosqa", embedder.as_ref(), args, target).await?;
    let model = engram.embedding_model().map(str::to_owned);
    eprintln!(
        "indexing {} functions ({})",
        functions.len(),
        model
            .as_deref()
            .map_or("keyword only".to_owned(), |m| format!("embedding with {m}"))
    );
    let started = Instant::now();
    let mut id_of: HashMap<u64, String> = HashMap::new();
    let mut skipped = 0;
    for (i, (idx, code)) in functions.iter().enumerate() {
        match engram.remember(function_chunk(code)).await {
            Ok(stored) => {
                id_of.insert(*idx, stored.id);
            }
            Err(EngramError::Invalid(_)) => skipped += 1,
            Err(e) => return Err(e.into()),
        }
        if (i + 1) % 500 == 0 {
            let rate = (i + 1) as f64 / started.elapsed().as_secs_f64();
            let eta = (functions.len() - i - 1) as f64 / rate;
            eprintln!(
                "  {}/{} ({rate:.0}/s, ETA {eta:.0}s)",
                i + 1,
                functions.len()
            );
        }
    }
    save_vectors(embedder.as_deref())?;
    let index_seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "indexed in {index_seconds:.1}s ({skipped} functions over the content limit skipped)"
    );
    // Loaded before the timed searches, so none of them pays for the loading.
    let loading = Instant::now();
    let resident = engram.load_resident_vectors().await?;
    engram.load_resident_keywords().await?;
    if engram.uses_resident_vectors() {
        eprintln!(
            "resident vectors: {resident} loaded in {:.0} ms",
            loading.elapsed().as_secs_f64() * 1e3
        );
    }

    warm_queries(
        &engram,
        systems,
        queries.iter().map(|(text, _)| text.as_str()),
        embedder.as_deref(),
    )
    .await?;
    if let Some(path) = &args.features_out {
        let gold: Vec<(&str, HashSet<String>)> = queries
            .iter()
            .map(|(text, gold)| {
                (
                    text.as_str(),
                    id_of.get(gold).into_iter().cloned().collect(),
                )
            })
            .collect();
        let queries = gold.iter().map(|(text, ids)| (*text, ids));
        super::calibration::write_features(&engram, "cosqa", queries, path).await?;
        let unrelated = super::calibration::unrelated_queries(data, "cosqa", &args.split)?;
        let none = HashSet::new();
        let unrelated = unrelated.iter().map(|q| (q.as_str(), &none));
        super::calibration::write_features(&engram, "cosqa-unrelated", unrelated, path).await?;
    }
    let verbose = crate::output::verbose();
    let mut per_query = Vec::new();
    let mut rows = Vec::new();
    let mut ranks: GoldRanks = Vec::new();
    for system in systems {
        if system.needs_dense() && model.is_none() {
            eprintln!("skipping {}: no embedding model", system.name);
            continue;
        }
        let mut hits = [0usize; 3];
        let mut latencies = Vec::with_capacity(queries.len());
        let mut gold_ranks = Vec::with_capacity(queries.len());
        for (text, gold) in &queries {
            let (response, ms) = timed_search(&engram, &system.query(text, 50)).await?;
            latencies.push(ms);
            let gold_id = id_of.get(gold);
            let found = response
                .hits
                .iter()
                .position(|h| Some(&h.memory.id) == gold_id);
            gold_ranks.push(found.map(|r| r + 1));
            if verbose {
                // The gold function's place and what each path ranked it, when it made
                // the top 50: where a system gains or loses against another.
                let hit = found.map(|rank| &response.hits[rank].breakdown);
                per_query.push(json!({
                    "system": system.name,
                    "query": text,
                    "queryType": response.query_type,
                    "goldRank": found.map(|r| r + 1),
                    "keywordRank": hit.and_then(|b| b.keyword.as_ref()).map(|p| p.rank),
                    "denseRank": hit.and_then(|b| b.dense.as_ref()).map(|p| p.rank),
                }));
            }
            if let Some(rank) = found {
                for (slot, k) in [1, 5, 10].iter().enumerate() {
                    if rank < *k {
                        hits[slot] += 1;
                    }
                }
            }
        }
        latencies.sort_by(f64::total_cmp);
        let mrr = super::paired::mean_reciprocal_rank(&gold_ranks);
        ranks.push((system.name.clone(), gold_ranks));
        let n = queries.len().max(1) as f64;
        rows.push(json!({
            "system": system.name,
            "queries": queries.len(),
            "MRR": mrr,
            "hit@1": hits[0] as f64 / n,
            "hit@5": hits[1] as f64 / n,
            "hit@10": hits[2] as f64 / n,
            "p50Ms": percentile(&latencies, 0.5),
            "p95Ms": percentile(&latencies, 0.95),
        }));
    }
    for row in &per_query {
        eprintln!("{row}");
    }
    report(
        &format!(
            "CoSQA {}: {} queries over {} functions (MRR over the top 50)",
            args.split,
            queries.len(),
            id_of.len()
        ),
        &["MRR", "hit@1", "hit@5", "hit@10"],
        &rows,
        &ranks,
        json!({ "model": model, "indexSeconds": index_seconds, "functions": id_of.len() }),
        json,
    );
    Ok(())
}

/// A pool function as a code chunk (the eval data's instructions). It has no file or
/// module to name — the pool gathers functions from many unnamed repositories — so its
/// contextual text is the code alone.
fn function_chunk(code: &str) -> NewMemory {
    let mut memory = NewMemory::new(MemoryType::Pattern, code);
    memory.chunk = Some(ChunkMeta {
        chunk_type: "function".into(),
        start_line: 1,
        end_line: u32::try_from(code.lines().count().max(1)).unwrap_or(u32::MAX),
        context_prefix: None,
    });
    memory
}
