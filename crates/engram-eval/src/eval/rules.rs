//! `engram-eval rules`: prose memories. Every rule of the real instruction files in
//! `instructions/` is imported into one store (each repository's files under a folder of
//! their own, so the store holds the memories of 18 projects side by side), and each
//! section heading of a file is a query whose relevant memories are the rules under it.
//!
//! The queries are made mechanically, not written to fit: a heading is what the file's
//! author called the rules below it ("Running tests", "Error handling"), which is the
//! short topic question an agent or a person asks of a memory store. A heading and its
//! rules rarely share all their words, and several projects have a "Testing" section,
//! so neither keyword nor dense matching wins by construction. Headings that are the
//! file's own name ("AGENTS.md") say nothing of a topic and are left out, as are
//! sections with more than [`MAX_GOLD`] rules (a whole file's title).
//!
//! Scores: MRR of the first relevant rule over the top 50, recall@10 (the share of a
//! query's relevant rules in its top 10, out of at most 10) and hit@1/10.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use engram::{ImportRequest, InstructionFile};
use serde_json::json;

use super::{cached_model, percentile, report, save_vectors, timed_search, warm_queries};
use super::{EvalArgs, GoldRanks, System};
use crate::{CliError, Target};

/// Sections with more rules than this are a file's title, not a topic.
const MAX_GOLD: usize = 40;

/// A file's path and, for each of its rules, the headings it sits under and its memory.
pub(crate) type FileSections = (String, Vec<(Vec<String>, String)>);

/// One query: a heading and the memories of the rules under it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HeadingQuery {
    /// The heading's words.
    pub text: String,
    /// Ids of the memories of the rules under it (and under its sub-headings).
    pub gold: HashSet<String>,
}

pub(super) async fn run(
    args: &EvalArgs,
    data: &Path,
    systems: &[System],
    target: &Target,
    json: bool,
) -> Result<(), CliError> {
    let dir = data.join("instructions");
    if !dir.is_dir() {
        say!("skipping eval: no instruction files in {}", dir.display());
        return Ok(());
    }
    let files = listed_files(&dir)?;
    let embedder = cached_model(args, target, systems)?;
    let engram = super::open_memory("rules", embedder.as_ref(), args, target).await?;
    let model = engram.embedding_model().map(str::to_owned);
    let started = Instant::now();
    let imported = engram
        .import_instructions(ImportRequest {
            files: files.clone(),
        })
        .await?;
    save_vectors(embedder.as_deref())?;
    let mut sections: Vec<FileSections> = Vec::new();
    for (file, import) in files.iter().zip(&imported.files) {
        let parsed = engram_instructions::parse(&file.path, file.text.as_bytes())
            .map_err(|e| CliError::Usage(format!("{}: {e}", file.path)))?;
        let section_of: HashMap<usize, &Vec<String>> =
            parsed.rules.iter().map(|r| (r.line, &r.section)).collect();
        let rules = import
            .rules
            .iter()
            .filter_map(|r| Some(((*section_of.get(&r.line)?).clone(), r.id.clone())))
            .collect();
        sections.push((file.path.clone(), rules));
    }
    let mut queries = heading_queries(&sections);
    if let Some(n) = args.queries {
        queries.truncate(n);
    }
    let memories: HashSet<&str> = imported
        .files
        .iter()
        .flat_map(|f| f.rules.iter().map(|r| r.id.as_str()))
        .collect();
    let index_seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "{} rules of {} files as {} memories in {index_seconds:.1}s ({}); {} heading queries",
        imported.files.iter().map(|f| f.rules.len()).sum::<usize>(),
        files.len(),
        memories.len(),
        model.as_deref().unwrap_or("keyword only"),
        queries.len()
    );
    engram.load_resident_vectors().await?;
    engram.load_resident_keywords().await?;
    warm_queries(
        &engram,
        systems,
        queries.iter().map(|q| q.text.as_str()),
        embedder.as_deref(),
    )
    .await?;

    if let Some(path) = &args.features_out {
        let queries = queries.iter().map(|q| (q.text.as_str(), &q.gold));
        super::calibration::write_features(&engram, "rules", queries, path).await?;
        let unrelated = super::calibration::unrelated_queries(data, "rules", &args.split)?;
        let none = HashSet::new();
        let unrelated = unrelated.iter().map(|q| (q.as_str(), &none));
        super::calibration::write_features(&engram, "rules-unrelated", unrelated, path).await?;
    }
    let mut rows = Vec::new();
    let mut ranks: GoldRanks = Vec::new();
    for system in systems {
        if system.needs_dense() && model.is_none() {
            eprintln!("skipping {}: no embedding model", system.name);
            continue;
        }
        let mut latencies = Vec::with_capacity(queries.len());
        let mut first_ranks = Vec::with_capacity(queries.len());
        let (mut recall, mut hit1, mut hit10) = (0.0, 0usize, 0usize);
        for query in &queries {
            let (response, ms) = timed_search(&engram, &system.query(&query.text, 50)).await?;
            latencies.push(ms);
            let found: Vec<usize> = response
                .hits
                .iter()
                .enumerate()
                .filter(|(_, h)| query.gold.contains(&h.memory.id))
                .map(|(i, _)| i + 1)
                .collect();
            let first = found.first().copied();
            first_ranks.push(first);
            recall +=
                found.iter().filter(|r| **r <= 10).count() as f64 / query.gold.len().min(10) as f64;
            hit1 += usize::from(first == Some(1));
            hit10 += usize::from(first.is_some_and(|r| r <= 10));
        }
        latencies.sort_by(f64::total_cmp);
        let n = queries.len().max(1) as f64;
        rows.push(json!({
            "system": system.name,
            "queries": queries.len(),
            "MRR": super::paired::mean_reciprocal_rank(&first_ranks),
            "R@10": recall / n,
            "hit@1": hit1 as f64 / n,
            "hit@10": hit10 as f64 / n,
            "p50Ms": percentile(&latencies, 0.5),
            "p95Ms": percentile(&latencies, 0.95),
        }));
        ranks.push((system.name.clone(), first_ranks));
    }
    report(
        &format!(
            "Rules (prose memories): {} heading queries over {} memories of {} instruction files \
(MRR of the first relevant rule over the top 50; R@10 out of at most 10)",
            queries.len(),
            memories.len(),
            files.len()
        ),
        &["MRR", "R@10", "hit@1", "hit@10"],
        &rows,
        &ranks,
        json!({ "model": model, "indexSeconds": index_seconds, "memories": memories.len() }),
        json,
    );
    Ok(())
}

/// The heading queries of the instruction files in `dir`, read without a store (their
/// gold names rules by file and line): the words other stores are searched with.
pub(crate) fn headings(dir: &Path) -> Result<Vec<HeadingQuery>, CliError> {
    let mut sections = Vec::new();
    for file in listed_files(dir)? {
        let parsed = engram_instructions::parse(&file.path, file.text.as_bytes())
            .map_err(|e| CliError::Usage(format!("{}: {e}", file.path)))?;
        let rules = parsed
            .rules
            .into_iter()
            .map(|r| (r.section, format!("{}:{}", file.path, r.line)))
            .collect();
        sections.push((file.path, rules));
    }
    Ok(heading_queries(&sections))
}

/// The manifest's files, each under a folder named for its repository (`android__nowinandroid/AGENTS.md`),
/// so files of different projects with the same path stay apart in one store.
fn listed_files(dir: &Path) -> Result<Vec<InstructionFile>, CliError> {
    super::instructions::manifest(&dir.join("manifest.tsv"), false)?
        .iter()
        .map(|l| {
            let path = format!("{}/{}", l.repo.replace('/', "__"), l.path);
            super::instructions::read(&dir.join(&l.name), &path)
        })
        .collect()
}

/// One query per distinct heading of each file: the heading's words, and the memories of
/// every rule whose section path starts with the path to that heading. Headings naming
/// the file itself, headings with no words, and sections over [`MAX_GOLD`] rules are left
/// out; a query that repeats another's words and rules is kept once.
pub(crate) fn heading_queries(files: &[FileSections]) -> Vec<HeadingQuery> {
    let mut queries: Vec<HeadingQuery> = Vec::new();
    for (path, rules) in files {
        let file_name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
        let file_stem = file_name.split('.').next().unwrap_or("").to_owned();
        let mut by_prefix: BTreeMap<Vec<String>, HashSet<String>> = BTreeMap::new();
        for (section, id) in rules {
            for depth in 1..=section.len() {
                by_prefix
                    .entry(section[..depth].to_vec())
                    .or_default()
                    .insert(id.clone());
            }
        }
        for (prefix, gold) in by_prefix {
            let text = heading_words(prefix.last().map_or("", String::as_str));
            let lower = text.to_lowercase();
            let names_file = lower == file_name || lower == file_stem;
            if text.is_empty() || names_file || gold.len() > MAX_GOLD {
                continue;
            }
            let query = HeadingQuery { text, gold };
            if !queries.contains(&query) {
                queries.push(query);
            }
        }
    }
    queries
}

/// A heading's words: markdown emphasis, code ticks, a leading number ("2.") and emoji
/// removed.
fn heading_words(heading: &str) -> String {
    let words: Vec<&str> = heading
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| matches!(c, '*' | '_' | '`' | '#')))
        .filter(|w| !w.is_empty())
        .collect();
    let start = usize::from(words.first().is_some_and(|w| {
        w.trim_end_matches(['.', ')'])
            .chars()
            .all(|c| c.is_ascii_digit())
    }));
    words[start.min(words.len())..]
        .iter()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(section: &[&str], id: &str) -> (Vec<String>, String) {
        (
            section.iter().map(|s| (*s).to_owned()).collect(),
            id.to_owned(),
        )
    }

    #[test]
    fn a_heading_gathers_the_rules_beneath_it_and_the_file_title_is_no_query() {
        let files = vec![(
            "acme/AGENTS.md".to_owned(),
            vec![
                rule(&["AGENTS.md", "Testing"], "a"),
                rule(&["AGENTS.md", "Testing", "**Unit** tests"], "b"),
                rule(&["AGENTS.md", "2. Style 🎨"], "c"),
                rule(&[], "d"),
            ],
        )];
        let queries = heading_queries(&files);
        let texts: Vec<&str> = queries.iter().map(|q| q.text.as_str()).collect();
        assert_eq!(texts, ["Style", "Testing", "Unit tests"]);
        let testing = &queries[1];
        assert_eq!(
            testing.gold,
            HashSet::from(["a".to_owned(), "b".to_owned()])
        );
        assert_eq!(queries[2].gold, HashSet::from(["b".to_owned()]));
    }
}
