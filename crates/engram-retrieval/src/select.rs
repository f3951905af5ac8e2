//! The two retrieval modes.
//!
//! Auto-inject runs between an agent's steps without being asked, so it must be precise: the
//! best result must be relevant in absolute terms, the others close to it, at most three, and
//! it may return nothing. Search is what an agent asks for: up to its limit, with memories
//! that need review included but flagged.

use serde::{Deserialize, Serialize};

use crate::candidate::Candidate;
use crate::scoring::{Rated, SEARCH_MIN_RELEVANCE};

/// Auto-inject: the best result's relevance must reach this. On the calibration's data,
/// the lowest bar at which nine in ten queries about nothing in an instruction-rule store
/// inject nothing, with the dense path and without.
pub const AUTO_MIN_RELEVANCE: f64 = 0.75;
/// Auto-inject: every result's score must reach this share of the best score.
pub const AUTO_RELATIVE_CUTOFF: f64 = 0.6;
/// Auto-inject: most results.
pub const AUTO_MAX_RESULTS: usize = 3;
/// HyDE runs when fewer than this many search results reach [`HYDE_RELEVANCE`].
pub const HYDE_MIN_STRONG: usize = 3;
/// See [`HYDE_MIN_STRONG`]: a strong result is one auto-injection would accept.
pub const HYDE_RELEVANCE: f64 = AUTO_MIN_RELEVANCE;

/// How results will be used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Asked for by the agent: up to the limit, stale memories included with a warning.
    #[default]
    Search,
    /// Injected without being asked: at most 3, precise, may be empty; never stale memories.
    AutoInject,
}

/// What selection kept, and why the rest went.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// Kept candidates, best first.
    pub results: Vec<Candidate>,
    /// Memories that need review kept in search mode (ids), to be warned about.
    pub stale: Vec<String>,
    /// Why auto-inject returned nothing, if it did.
    pub empty_reason: Option<String>,
}

/// Applies `mode`'s rules to ranked candidates; `cut` drops the clearly unrelated from a
/// search (below [`SEARCH_MIN_RELEVANCE`]). `relevance` rates a candidate (see
/// [`crate::scoring::relevance`]); it is asked only for the candidates the rules look at,
/// and each kept candidate carries its rating in
/// [`Breakdown::relevance`](crate::candidate::Breakdown::relevance) and
/// [`Breakdown::coverage`](crate::candidate::Breakdown::coverage). Working out relevance
/// means reading the candidate's words, and a search ranks many more candidates than it
/// keeps.
pub fn select(
    candidates: Vec<Candidate>,
    mode: Mode,
    limit: usize,
    cut: bool,
    relevance: impl Fn(&Candidate) -> Rated,
) -> Selection {
    let rated = |mut c: Candidate| {
        let rating = relevance(&c);
        c.breakdown.relevance = rating.relevance;
        c.breakdown.coverage = rating.coverage;
        c
    };
    match mode {
        Mode::Search => search(candidates, limit, cut, rated),
        Mode::AutoInject => auto_inject(candidates, limit, rated),
    }
}

/// Search mode: the first `limit` candidates, in rank order, that are related (all of
/// them without `cut`).
fn search(
    candidates: Vec<Candidate>,
    limit: usize,
    cut: bool,
    rated: impl Fn(Candidate) -> Candidate,
) -> Selection {
    let mut best_dropped: Option<f64> = None;
    let results: Vec<Candidate> = candidates
        .into_iter()
        .map(rated)
        .filter(|c| {
            let related = !cut || c.breakdown.relevance >= SEARCH_MIN_RELEVANCE;
            if !related {
                let best = best_dropped.get_or_insert(0.0);
                *best = best.max(c.breakdown.relevance);
            }
            related
        })
        .take(limit)
        .collect();
    let stale = results
        .iter()
        .filter(|c| c.memory.flags.needs_review)
        .map(|c| c.memory.id.clone())
        .collect();
    let empty_reason = match (results.is_empty(), best_dropped) {
        (true, Some(best)) => Some(format!(
            "nothing related: the best relevance {best:.2} is below {SEARCH_MIN_RELEVANCE}"
        )),
        _ => None,
    };
    Selection {
        results,
        stale,
        empty_reason,
    }
}

/// Auto-inject mode: nothing unless the best fresh candidate is relevant in absolute
/// terms; then the fresh candidates close to its score that are relevant too.
fn auto_inject(
    candidates: Vec<Candidate>,
    limit: usize,
    rated: impl Fn(Candidate) -> Candidate,
) -> Selection {
    let nothing = |reason: String| Selection {
        results: Vec::new(),
        stale: Vec::new(),
        empty_reason: Some(reason),
    };
    let mut fresh = candidates
        .into_iter()
        .filter(|c| !c.memory.flags.needs_review);
    let Some(best) = fresh.next().map(&rated) else {
        return nothing("no candidates".into());
    };
    if best.breakdown.relevance < AUTO_MIN_RELEVANCE {
        return nothing(format!(
            "best relevance {:.2} is below {AUTO_MIN_RELEVANCE}",
            best.breakdown.relevance
        ));
    }
    let floor = best.breakdown.score * AUTO_RELATIVE_CUTOFF;
    // The best clears its own floor; the others are rated only if they clear it.
    let results = std::iter::once(best)
        .chain(fresh.filter(|c| c.breakdown.score >= floor).map(rated))
        .filter(|c| c.breakdown.relevance >= AUTO_MIN_RELEVANCE)
        .take(AUTO_MAX_RESULTS.min(limit.max(1)))
        .collect();
    Selection {
        results,
        stale: Vec::new(),
        empty_reason: None,
    }
}

/// Whether a search should try HyDE: fewer than [`HYDE_MIN_STRONG`] of `results` reach
/// [`HYDE_RELEVANCE`] by `relevance` (asked until that many do).
pub fn wants_hyde(results: &[Candidate], relevance: impl Fn(&Candidate) -> Rated) -> bool {
    results
        .iter()
        .filter(|c| relevance(c).relevance > HYDE_RELEVANCE)
        .take(HYDE_MIN_STRONG)
        .count()
        < HYDE_MIN_STRONG
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::test_support::fake_memory;

    fn c(id: &str, score: f64, relevance: f64) -> Candidate {
        let mut c = Candidate::new(fake_memory(id, id));
        c.breakdown.score = score;
        c.breakdown.relevance = relevance;
        c
    }

    /// The relevance each test candidate was made with.
    fn preset(c: &Candidate) -> Rated {
        Rated {
            relevance: c.breakdown.relevance,
            coverage: 0.5,
        }
    }

    #[test]
    fn auto_inject_needs_an_absolute_match_and_stays_close_to_the_best() {
        let out = select(
            vec![
                c("a", 1.0, 0.9),
                c("b", 0.7, 0.85),
                c("c", 0.65, 0.3), // close in score but not relevant
                c("d", 0.5, 0.9),  // relevant but below 60 % of the best
                c("e", 0.9, 0.9),
            ],
            Mode::AutoInject,
            10,
            true,
            preset,
        );
        let ids: Vec<&str> = out.results.iter().map(|c| c.memory.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "e"]);
    }

    #[test]
    fn auto_inject_returns_nothing_for_weak_matches_and_skips_stale() {
        let weak = select(vec![c("a", 1.0, 0.3)], Mode::AutoInject, 10, true, preset);
        assert!(weak.results.is_empty());
        assert!(weak.empty_reason.unwrap().contains("0.30"));
        let mut stale = c("s", 2.0, 1.0);
        stale.memory.flags.needs_review = true;
        let out = select(
            vec![stale.clone(), c("a", 1.0, 0.8)],
            Mode::AutoInject,
            10,
            true,
            preset,
        );
        assert_eq!(out.results.len(), 1);
        assert_eq!(out.results[0].memory.id, "a");
        // Search mode keeps it and names it.
        let search = select(
            vec![stale, c("a", 1.0, 0.8)],
            Mode::Search,
            10,
            true,
            preset,
        );
        assert_eq!(search.results.len(), 2);
        assert_eq!(search.stale, ["s"]);
    }

    #[test]
    fn relevance_is_asked_only_for_what_the_rules_look_at() {
        use std::cell::RefCell;
        let ranked = || -> Vec<Candidate> {
            [1.0, 0.9, 0.7, 0.5, 0.2]
                .iter()
                .enumerate()
                .map(|(i, s)| c(&format!("m{i}"), *s, 0.85))
                .collect()
        };
        let asked = RefCell::new(Vec::new());
        let counting = |c: &Candidate| {
            asked.borrow_mut().push(c.memory.id.clone());
            preset(c)
        };
        let search = select(ranked(), Mode::Search, 2, true, counting);
        assert_eq!(*asked.borrow(), ["m0", "m1"]);
        assert!(search.results.iter().all(|c| c.breakdown.relevance == 0.85));
        asked.borrow_mut().clear();
        // Auto-inject: the best, then only those within 60 % of its score.
        let auto = select(ranked(), Mode::AutoInject, 10, true, counting);
        assert_eq!(*asked.borrow(), ["m0", "m1", "m2"]);
        assert_eq!(auto.results.len(), 3);
        asked.borrow_mut().clear();
        // HyDE stops asking once enough results are strong.
        assert!(!wants_hyde(&ranked(), counting));
        assert_eq!(asked.borrow().len(), HYDE_MIN_STRONG);
    }

    #[test]
    fn search_drops_the_clearly_unrelated_and_says_so_when_nothing_is_left() {
        let ranked = vec![
            c("a", 1.0, 0.04),
            c("b", 0.9, 0.7),
            c("c", 0.8, 0.02),
            c("d", 0.7, 0.3),
            c("e", 0.6, 0.9),
        ];
        let out = select(ranked, Mode::Search, 2, true, preset);
        let ids: Vec<&str> = out.results.iter().map(|c| c.memory.id.as_str()).collect();
        assert_eq!(ids, ["b", "d"], "the first two related hits, in rank order");
        assert!(out.results.iter().all(|c| c.breakdown.coverage == 0.5));
        assert_eq!(out.empty_reason, None);
        let none = select(
            vec![c("a", 1.0, 0.04), c("b", 0.5, 0.07)],
            Mode::Search,
            10,
            true,
            preset,
        );
        assert!(none.results.is_empty());
        assert!(none.empty_reason.unwrap().contains("0.07"));
    }

    #[test]
    fn at_most_three_are_injected() {
        let many: Vec<Candidate> = (0..6).map(|i| c(&format!("m{i}"), 1.0, 0.9)).collect();
        assert_eq!(
            select(many, Mode::AutoInject, 10, true, preset)
                .results
                .len(),
            3
        );
    }

    #[test]
    fn hyde_triggers_on_few_strong_results() {
        assert!(wants_hyde(&[c("a", 1.0, 0.9), c("b", 1.0, 0.2)], preset));
        assert!(!wants_hyde(
            &[c("a", 1.0, 0.9), c("b", 1.0, 0.95), c("c", 1.0, 0.76)],
            preset
        ));
    }
}
