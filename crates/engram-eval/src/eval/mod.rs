//! `engram-eval`: retrieval quality on the evaluation data in ../shared/eval, every system
//! side by side in one run (BM25 only, dense only, the full pipeline, and the full pipeline
//! with one stage switched off), with latency per query.

mod audit;
mod calibration;
mod cosqa;
mod duplicates;
mod instructions;
mod observer;
mod paired;
mod reuse;
mod rules;
mod staleness;
mod swebench;
mod vectors;

use std::path::{Path, PathBuf};

use clap::Args;
use engram::{Database, Engram, SearchMode, SearchQuery, Stages};
use serde_json::{json, Value};

use crate::{model, CliError, Target};

pub use self::vectors::CachedEmbedder;

/// Options of `engram-eval`.
#[derive(Args)]
pub struct EvalArgs {
    /// Which dataset: cosqa (code search), swebench (file localization on pytest),
    /// observer (the observer replayed over the trajectories), reuse (experience brought
    /// back: the session-start context for a later task against BM25 over past tasks),
    /// audit (everything learned, by signal class, with non-project citations) or
    /// duplicates (every
    /// recording replayed five times as new sessions, in different orders, counting what
    /// consolidation kept), staleness (memories about pytest's code flagged when the
    /// next release changes it) or instructions (the real instruction files imported, then
    /// re-imported, then their history versions imported in order), or rules (prose
    /// memories: the instruction files' rules in one store, searched by their headings).
    dataset: String,
    /// The eval data folder (default: $ENGRAM_EVAL_DIR, else ../shared/eval from here or
    /// from the repository).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Score only the first N queries (instances).
    #[arg(long)]
    queries: Option<usize>,
    /// Which split of CoSQA or SWE-bench to read: `cosqa/cosqa-retrieval-<split>*.json`,
    /// `swebench/<split>_instances.jsonl`. Reports name it.
    #[arg(long, default_value = "dev")]
    split: String,
    /// CoSQA: index only the gold functions of the scored queries plus this many others.
    #[arg(long)]
    pool: Option<usize>,
    /// Systems to score, comma-separated: bm25, dense, full, no-graph, no-boost,
    /// no-diversity, no-cut (search keeps clearly unrelated hits), no-rerank (added to the default list when a rerank service is
    /// configured with --rerank-provider; without one, full does not rerank).
    #[arg(long, value_delimiter = ',', default_value = DEFAULT_SYSTEMS)]
    systems: Vec<String>,
    /// SWE-bench: the folder with pytest-<version> source trees
    /// (default ~/.cache/engram/corpora/swebench; scripts/fetch-swebench.sh fills it).
    #[arg(long)]
    corpora: Option<PathBuf>,
    /// SWE-bench: how chunk results rank files: `best` (each file's best chunk) or `rrf`
    /// (the sum of reciprocal ranks of the file's chunks).
    #[arg(long, default_value = "best", value_parser = ["best", "rrf"])]
    file_rank: String,
    /// SWE-bench: print how each system ranked the instances whose id ends with this
    /// (`pytest-6116`): the query's type, tokens and code names, then the best 20 chunks
    /// with each path's rank and contribution.
    #[arg(long)]
    explain: Option<String>,
    /// Where vectors are cached between runs (default ~/.cache/engram/eval; "none" to
    /// disable).
    #[arg(long)]
    vector_cache: Option<String>,
    /// How the dense path finds neighbours: `resident` (vectors kept in memory, as a
    /// long-lived host keeps them; the exact scan's results), `index` (libSQL's vector
    /// index, as a host that cannot keep them uses it) or `exact` (the scan in SQL).
    #[arg(long, default_value = "resident", value_parser = ["resident", "index", "exact"])]
    dense_source: String,
    /// cosqa, rules: append each query's top 50 hits (every path, then keyword only; the
    /// search cut off) with their dense similarity, term coverage and whether each is
    /// relevant, as JSON lines: what scripts/fit-relevance.py fits the relevance
    /// calibration on.
    #[arg(long)]
    features_out: Option<PathBuf>,
}

/// The file of a split in `dir`: the one named `<prefix><split><rest>` (first by name), or
/// an error naming what was looked for.
pub(crate) fn split_file(
    dir: &Path,
    prefix: &str,
    split: &str,
    rest: &str,
) -> Result<PathBuf, CliError> {
    let wanted = format!("{prefix}{split}");
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", dir.display())))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&wanted) && n.ends_with(rest))
        })
        .collect();
    found.sort();
    found.into_iter().next().ok_or_else(|| {
        CliError::Usage(format!(
            "no {wanted}…{rest} in {} (is --split {split} right?)",
            dir.display()
        ))
    })
}

/// The systems scored unless `--systems` says otherwise.
const DEFAULT_SYSTEMS: &str = "bm25,dense,full,no-graph,no-boost,no-diversity";

/// A retrieval system under evaluation: a way of filling in a query.
#[derive(Debug, Clone)]
pub(crate) struct System {
    pub name: String,
    pub mode: SearchMode,
    pub stages: Stages,
}

const NO_STAGES: Stages = Stages {
    graph: false,
    boost: false,
    diversity: false,
    rerank: false,
    hyde: false,
    cut: true,
};

fn system(name: &str) -> Result<System, CliError> {
    let all = Stages::default();
    let (mode, stages) = match name {
        "bm25" => (SearchMode::Keyword, NO_STAGES),
        "dense" => (SearchMode::Dense, NO_STAGES),
        "full" => (SearchMode::Hybrid, all),
        "no-graph" => (
            SearchMode::Hybrid,
            Stages {
                graph: false,
                ..all
            },
        ),
        "no-boost" => (
            SearchMode::Hybrid,
            Stages {
                boost: false,
                ..all
            },
        ),
        "no-diversity" => (
            SearchMode::Hybrid,
            Stages {
                diversity: false,
                ..all
            },
        ),
        "no-rerank" => (
            SearchMode::Hybrid,
            Stages {
                rerank: false,
                ..all
            },
        ),
        "no-cut" => (
            SearchMode::Hybrid,
            Stages { cut: false, ..all },
        ),
        other => {
            return Err(CliError::Usage(format!(
                "unknown system {other:?}; use bm25, dense, full, no-graph, no-boost, no-diversity, no-rerank, no-cut"
            )))
        }
    };
    Ok(System {
        name: name.to_owned(),
        mode,
        stages,
    })
}

impl System {
    pub fn query(&self, text: &str, limit: u32) -> SearchQuery {
        let mut query = SearchQuery::new(truncate_bytes(text, engram::MAX_QUERY_BYTES));
        query.limit = limit;
        query.mode = self.mode;
        query.stages = self.stages;
        query
    }

    /// Whether the system means nothing without an embedding model (hybrid systems run
    /// with their other paths).
    pub fn needs_dense(&self) -> bool {
        self.mode == SearchMode::Dense
    }

    /// Whether the system would use an embedding model if there is one.
    pub fn uses_dense(&self) -> bool {
        self.mode != SearchMode::Keyword
    }
}

/// `text` cut to at most `max` bytes at a character boundary.
fn truncate_bytes(text: &str, max: usize) -> String {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

pub async fn run(args: &EvalArgs, target: &Target, json: bool) -> Result<(), CliError> {
    let mut names = args.systems.clone();
    if target.rerank_provider.is_some() && names.join(",") == DEFAULT_SYSTEMS {
        names.push("no-rerank".into());
    }
    let systems: Vec<System> = names.iter().map(|s| system(s)).collect::<Result<_, _>>()?;
    let Some(data) = data_dir(args) else {
        say!("skipping eval: no evaluation data (looked for ../shared/eval; pass --data)");
        return Ok(());
    };
    match args.dataset.as_str() {
        "cosqa" => cosqa::run(args, &data, &systems, target, json).await,
        "swebench" => swebench::run(args, &data, &systems, target, json).await,
        "observer" => observer::run(args, &data, target, json).await,
        "reuse" => reuse::run(args, &data, target, json).await,
        "audit" => audit::run(args, &data, target, json).await,
        "duplicates" => duplicates::run(args, &data, target, json).await,
        "staleness" => staleness::run(args, target, json).await,
        "instructions" => instructions::run(args, &data, target, json).await,
        "rules" => rules::run(args, &data, &systems, target, json).await,
        other => Err(CliError::Usage(format!(
            "unknown dataset {other:?}; available: cosqa, swebench, rules, observer, reuse, audit, \
duplicates, staleness, instructions"
        ))),
    }
}

fn data_dir(args: &EvalArgs) -> Option<PathBuf> {
    if let Some(dir) = &args.data {
        return Some(dir.clone());
    }
    if let Some(dir) = std::env::var_os("ENGRAM_EVAL_DIR") {
        return Some(PathBuf::from(dir));
    }
    let candidates = [
        PathBuf::from("../shared/eval"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval"),
    ];
    candidates.into_iter().find(|p| p.is_dir())
}

pub(crate) fn home_cache(sub: &str) -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/engram").join(sub))
}

/// The model wrapped in the vector cache, if systems need one and it is available.
pub(crate) fn cached_model(
    args: &EvalArgs,
    target: &Target,
    systems: &[System],
) -> Result<Option<std::rc::Rc<CachedEmbedder>>, CliError> {
    if !systems.iter().any(System::uses_dense) {
        return Ok(None);
    }
    let Some(inner) = model::load(target)? else {
        eprintln!("no embedding model (run scripts/fetch-model.sh): dense systems are skipped");
        return Ok(None);
    };
    let dir = match args.vector_cache.as_deref() {
        Some("none") => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => home_cache("eval"),
    };
    let cached = CachedEmbedder::new(inner, dir);
    if cached.len() > 0 {
        eprintln!("vector cache: {} vectors", cached.len());
    }
    Ok(Some(std::rc::Rc::new(cached)))
}

/// A fresh in-memory database for one evaluation corpus, opened with [`eval_host`] through
/// the options every host opens with: the flags' reranker, keyword postings in memory as a
/// long-lived host keeps them (the statement alone returns the same), and with `embedder`
/// the dense path of `args.dense_source` — resident vectors by default, which also return
/// what the exact scan does. Callers load the resident sets (`Engram::load_resident_vectors`,
/// `Engram::load_resident_keywords`) once the corpus is stored, so no timed search pays for
/// the loading.
pub(crate) async fn open_memory(
    project_id: impl Into<String>,
    embedder: Option<&std::rc::Rc<CachedEmbedder>>,
    args: &EvalArgs,
    target: &Target,
) -> Result<Engram<engram_libsql::LocalDatabase>, CliError> {
    let db = engram_libsql::LocalDatabase::open(":memory:")
        .await
        .map_err(engram::EngramError::from)?;
    let mut options = crate::open::options(&Target {
        url: None,
        no_embed: true,
        embed_provider: None,
        ..target.clone()
    })?;
    options.project_id = Some(project_id.into());
    options.path = None;
    options.resident_keywords = true;
    let mut capabilities = engram::Capabilities::new(eval_host()).with_http(
        engram::SharedTransport::new(engram_hrana::ReqwestTransport::new()),
    );
    if let Some(embedder) = embedder {
        options.embedder = None;
        capabilities = capabilities.with_model(Box::new(embedder.clone()));
        match args.dense_source.as_str() {
            // Searched whatever the corpus's size, so the figures are the index's.
            "index" => {
                options.vector_index = true;
                options.vector_index_min_memories = Some(0);
            }
            "exact" => {}
            _ => options.resident_vectors = true,
        }
    }
    let engram = Engram::open_with(db, &options, capabilities).await?;
    if options.vector_index && !engram.uses_vector_index() {
        return Err(CliError::Usage(
            "--dense-source index: this database has no vector index".into(),
        ));
    }
    Ok(engram)
}

/// The host for evaluation runs: the system clock, and ids from a fixed-seed generator so
/// that score ties break the same way in every run (with random ids, ablations on a few
/// dozen queries differ by run-to-run noise).
pub(crate) fn eval_host() -> engram::Host {
    engram::Host::new(
        engram::SystemClock,
        SeededEntropy(std::cell::Cell::new(0x9E37_79B9_7F4A_7C15)),
    )
}

/// A deterministic byte stream (xorshift64*), for reproducible ids in evaluation runs only.
struct SeededEntropy(std::cell::Cell<u64>);

impl engram::Entropy for SeededEntropy {
    fn fill(&self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let mut x = self.0.get();
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0.set(x);
            let bytes = x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
}

/// Percentile of sorted `values`.
pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted
        .get(((sorted.len() as f64 - 1.0) * p).round() as usize)
        .copied()
        .unwrap_or(0.0)
}

/// The gold's 1-based rank in every query, per system, in the order the systems ran:
/// what the paired comparison reads.
pub(crate) type GoldRanks = Vec<(String, Vec<Option<usize>>)>;

/// Prints one table row per system, then the full pipeline compared query by query with
/// each other system (or the JSON report, with the comparison under `paired` and each
/// system's per-query gold ranks under `goldRanks`, `null` for not found).
pub(crate) fn report(
    title: &str,
    columns: &[&str],
    rows: &[Value],
    ranks: &GoldRanks,
    extra: Value,
    json: bool,
) {
    let paired = paired::against_reference(ranks);
    if json {
        let gold_ranks: serde_json::Map<String, Value> = ranks
            .iter()
            .map(|(name, r)| (name.clone(), json!(r)))
            .collect();
        say!(
            "{}",
            json!({
                "eval": title,
                "results": rows,
                "paired": paired::json_rows(&paired),
                "goldRanks": gold_ranks,
                "setup": extra,
            })
        );
        return;
    }
    say!("{title}");
    let mut header = format!("{:<13}", "system");
    for c in columns {
        header.push_str(&format!(" {c:>8}"));
    }
    header.push_str(&format!(" {:>8} {:>8}", "p50 ms", "p95 ms"));
    say!("{header}");
    for row in rows {
        let mut line = format!("{:<13}", row["system"].as_str().unwrap_or(""));
        for c in columns {
            line.push_str(&format!(" {:>8.4}", row[*c].as_f64().unwrap_or(0.0)));
        }
        line.push_str(&format!(
            " {:>8.2} {:>8.2}",
            row["p50Ms"].as_f64().unwrap_or(0.0),
            row["p95Ms"].as_f64().unwrap_or(0.0)
        ));
        say!("{line}");
    }
    for line in paired::lines(&paired) {
        say!("{line}");
    }
}

/// Searches each of `texts` once, untimed, with the first system that embeds the query,
/// then saves their vectors: the timed searches find them in the vector cache, so their
/// latency is the search's whether or not an earlier run had cached the query (embedding
/// is timed in the bench).
pub(crate) async fn warm_queries<'t, D: Database>(
    engram: &Engram<D>,
    systems: &[System],
    texts: impl IntoIterator<Item = &'t str>,
    embedder: Option<&CachedEmbedder>,
) -> Result<(), CliError> {
    if let Some(system) = systems.iter().find(|s| s.needs_dense()) {
        for text in texts {
            engram.search(&system.query(text, 1)).await?;
        }
    }
    save_vectors(embedder)
}

/// Writes the vectors embedded since the last write to the vector cache (nothing to do
/// without a model).
pub(crate) fn save_vectors(embedder: Option<&CachedEmbedder>) -> Result<(), CliError> {
    embedder.map_or(Ok(()), |e| {
        e.flush()
            .map_err(|e| CliError::Usage(format!("vector cache: {e}")))
    })
}

/// `query`'s response and its wall time in milliseconds.
pub(crate) async fn timed_search<D: Database>(
    engram: &Engram<D>,
    query: &SearchQuery,
) -> Result<(engram::SearchResponse, f64), CliError> {
    let started = std::time::Instant::now();
    let response = engram.search(query).await?;
    Ok((response, started.elapsed().as_secs_f64() * 1000.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_is_found_by_name_and_a_missing_one_is_named() {
        let dir = std::env::temp_dir().join(format!("engram-split-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for name in [
            "cosqa-retrieval-dev-500.json",
            "cosqa-retrieval-test-500.json",
        ] {
            std::fs::write(dir.join(name), "[]").unwrap();
        }
        let found = split_file(&dir, "cosqa-retrieval-", "test", ".json").unwrap();
        assert!(found.ends_with("cosqa-retrieval-test-500.json"));
        match split_file(&dir, "cosqa-retrieval-", "heldout", ".json") {
            Err(CliError::Usage(message)) => assert!(message.contains("--split heldout")),
            other => panic!("expected a usage error, got {:?}", other.ok()),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
