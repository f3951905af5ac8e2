//! `engram eval`: retrieval quality on the evaluation data in ../shared/eval.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use engram::{
    Engram, EngramConfig, EngramError, Host, MemoryType, NewMemory, SearchMode, SearchQuery,
};
use engram_libsql::LocalDatabase;
use serde_json::{json, Value};

use crate::{model, CliError, Target};

/// Options of `engram eval`.
#[derive(Args)]
pub struct EvalArgs {
    /// Which dataset: cosqa.
    dataset: String,
    /// The eval data folder (default: ../shared/eval from here or from the repository).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Score only the first N queries.
    #[arg(long)]
    queries: Option<usize>,
    /// Modes to score, comma-separated: keyword, dense, hybrid.
    #[arg(long, value_delimiter = ',', default_value = "keyword,dense,hybrid")]
    modes: Vec<String>,
}

fn data_dir(args: &EvalArgs) -> Option<PathBuf> {
    if let Some(dir) = &args.data {
        return Some(dir.clone());
    }
    let candidates = [
        PathBuf::from("../shared/eval"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval"),
    ];
    candidates.into_iter().find(|p| p.is_dir())
}

pub async fn run(args: &EvalArgs, target: &Target, json: bool) -> Result<(), CliError> {
    if args.dataset != "cosqa" {
        return Err(CliError::Usage(format!(
            "unknown dataset {:?}; available: cosqa",
            args.dataset
        )));
    }
    let Some(dir) = data_dir(args)
        .map(|d| d.join("cosqa"))
        .filter(|d| d.is_dir())
    else {
        say!("skipping eval: no CoSQA data (looked for ../shared/eval/cosqa; pass --data)");
        return Ok(());
    };
    let read_json = |name: &str| -> Result<Value, CliError> {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
        serde_json::from_str(&text).map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))
    };
    let pool = read_json("code_idx_map.txt")?;
    let queries = read_json("cosqa-retrieval-dev-500.json")?;
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

    let db = LocalDatabase::open(":memory:")
        .await
        .map_err(EngramError::from)?;
    let engram = Engram::open(
        db,
        EngramConfig {
            project_id: "cosqa".into(),
        },
        Host::native(),
    )
    .await?;
    let wants_dense = args.modes.iter().any(|m| m != "keyword");
    let engram = if wants_dense {
        model::attach(engram, target)?
    } else {
        engram
    };
    let model = engram.embedding_model().map(str::to_owned);
    eprintln!(
        "indexing {} functions ({})",
        pool.len(),
        model
            .as_deref()
            .map_or("keyword only".to_owned(), |m| format!("embedding with {m}"))
    );
    let started = Instant::now();
    let mut id_of: HashMap<u64, String> = HashMap::new();
    let mut skipped = 0;
    for (i, (code, idx)) in pool.iter().enumerate() {
        let Some(idx) = idx.as_u64() else { continue };
        let mut memory = NewMemory::new(MemoryType::Pattern, code.clone());
        memory.related_modules = vec!["cosqa".into()];
        match engram.remember(memory).await {
            Ok(stored) => {
                id_of.insert(idx, stored.id);
            }
            Err(EngramError::Invalid(_)) => skipped += 1,
            Err(e) => return Err(e.into()),
        }
        if (i + 1) % 500 == 0 {
            let rate = (i + 1) as f64 / started.elapsed().as_secs_f64();
            let eta = (pool.len() - i - 1) as f64 / rate;
            eprintln!("  {}/{} ({rate:.0}/s, ETA {eta:.0}s)", i + 1, pool.len());
        }
    }
    let index_seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "indexed in {index_seconds:.1}s ({skipped} functions over the content limit skipped)"
    );

    let mut report = Vec::new();
    for mode_name in &args.modes {
        let mode = match mode_name.as_str() {
            "keyword" => SearchMode::Keyword,
            "dense" => SearchMode::Dense,
            "hybrid" => SearchMode::Hybrid,
            other => return Err(CliError::Usage(format!("unknown mode {other:?}"))),
        };
        if mode != SearchMode::Keyword && model.is_none() {
            eprintln!("skipping {mode_name}: no embedding model (run scripts/fetch-model.sh)");
            continue;
        }
        let (mut rr, mut hits) = (0.0, [0usize; 3]);
        let mut latencies = Vec::with_capacity(queries.len());
        for (text, gold) in &queries {
            let query = SearchQuery {
                text: text.clone(),
                limit: 50,
                types: Vec::new(),
                mode,
            };
            let t = Instant::now();
            let response = engram.search(&query).await?;
            latencies.push(t.elapsed().as_secs_f64() * 1000.0);
            let gold_id = id_of.get(gold);
            if let Some(rank) = response
                .hits
                .iter()
                .position(|h| Some(&h.memory.id) == gold_id)
            {
                rr += 1.0 / (rank + 1) as f64;
                for (slot, k) in [1, 5, 10].iter().enumerate() {
                    if rank < *k {
                        hits[slot] += 1;
                    }
                }
            }
        }
        latencies.sort_by(f64::total_cmp);
        let n = queries.len().max(1) as f64;
        let pct = |p: f64| {
            latencies
                .get(((latencies.len() as f64 - 1.0) * p) as usize)
                .copied()
                .unwrap_or(0.0)
        };
        report.push(json!({
            "mode": mode_name,
            "queries": queries.len(),
            "mrr": rr / n,
            "hit@1": hits[0] as f64 / n,
            "hit@5": hits[1] as f64 / n,
            "hit@10": hits[2] as f64 / n,
            "p50Ms": pct(0.5),
            "p95Ms": pct(0.95),
        }));
    }
    if json {
        say!(
            "{}",
            json!({ "dataset": "cosqa-dev", "model": model, "indexSeconds": index_seconds, "results": report })
        );
    } else {
        say!(
            "CoSQA dev: {} queries over {} functions (MRR over the top 50)",
            queries.len(),
            id_of.len()
        );
        say!(
            "{:<8} {:>7} {:>7} {:>7} {:>7} {:>9} {:>9}",
            "mode",
            "MRR",
            "hit@1",
            "hit@5",
            "hit@10",
            "p50 ms",
            "p95 ms"
        );
        for r in &report {
            say!(
                "{:<8} {:>7.4} {:>7.3} {:>7.3} {:>7.3} {:>9.2} {:>9.2}",
                r["mode"].as_str().unwrap_or(""),
                r["mrr"].as_f64().unwrap_or(0.0),
                r["hit@1"].as_f64().unwrap_or(0.0),
                r["hit@5"].as_f64().unwrap_or(0.0),
                r["hit@10"].as_f64().unwrap_or(0.0),
                r["p50Ms"].as_f64().unwrap_or(0.0),
                r["p95Ms"].as_f64().unwrap_or(0.0),
            );
        }
    }
    Ok(())
}
