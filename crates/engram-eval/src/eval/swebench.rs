//! SWE-bench dev, file localization on pytest: each issue's text is the query over the
//! pytest release nearest its commit (chunks as memories, plus the code graph); a system
//! succeeds at k when every file the real fix changed is among its top k files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use engram::{EngramError, IndexOptions, MemoryType, NewMemory, SourceFile};
use engram_code::{chunk_file, definition_id, outline_file, Chunk, ChunkOptions, FileOutline};
use engram_core::ChunkMeta;
use serde_json::{json, Value};

use super::{
    cached_model, home_cache, percentile, report, save_vectors, timed_search, warm_queries,
    EvalArgs, GoldRanks, System,
};
use crate::{CliError, Target};

/// Characters of each chunk's contextual text the dense path embeds: the prefix (file,
/// kind, name), the signature and the docstring. Whole chunks cost ~5× as much to embed.
const EMBED_HEAD_CHARS: usize = 600;
/// Results asked per query (files are ranked by their best result).
const RESULTS: u32 = 50;
const KS: [usize; 3] = [1, 5, 10];
/// Chunks `--explain` prints per system.
const EXPLAINED_HITS: usize = 20;

struct Instance {
    id: String,
    version: String,
    problem: String,
    gold: Vec<String>,
}

pub(super) async fn run(
    args: &EvalArgs,
    data: &Path,
    systems: &[System],
    target: &Target,
    json: bool,
) -> Result<(), CliError> {
    let path = data
        .join("swebench")
        .join(format!("{}_instances.jsonl", args.split));
    let Ok(text) = std::fs::read_to_string(&path) else {
        say!(
            "skipping eval: no SWE-bench instances at {}",
            path.display()
        );
        return Ok(());
    };
    let mut instances: Vec<Instance> = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let row: Value = serde_json::from_str(line)
            .map_err(|e| CliError::Usage(format!("{}:{}: {e}", path.display(), n + 1)))?;
        let (Some(version), Some(problem)) = (
            row["pypi_version"].as_str(),
            row["problem_statement"].as_str(),
        ) else {
            continue; // not a pytest instance
        };
        instances.push(Instance {
            id: row["instance_id"].as_str().unwrap_or_default().to_owned(),
            version: version.to_owned(),
            problem: problem.to_owned(),
            gold: row["gold_files"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str().map(str::to_owned))
                .collect(),
        });
    }
    let corpora = args
        .corpora
        .clone()
        .or_else(|| home_cache("corpora/swebench"))
        .unwrap_or_else(|| PathBuf::from("corpora/swebench"));
    // Instances whose release has no source tree cannot be posed; they are left out before
    // `--queries` picks the first N, so a subset run scores the releases that are here.
    let tree = |version: &str| corpora.join(format!("pytest-{version}"));
    let mut missing: Vec<String> = instances
        .iter()
        .filter(|i| !tree(&i.version).join(".complete").exists())
        .map(|i| i.version.clone())
        .collect();
    missing.sort();
    missing.dedup();
    instances.retain(|i| !missing.contains(&i.version));
    if let Some(n) = args.queries {
        instances.truncate(n);
    }
    let mut by_version: BTreeMap<&str, Vec<&Instance>> = BTreeMap::new();
    for instance in &instances {
        by_version
            .entry(&instance.version)
            .or_default()
            .push(instance);
    }
    let embedder = cached_model(args, target, systems)?;
    let model = embedder
        .as_ref()
        .map(|e| engram::Embed::model_id(&**e).to_owned());

    // Per system: successes at each k, latencies, per-instance ranks of gold files.
    let mut successes: Vec<[usize; 3]> = vec![[0; 3]; systems.len()];
    let mut latencies: Vec<Vec<f64>> = vec![Vec::new(); systems.len()];
    let mut gold_ranks: Vec<Vec<Option<usize>>> = vec![Vec::new(); systems.len()];
    let mut scored = 0usize;
    let mut per_instance = Vec::new();
    let mut index_seconds = 0.0;
    // Gold files outside the tree an instance is posed on (a module that came after that
    // release, or a file that is not Python): no system can rank them, so each such
    // instance is a miss for all. Reported so that a reader knows the ceiling.
    let mut unreachable: Vec<String> = Vec::new();
    for (version, group) in &by_version {
        let root = tree(version);
        let started = Instant::now();
        let files = python_files(&root)?;
        let project = group.first().map_or("pytest", |i| project_of(&i.id));
        // Embedding a release's chunks takes minutes on a cold vector cache.
        eprintln!("{project} {version}: indexing {} files...", files.len());
        let engram =
            super::open_memory(format!("pytest-{version}"), embedder.as_ref(), args, target)
                .await?;
        engram.index_files(&files, &IndexOptions::default()).await?;
        if let Some(e) = &embedder {
            e.head_chars.set(Some(EMBED_HEAD_CHARS));
        }
        let mut chunks = 0;
        for file in &files {
            let outline = outline_file(&file.path, &file.content);
            for chunk in chunk_file(&file.path, &file.content, &ChunkOptions::default()) {
                if chunk.content.trim().is_empty() {
                    continue;
                }
                match engram
                    .remember(chunk_memory(&chunk, outline.as_ref()))
                    .await
                {
                    Ok(_) => chunks += 1,
                    Err(EngramError::Invalid(_)) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        if let Some(e) = &embedder {
            e.head_chars.set(None);
        }
        save_vectors(embedder.as_deref())?;
        engram.load_resident_vectors().await?;
        engram.load_resident_keywords().await?;
        let seconds = started.elapsed().as_secs_f64();
        index_seconds += seconds;
        eprintln!(
            "{project} {version}: {} files, {chunks} chunks indexed in {seconds:.1}s ({} instances)",
            files.len(),
            group.len()
        );
        warm_queries(
            &engram,
            systems,
            group.iter().map(|i| i.problem.as_str()),
            embedder.as_deref(),
        )
        .await?;
        let indexed: BTreeSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
        for instance in group {
            scored += 1;
            let absent: Vec<&str> = instance
                .gold
                .iter()
                .map(String::as_str)
                .filter(|g| !indexed.contains(g))
                .collect();
            if !absent.is_empty() {
                unreachable.push(format!("{} ({})", instance.id, absent.join(", ")));
            }
            let mut ranks = serde_json::Map::new();
            let mut tops = serde_json::Map::new();
            for (s, system) in systems.iter().enumerate() {
                if system.needs_dense() && model.is_none() {
                    continue;
                }
                let (response, ms) =
                    timed_search(&engram, &system.query(&instance.problem, RESULTS)).await?;
                latencies[s].push(ms);
                let ranked_files = rank_files(&response.hits, &args.file_rank);
                if args
                    .explain
                    .as_deref()
                    .is_some_and(|x| instance.id.ends_with(x))
                {
                    explain(&instance.id, &system.name, &response);
                }
                let worst = instance
                    .gold
                    .iter()
                    .map(|g| ranked_files.iter().position(|f| f == g))
                    .try_fold(0usize, |acc, p| p.map(|p| acc.max(p + 1)));
                for (slot, k) in KS.iter().enumerate() {
                    if worst.is_some_and(|w| w <= *k) {
                        successes[s][slot] += 1;
                    }
                }
                gold_ranks[s].push(worst);
                ranks.insert(system.name.clone(), json!(worst));
                tops.insert(
                    system.name.clone(),
                    json!(&ranked_files[..ranked_files.len().min(5)]),
                );
            }
            per_instance.push(json!({
                "instance": instance.id,
                "goldFileRank": ranks,
                "gold": instance.gold,
                "goldNotIndexed": absent,
                "topFiles": tops,
            }));
        }
    }
    if !missing.is_empty() {
        eprintln!(
            "skipped versions without a source tree (run scripts/fetch-swebench.sh): {}",
            missing.join(", ")
        );
    }
    if !unreachable.is_empty() {
        eprintln!(
            "{} of {scored} instances have a gold file outside the indexed tree (not in that \
             release, or not Python), a miss for every system: {}",
            unreachable.len(),
            unreachable.join("; ")
        );
    }
    let mut rows = Vec::new();
    let mut ranks: GoldRanks = Vec::new();
    for (s, system) in systems.iter().enumerate() {
        if latencies[s].is_empty() {
            continue;
        }
        let system_ranks = std::mem::take(&mut gold_ranks[s]);
        let mrr = super::paired::mean_reciprocal_rank(&system_ranks);
        ranks.push((system.name.clone(), system_ranks));
        latencies[s].sort_by(f64::total_cmp);
        let n = scored.max(1) as f64;
        rows.push(json!({
            "system": system.name,
            "instances": scored,
            "MRR": mrr,
            "Acc@1": successes[s][0] as f64 / n,
            "Acc@5": successes[s][1] as f64 / n,
            "Acc@10": successes[s][2] as f64 / n,
            "p50Ms": percentile(&latencies[s], 0.5),
            "p95Ms": percentile(&latencies[s], 0.95),
        }));
    }
    if crate::output::verbose() {
        for row in &per_instance {
            eprintln!("{row}");
        }
    }
    let projects: BTreeSet<&str> = instances.iter().map(|i| project_of(&i.id)).collect();
    let projects: Vec<&str> = projects.into_iter().collect();
    report(
        &format!(
            "SWE-bench {}, {} file localization: {scored} instances over {} releases \
             (Acc@k: every gold file in the top k files; MRR by the worst gold file's rank)",
            args.split,
            projects.join(", "),
            by_version.len()
        ),
        &["MRR", "Acc@1", "Acc@5", "Acc@10"],
        &rows,
        &ranks,
        json!({ "model": model, "indexSeconds": index_seconds, "embedHeadChars": EMBED_HEAD_CHARS, "instances": per_instance }),
        json,
    );
    Ok(())
}

/// Prints how one system ranked one instance (`--explain`): the query as analysed, then
/// the best [`EXPLAINED_HITS`] chunks with each path's rank and contribution.
fn explain(instance: &str, system: &str, response: &engram::SearchResponse) {
    eprintln!(
        "{instance} · {system}: {:?} query\n  tokens: {}\n  counted twice: {}\n  code names: {}",
        response.query_type,
        response.tokens.join(" "),
        response.emphasized.join(" "),
        response.identifiers.join(" ")
    );
    let path = |p: &Option<engram::PathScore>| {
        p.as_ref().map_or("-".to_owned(), |p| {
            format!("#{} {:.4}", p.rank, p.contribution * 100.0)
        })
    };
    eprintln!(
        "  {:>3} {:>7}  {:<44} {:>12} {:>12} {:>12} {:>6} {:>4}",
        "", "score", "file", "keyword", "dense", "graph", "boost", "role"
    );
    for (i, hit) in response.hits.iter().take(EXPLAINED_HITS).enumerate() {
        let b = &hit.breakdown;
        let file = hit.memory.related_files.first().map_or("", String::as_str);
        eprintln!(
            "  {:>3} {:>7.4}  {:<44} {:>12} {:>12} {:>12} {:>6.4} {:>4}",
            i + 1,
            hit.score * 100.0,
            file,
            path(&b.keyword),
            path(&b.dense),
            path(&b.graph),
            b.graph_boost * 100.0,
            b.role_weight
        );
    }
}

/// Files in the order their chunks rank them: `best` by each file's best chunk, `rrf` by
/// the sum of `1 / (60 + rank)` over the file's chunks (a file several chunks point at
/// outranks one with a single slightly better chunk).
fn rank_files<'a>(hits: &'a [engram::SearchHit], how: &str) -> Vec<&'a str> {
    let mut order: Vec<(&str, f64, usize)> = Vec::new();
    for (rank, hit) in hits.iter().enumerate() {
        let Some(file) = hit.memory.related_files.first() else {
            continue;
        };
        let gain = if how == "rrf" {
            1.0 / (60.0 + rank as f64 + 1.0)
        } else {
            0.0
        };
        match order.iter_mut().find(|(f, _, _)| *f == file.as_str()) {
            Some(entry) => entry.1 += gain,
            None => order.push((file.as_str(), gain, rank)),
        }
    }
    if how == "rrf" {
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    }
    order.into_iter().map(|(f, _, _)| f).collect()
}

/// Every `.py` file under `root` (paths relative to it, `/`-separated), sorted.
pub(crate) fn python_files(root: &Path) -> Result<Vec<SourceFile>, CliError> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", dir.display())))?;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if name.ends_with(".py") {
                let Ok(content) = std::fs::read_to_string(&path) else {
                    continue;
                };
                let Ok(relative) = path.strip_prefix(root) else {
                    continue;
                };
                let relative = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                out.push(SourceFile::new(relative, content));
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// A chunk as a memory: its file, its line-free context prefix (so unchanged functions of
/// two releases embed identically), and the graph node of the definition it holds.
fn chunk_memory(chunk: &Chunk, outline: Option<&FileOutline>) -> NewMemory {
    let mut memory = NewMemory::new(MemoryType::Pattern, chunk.content.clone());
    memory.related_files = vec![chunk.path.clone()];
    let definition = outline.and_then(|o| {
        o.definitions
            .iter()
            .find(|d| d.start_line >= chunk.start_line && d.start_line <= chunk.end_line)
            .or_else(|| {
                o.definitions
                    .iter()
                    .filter(|d| d.start_line <= chunk.start_line && d.end_line >= chunk.end_line)
                    .max_by_key(|d| d.start_line)
            })
    });
    let prefix = match definition {
        Some(d) => format!("File: {} | {}: {}", chunk.path, d.kind, d.qualified),
        None => format!("File: {} | {}", chunk.path, chunk.kind),
    };
    memory.target_node_id = definition.map(|d| definition_id(&chunk.path, &d.kind, &d.qualified));
    memory.chunk = Some(ChunkMeta {
        chunk_type: chunk.kind.clone(),
        start_line: chunk.start_line,
        end_line: chunk.end_line,
        context_prefix: Some(prefix),
    });
    memory
}

/// The project an instance id names: `pydata__xarray-4075` → `xarray`.
fn project_of(id: &str) -> &str {
    id.split_once("__")
        .and_then(|(_, rest)| rest.rsplit_once('-'))
        .map_or(id, |(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::project_of;

    #[test]
    fn an_instance_id_names_its_project() {
        assert_eq!(project_of("pydata__xarray-4075"), "xarray");
        assert_eq!(project_of("pytest-dev__pytest-10081"), "pytest");
        assert_eq!(project_of("odd"), "odd");
    }
}
