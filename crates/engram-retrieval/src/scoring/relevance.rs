//! A hit's relevance on a scale that means the same for every query.
//!
//! Fused scores are sums of reciprocal ranks: they order the hits of one query but say
//! nothing about whether the best of them answers it ("flaky tests" against a store with
//! nothing on tests still has a best hit). Relevance is read off the two pieces of
//! absolute evidence a hit has — the dense path's cosine similarity and the share of the
//! query's words the memory contains — through a logistic model fitted on the evaluation
//! data's relevant hits against hits known to be unrelated, both weighing the same: 0.5
//! means evidence as typical of a relevant hit as of an unrelated one, whatever share of a
//! store is relevant. How it was fitted, and how well it holds, is in docs/retrieval.md.

use crate::candidate::Candidate;
use crate::terms::{term_hash, TermSet};

/// A search drops hits below this relevance: clearly unrelated to the query, whatever
/// their rank. The highest cut that keeps nine in ten relevant hits on every dataset the
/// calibration was fitted on.
pub const SEARCH_MIN_RELEVANCE: f64 = 0.1;

/// The longest query, in words, the search cut applies to: the calibration was fitted on
/// questions and headings of at most 14 words. A long query (an issue report, a pasted
/// log) spreads its words and its embedding over many subjects, so even the hits that
/// answer it hold a small share of its words and a low cosine.
pub const CUT_MAX_QUERY_WORDS: usize = 20;

/// Whether the search cut applies to a query with this text (see
/// [`CUT_MAX_QUERY_WORDS`]).
pub fn cut_applies(query_text: &str) -> bool {
    query_text.split_whitespace().count() <= CUT_MAX_QUERY_WORDS
}

/// Logistic weights when the dense path ran (MiniLM's cosines): bias, cosine similarity,
/// term coverage.
const WITH_DENSE: [f64; 3] = [-4.62, 11.63, 2.75];

/// Logistic weights when it did not (keyword-only stores and searches): bias, term
/// coverage.
const KEYWORD_ONLY: [f64; 2] = [-1.88, 4.74];

/// What [`relevance`] found for one hit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rated {
    /// Calibrated relevance in `[0, 1]`.
    pub relevance: f64,
    /// The share of the query's terms the memory contains ([`term_coverage`]).
    pub coverage: f64,
}

/// A candidate's calibrated relevance to a query with keyword `tokens`. `dense_ran` says
/// whether the dense path searched for this query: then a hit it did not return has a
/// similarity below everything it did, read as 0; without it, coverage is the only
/// evidence and the keyword-only weights apply.
pub fn relevance(tokens: &[String], candidate: &Candidate, dense_ran: bool) -> Rated {
    let coverage = term_coverage(tokens, candidate);
    let logit = if dense_ran {
        let similarity = candidate.dense.map_or(0.0, |d| d.metric.clamp(0.0, 1.0));
        WITH_DENSE[0] + WITH_DENSE[1] * similarity + WITH_DENSE[2] * coverage
    } else {
        KEYWORD_ONLY[0] + KEYWORD_ONLY[1] * coverage
    };
    Rated {
        relevance: 1.0 / (1.0 + (-logit).exp()),
        coverage,
    }
}

/// Share of the query's `tokens` that occur in the memory's content, tags or files, in
/// `[0, 1]`. Words are compared by a light stem (`migrations` matches `migration`), as the
/// keyword index's Porter stemmer would.
pub fn term_coverage(tokens: &[String], candidate: &Candidate) -> f64 {
    if tokens.is_empty() {
        return 0.0;
    }
    let m = &candidate.memory;
    let content = candidate.content_terms();
    let mut extra: Option<TermSet> = None;
    let found = tokens
        .iter()
        .filter(|t| {
            let hash = term_hash(t);
            content.contains(hash)
                || extra
                    .get_or_insert_with(|| {
                        let extra: Vec<&str> = m
                            .tags
                            .iter()
                            .chain(&m.related_files)
                            .map(String::as_str)
                            .collect();
                        TermSet::of(&extra.join(" "))
                    })
                    .contains(hash)
        })
        .count();
    found as f64 / tokens.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::test_support::fake_memory;
    use crate::candidate::{PathHit, PathKind};

    fn hit(content: &str, similarity: Option<f64>) -> Candidate {
        let mut c = Candidate::new(fake_memory("a", content));
        if let Some(metric) = similarity {
            c.set_hit(PathKind::Dense, PathHit { rank: 1, metric });
        }
        c
    }

    fn tokens(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn relevance_stays_in_range_and_rises_with_each_piece_of_evidence() {
        let query = tokens(&["flaky", "tests", "retry"]);
        let contents = [
            "nothing shared",
            "tests are slow",
            "flaky tests here",
            "retry flaky tests",
        ];
        for dense_ran in [true, false] {
            let mut last_by_coverage = -1.0;
            for content in contents {
                let mut last_by_similarity = -1.0;
                for step in 0..=20 {
                    let similarity = f64::from(step) / 20.0 * 1.4 - 0.2; // beyond [0, 1] too
                    let rated = relevance(&query, &hit(content, Some(similarity)), dense_ran);
                    assert!((0.0..=1.0).contains(&rated.relevance), "{rated:?}");
                    assert!(
                        rated.relevance >= last_by_similarity,
                        "{content} {similarity}"
                    );
                    last_by_similarity = rated.relevance;
                }
                let rated = relevance(&query, &hit(content, Some(0.3)), dense_ran);
                assert!(rated.relevance > last_by_coverage, "{content}");
                last_by_coverage = rated.relevance;
            }
        }
    }

    #[test]
    fn the_cut_applies_to_queries_as_long_as_the_calibration_saw() {
        assert!(cut_applies("flaky tests"));
        assert!(cut_applies(&"word ".repeat(CUT_MAX_QUERY_WORDS)));
        assert!(!cut_applies(&"word ".repeat(CUT_MAX_QUERY_WORDS + 1)));
    }

    #[test]
    fn no_evidence_is_below_the_search_cut_and_strong_evidence_clears_the_auto_bar() {
        let query = tokens(&["database", "locked"]);
        let unrelated = relevance(&query, &hit("use pnpm not npm", Some(0.1)), true);
        assert_eq!(unrelated.coverage, 0.0);
        assert!(unrelated.relevance < SEARCH_MIN_RELEVANCE, "{unrelated:?}");
        let unrelated = relevance(&query, &hit("use pnpm not npm", None), false);
        assert!(
            unrelated.relevance < crate::select::AUTO_MIN_RELEVANCE,
            "{unrelated:?}"
        );
        let strong = relevance(
            &query,
            &hit("the database is locked while a migration runs", Some(0.7)),
            true,
        );
        assert_eq!(strong.coverage, 1.0);
        assert!(strong.relevance >= crate::select::AUTO_MIN_RELEVANCE);
        let words_only = relevance(&query, &hit("database locked: retry", None), false);
        assert!(words_only.relevance >= crate::select::AUTO_MIN_RELEVANCE);
    }
}
