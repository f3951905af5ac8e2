//! Paired comparison of two systems on the same queries: on how many queries one ranks the
//! gold better, on how many worse, and whether that split could be chance.
//!
//! Averages hide how a difference is made. An MRR 0.014 below another system's can be a
//! few queries lost badly or a hundred small swaps either way; and on 34 instances one
//! hit is 0.03 of Acc@k. The sign test asks only which system ranked each query's gold
//! higher, so it needs no assumption about how ranks are distributed, and its p-value
//! says how often a split at least this uneven comes from two equally good systems.

use serde_json::{json, Value};

/// The system the others are compared with.
pub(crate) const REFERENCE: &str = "full";

/// How one system's per-query gold ranks compare with another's on the same queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Paired {
    /// Queries where the system ranks the gold higher.
    pub better: usize,
    /// Queries where it ranks the gold lower.
    pub worse: usize,
    /// Queries where both rank it the same, or neither finds it.
    pub tied: usize,
}

impl Paired {
    /// Compares `system`'s gold ranks with `baseline`'s, query by query (1-based ranks;
    /// `None` is not found, below every rank). Extra queries on either side are ignored.
    pub fn of(system: &[Option<usize>], baseline: &[Option<usize>]) -> Paired {
        let mut paired = Paired {
            better: 0,
            worse: 0,
            tied: 0,
        };
        for (a, b) in system.iter().zip(baseline) {
            let (a, b) = (a.unwrap_or(usize::MAX), b.unwrap_or(usize::MAX));
            match a.cmp(&b) {
                std::cmp::Ordering::Less => paired.better += 1,
                std::cmp::Ordering::Greater => paired.worse += 1,
                std::cmp::Ordering::Equal => paired.tied += 1,
            }
        }
        paired
    }

    /// The two-sided exact sign test: the probability that two equally good systems split
    /// the untied queries at least this unevenly (ties carry no information and are left
    /// out). 1 when every query ties.
    pub fn sign_test(&self) -> f64 {
        let n = self.better + self.worse;
        let fewer = self.better.min(self.worse);
        // P(X = i) for X ~ Binomial(n, 1/2), summed over the tail i ≤ fewer. The terms are
        // built in logarithms: 0.5^n alone underflows from n = 1075, while the terms near
        // n / 2 are still large.
        let mut log_term = -(n as f64) * std::f64::consts::LN_2;
        let mut tail = 0.0;
        for i in 0..=fewer {
            tail += log_term.exp();
            log_term += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
        }
        (2.0 * tail).min(1.0)
    }
}

/// [`REFERENCE`] compared with every other system that ran, in `ranks`' order: each
/// system's name with the comparison. Empty when the reference did not run.
pub(crate) fn against_reference(ranks: &[(String, Vec<Option<usize>>)]) -> Vec<(&str, Paired)> {
    let Some((_, reference)) = ranks.iter().find(|(name, _)| name == REFERENCE) else {
        return Vec::new();
    };
    ranks
        .iter()
        .filter(|(name, _)| name != REFERENCE)
        .map(|(name, baseline)| (name.as_str(), Paired::of(reference, baseline)))
        .collect()
}

/// The JSON rows for `rows` from [`against_reference`]: `system`, `baseline`, `better`,
/// `worse`, `tied`, `signTestP`.
pub(crate) fn json_rows(rows: &[(&str, Paired)]) -> Vec<Value> {
    rows.iter()
        .map(|(baseline, paired)| {
            json!({
                "system": REFERENCE,
                "baseline": baseline,
                "better": paired.better,
                "worse": paired.worse,
                "tied": paired.tied,
                "signTestP": paired.sign_test(),
            })
        })
        .collect()
}

/// The text lines for `rows` from [`against_reference`].
pub(crate) fn lines(rows: &[(&str, Paired)]) -> Vec<String> {
    if rows.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "per query, {REFERENCE} against each system (gold ranked higher / lower / same; \
         two-sided sign test p)"
    )];
    for (baseline, paired) in rows {
        out.push(format!(
            "  vs {baseline:<13} better {:>4}  worse {:>4}  tied {:>4}  p = {}",
            paired.better,
            paired.worse,
            paired.tied,
            probability(paired.sign_test()),
        ));
    }
    out
}

/// A p-value to three decimals, or in scientific notation below 0.001 (where three
/// decimals would print 0.000).
fn probability(p: f64) -> String {
    if p < 1e-3 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_compare_with_not_found_below_every_rank() {
        let system = [Some(1), Some(3), None, Some(2), None];
        let baseline = [Some(2), Some(1), Some(9), Some(2), None];
        assert_eq!(Paired::of(&system, &baseline), split(1, 2, 2));
    }

    /// A comparison of `better` / `worse` / `tied` queries.
    fn split(better: usize, worse: usize, tied: usize) -> Paired {
        Paired {
            better,
            worse,
            tied,
        }
    }

    #[test]
    fn sign_test_matches_the_binomial_tail() {
        // 9 of 10 untied queries one way: 2 × (1 + 10) / 1024.
        let p = split(9, 1, 40);
        assert!((p.sign_test() - 22.0 / 1024.0).abs() < 1e-12);
        // An even split is as likely as can be.
        assert_eq!(split(5, 5, 0).sign_test(), 1.0);
        // Only ties: no evidence either way.
        assert_eq!(split(0, 0, 7).sign_test(), 1.0);
        // Symmetric in the two sides.
        assert_eq!(split(1, 9, 0).sign_test(), p.sign_test());
    }

    #[test]
    fn sign_test_stays_exact_for_thousands_of_queries() {
        // The exact tails: 2 × Σ_{i ≤ 200} C(500, i) / 2^500 = 8.940e-6, and
        // 2 × Σ_{i ≤ 1400} C(3000, i) / 2^3000 = 2.786e-4 (past where 0.5^n underflows).
        let value = split(300, 200, 0).sign_test();
        assert!((value - 8.940e-6).abs() < 0.001e-6, "{value}");
        let value = split(1600, 1400, 0).sign_test();
        assert!((value - 2.786e-4).abs() < 0.001e-4, "{value}");
        // An even split of 3,000 is as likely as can be.
        assert_eq!(split(1500, 1500, 0).sign_test(), 1.0);
    }

    #[test]
    fn the_reference_is_compared_with_every_other_system() {
        let ranks = vec![
            ("bm25".to_owned(), vec![Some(2), None]),
            ("full".to_owned(), vec![Some(1), Some(4)]),
            ("dense".to_owned(), vec![Some(1), Some(3)]),
        ];
        let compared = against_reference(&ranks);
        let rows = json_rows(&compared);
        let baselines: Vec<&str> = rows.iter().filter_map(|r| r["baseline"].as_str()).collect();
        assert_eq!(baselines, ["bm25", "dense"]);
        assert_eq!(rows[0]["better"], 2);
        assert_eq!(rows[1]["worse"], 1);
        assert_eq!(rows[1]["tied"], 1);
        assert!(against_reference(&ranks[..1]).is_empty());
        assert_eq!(lines(&compared).len(), 3);
        assert_eq!(probability(0.4652), "0.465");
        assert_eq!(probability(8.94e-6), "8.9e-6");
    }
}
