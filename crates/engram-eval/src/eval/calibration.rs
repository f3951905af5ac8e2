//! The evidence the relevance calibration is fitted on: for each query of a dataset, every
//! hit of the top 50 with its dense similarity, term coverage and whether it is one of the
//! query's relevant memories, written as JSON lines (`--features-out`). Searches run with
//! the search cut off, once with every path (the dense path ran) and once keyword-only,
//! since the calibration has weights for each. `scripts/fit-relevance.py` fits them.
//!
//! A dataset's labels name one gold function (CoSQA) or the rules under one heading, so an
//! unlabelled hit may still be relevant. Hits known to be unrelated come from the other
//! dataset's queries run against the same store: Python code questions against
//! instruction rules, and rule headings against Python functions ([`unrelated_queries`]).

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use engram::{Database, Engram, SearchMode, SearchQuery, Stages};
use serde_json::json;

use crate::CliError;

/// Appends the evidence of `queries` (text, ids of its relevant memories) to `path`.
pub(crate) async fn write_features<D: Database>(
    engram: &Engram<D>,
    dataset: &str,
    queries: impl IntoIterator<Item = (&str, &HashSet<String>)>,
    path: &Path,
) -> Result<(), CliError> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", path.display())))?;
    let mut out = std::io::BufWriter::new(file);
    let mut lines = 0usize;
    for (text, gold) in queries {
        for mode in [SearchMode::Hybrid, SearchMode::Keyword] {
            let mut query = SearchQuery::new(super::truncate_bytes(text, engram::MAX_QUERY_BYTES));
            query.limit = 50;
            query.mode = mode;
            query.stages = Stages {
                cut: false,
                ..Stages::default()
            };
            let response = engram.search(&query).await?;
            let dense_ran = response.hits.iter().any(|h| h.breakdown.dense.is_some());
            for (rank, hit) in response.hits.iter().enumerate() {
                let line = json!({
                    "dataset": dataset,
                    "query": text,
                    "denseRan": dense_ran,
                    "similarity": hit.breakdown.dense.map(|d| d.metric),
                    "coverage": hit.breakdown.coverage,
                    "rank": rank + 1,
                    "relevant": gold.contains(&hit.memory.id),
                });
                writeln!(out, "{line}")
                    .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
                lines += 1;
            }
        }
    }
    out.flush()
        .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
    eprintln!("{lines} hits' evidence appended to {}", path.display());
    Ok(())
}

/// The queries of the dataset that is not `store`'s, to search `store`'s memories with:
/// none of their hits is relevant. For `rules`, CoSQA's split queries; for `cosqa`, the
/// instruction files' headings.
pub(crate) fn unrelated_queries(
    data: &Path,
    store: &str,
    split: &str,
) -> Result<Vec<String>, CliError> {
    if store == "rules" {
        let dir = data.join("cosqa");
        let file = super::split_file(&dir, "cosqa-retrieval-", split, ".json")?;
        let text = std::fs::read_to_string(&file)
            .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", file.display())))?;
        let queries: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| CliError::Usage(format!("{}: {e}", file.display())))?;
        return Ok(queries
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|q| Some(q["doc"].as_str()?.to_owned()))
            .collect());
    }
    Ok(super::rules::headings(&data.join("instructions"))?
        .into_iter()
        .map(|q| q.text)
        .collect())
}
