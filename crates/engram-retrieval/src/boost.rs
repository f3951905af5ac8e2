//! The graph neighbourhood boost.
//!
//! Candidates ranked 11–50 whose files neighbour the files of the top 10 in the code graph
//! (or by co-access) move up. Adding `0.3 × neighbour share` as it is to an RRF score whose
//! maximum is `1/61 ≈ 0.016`, which would lift every neighbour above every direct hit; here
//! the boost is in RRF units: `0.3 × share / (k + 1)`, what a path of weight 0.3 ranking the
//! candidate first would add. The share is the Jaccard overlap between the candidate's
//! neighbourhood and the top files: a hub that neighbours many files among the candidates
//! (a compat or config module everything imports) is weak evidence of relevance to any of
//! them, so it moves up less than a file whose neighbours are mostly the top files.
//!
//! A neighbour moves up at most level with the results that vouch for it: its boosted
//! score is capped at the lowest score among the top-10 results its file neighbours. The
//! boost says "this sits next to what matched", which is weaker evidence than the match
//! itself; uncapped, a chunk of a package's `__init__.py` or of a module importing the
//! matched ones could outrank every direct hit (on SWE-bench pytest dev the cap turns the
//! boost from a loss against the no-boost ablation, 5 better / 2 worse with MRR −0.006,
//! into a gain, 4 / 0 with MRR +0.009).

use std::collections::{BTreeSet, HashMap};

use crate::candidate::{sort_by_score, Candidate};
use crate::fusion::RRF_K;

/// Results whose neighbours are boosted.
pub const BOOST_TOP: usize = 10;
/// Candidates past this position are not boosted.
pub const BOOST_WINDOW_END: usize = 50;
/// The boost's weight, as a path weight.
pub const BOOST_WEIGHT: f64 = 0.3;

/// Files that neighbour each other (undirected), from the graph and co-access edges.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileAdjacency {
    neighbours: HashMap<String, BTreeSet<String>>,
}

impl FileAdjacency {
    /// Records that `a` and `b` neighbour each other.
    pub fn add(&mut self, a: &str, b: &str) {
        if a == b {
            return;
        }
        self.neighbours
            .entry(a.to_owned())
            .or_default()
            .insert(b.to_owned());
        self.neighbours
            .entry(b.to_owned())
            .or_default()
            .insert(a.to_owned());
    }

    /// The files that neighbour `file`.
    pub fn of(&self, file: &str) -> Option<&BTreeSet<String>> {
        self.neighbours.get(file)
    }

    /// Whether `a` and `b` neighbour each other.
    pub fn neighbours(&self, a: &str, b: &str) -> bool {
        self.neighbours.get(a).is_some_and(|n| n.contains(b))
    }

    /// Number of recorded pairs.
    pub fn len(&self) -> usize {
        // Each pair is recorded from both ends.
        self.neighbours.values().map(BTreeSet::len).sum::<usize>() / 2
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.neighbours.is_empty()
    }
}

/// Boosts candidates 11–50 (`candidates` must be ordered best first) by the share of the
/// top 10's files their own files neighbour, at most to the score of the lowest top-10
/// result they neighbour, then re-orders.
pub fn boost(mut candidates: Vec<Candidate>, adjacency: &FileAdjacency) -> Vec<Candidate> {
    if adjacency.is_empty() || candidates.len() <= BOOST_TOP {
        return candidates;
    }
    let top_files: BTreeSet<String> = candidates
        .iter()
        .take(BOOST_TOP)
        .flat_map(|c| c.memory.related_files.iter().cloned())
        .collect();
    if top_files.is_empty() {
        return candidates;
    }
    let (top, rest) = candidates.split_at_mut(BOOST_TOP);
    for candidate in rest.iter_mut().take(BOOST_WINDOW_END - BOOST_TOP) {
        let files = &candidate.memory.related_files;
        let around: BTreeSet<&String> = files
            .iter()
            .filter_map(|f| adjacency.of(f))
            .flatten()
            .collect();
        let neighbouring = around
            .iter()
            .filter(|f| top_files.contains(f.as_str()))
            .count();
        if neighbouring == 0 {
            continue;
        }
        // Jaccard: |N(f) ∩ top| / |N(f) ∪ top|.
        let share = neighbouring as f64 / (top_files.len() + around.len() - neighbouring) as f64;
        let vouchers: Vec<&Candidate> = top
            .iter()
            .filter(|t| {
                t.memory
                    .related_files
                    .iter()
                    .any(|tf| files.iter().any(|f| adjacency.neighbours(f, tf)))
            })
            .collect();
        let ceiling = vouchers
            .iter()
            .map(|t| t.breakdown.score)
            .fold(f64::INFINITY, f64::min);
        let b = &mut candidate.breakdown;
        let uncapped = BOOST_WEIGHT * share / (RRF_K + 1.0);
        b.score = (b.fused + uncapped).min(ceiling).max(b.fused);
        b.graph_boost = b.score - b.fused;
        b.boosted_by = vouchers.iter().map(|t| t.memory.id.clone()).collect();
    }
    sort_by_score(&mut candidates);
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::test_support::fake_memory;
    use crate::candidate::PathKind;
    use crate::fusion::{fuse, CandidatePool, PathWeights};

    fn ranked(n: usize) -> Vec<Candidate> {
        let mut pool = CandidatePool::default();
        for i in 0..n {
            let mut m = fake_memory(&format!("m{i:02}"), "x");
            m.related_files = vec![format!("f{i:02}.rs")];
            pool.add(PathKind::Keyword, i as u32 + 1, 1.0, m);
        }
        fuse(
            pool.into_candidates(),
            &PathWeights {
                keyword: 1.0,
                dense: 0.0,
                graph: 0.0,
            },
        )
    }

    #[test]
    fn neighbours_of_the_top_ten_move_up_by_the_documented_amount() {
        let mut adjacency = FileAdjacency::default();
        adjacency.add("f00.rs", "f30.rs");
        adjacency.add("f01.rs", "f30.rs");
        adjacency.add("f02.rs", "f55.rs"); // position 56: outside the window
        let before = ranked(60);
        let score_30 = before[30].breakdown.score;
        let after = boost(before, &adjacency);
        let c = after.iter().position(|c| c.memory.id == "m30").unwrap();
        let b = &after[c].breakdown;
        let expected = BOOST_WEIGHT * (2.0 / 10.0) / (RRF_K + 1.0);
        assert!((b.graph_boost - expected).abs() < 1e-15);
        assert!((b.score - (score_30 + expected)).abs() < 1e-15);
        assert_eq!(b.boosted_by, ["m00", "m01"]);
        assert!(c < 30, "m30 moved up to {c}");
        let m55 = after.iter().find(|c| c.memory.id == "m55").unwrap();
        assert_eq!(m55.breakdown.graph_boost, 0.0);
        // The top ten are never boosted.
        assert!(after[..10].iter().all(|c| c.breakdown.graph_boost == 0.0));
    }

    #[test]
    fn a_neighbour_rises_at_most_level_with_the_results_that_vouch_for_it() {
        let mut adjacency = FileAdjacency::default();
        // m11's file neighbours all of the top ten: a share of 1 would add 0.3 / 61, more
        // than the gap between positions 12 and 1.
        for i in 0..10 {
            adjacency.add(&format!("f{i:02}.rs"), "f11.rs");
        }
        let before = ranked(20);
        let weakest_voucher = before[9].breakdown.score;
        let fused = before[11].breakdown.fused;
        assert!(fused + BOOST_WEIGHT / (RRF_K + 1.0) > before[0].breakdown.score);
        let after = boost(before, &adjacency);
        let at = after.iter().position(|c| c.memory.id == "m11").unwrap();
        let b = &after[at].breakdown;
        assert_eq!(b.boosted_by.len(), 10);
        assert!((b.graph_boost - (weakest_voucher - fused)).abs() < 1e-15);
        assert_eq!(b.score, weakest_voucher);
        // Level with m09, ordered after it by the better best rank.
        assert_eq!(after[9].memory.id, "m09");
        assert_eq!(at, 10);
    }

    #[test]
    fn no_adjacency_changes_nothing() {
        let before = ranked(20);
        let after = boost(before.clone(), &FileAdjacency::default());
        assert_eq!(before, after);
    }
}
