//! A diagnostic for tests and benchmarks: the query plan of the candidate statement.

use engram_retrieval::analyze;
use engram_store::{Database, Statement, StoreError};

use super::keywords::{KeywordPick, MatchTerms};
use super::query::{SearchMode, SearchQuery};
use super::resident::DensePick;
use super::{first_rows, sql};
use crate::{Engram, EngramError};

impl<D: Database> Engram<D> {
    /// The query plan (SQLite's `EXPLAIN QUERY PLAN` lines) of the candidate statement
    /// that [`Engram::search`] would run for `query`, with every path the query enables
    /// (the dense path with a placeholder vector when an embedder is configured). A
    /// diagnostic: it shows which index each path's lookups use.
    pub async fn search_plan(&self, query: &SearchQuery) -> Result<Vec<String>, EngramError> {
        query.validate()?;
        let analysis = analyze(&query.text, &query.context);
        let vector = match (&self.embedding, query.mode) {
            (Some(embedder), mode) if mode != SearchMode::Keyword => {
                Some(vec![0.0f32; embedder.dims()])
            }
            _ => None,
        };
        let paths = self.paths(query, &analysis, vector.is_some());
        let pick = DensePick::none(0);
        let keyword_pick = KeywordPick::none(0);
        let statement = Statement::with_params(
            format!("EXPLAIN QUERY PLAN {}", sql::candidates(&paths)),
            self.candidate_params(
                query,
                &analysis,
                &MatchTerms::of(analysis.match_tokens()),
                vector.as_deref(),
                Some(&pick),
                Some(&keyword_pick),
            ),
        );
        let rows = first_rows(self.db.pipeline(&[statement]).await?)?;
        rows.rows
            .iter()
            .map(|row| {
                row.get(3)
                    .ok_or_else(|| StoreError::Decode("short query plan row".into()).into())
                    .and_then(|v| Ok(v.as_text("plan detail")?.to_owned()))
            })
            .collect()
    }
}
