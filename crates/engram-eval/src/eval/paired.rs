//! Paired comparison of two systems on the same queries: on how many queries one ranks the
//! gold better, on how many worse, by how much, and whether that could be chance.
//!
//! Averages hide how a difference is made. An MRR 0.014 below another system's can be a
//! few queries lost badly or a hundred small swaps either way; and on 34 instances one
//! hit is 0.03 of Acc@k. Two tests answer "could this be chance", each blind where the
//! other sees:
//! - The sign test asks only which system ranked each query's gold higher, so it needs no
//!   assumption about how ranks are distributed; but a gold lifted from rank 40 to 1 counts
//!   the same as one swapped from 2 to 1.
//! - The randomization test reads the size of each difference in reciprocal rank (the
//!   per-query terms of MRR): if the two systems were equally good, each query's difference
//!   would be as likely to have the other sign, so it flips signs at random and counts how
//!   often the flipped sum is at least as far from zero as the observed one. IR evaluation
//!   prefers it to the sign test for comparing MRR; it assumes nothing about the
//!   distribution either.

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

/// Sign flips the randomization test draws: its p-value is exact to about ±0.0007 at
/// p = 0.05 (and never below 1 / 100,001).
pub(crate) const RANDOMIZATION_SAMPLES: u32 = 100_000;

/// The seed of the randomization test's generator: a fixed seed prints the same p-value
/// on every run of the same data.
const RANDOMIZATION_SEED: u64 = 20_261_126;

/// `1 / rank` of a 1-based gold rank, 0 when the gold was not found.
pub(crate) fn reciprocal_rank(rank: &Option<usize>) -> f64 {
    rank.map_or(0.0, |r| 1.0 / r.max(1) as f64)
}

/// The mean of [`reciprocal_rank`] over `ranks` (0 for no queries).
pub(crate) fn mean_reciprocal_rank(ranks: &[Option<usize>]) -> f64 {
    ranks.iter().map(reciprocal_rank).sum::<f64>() / ranks.len().max(1) as f64
}

/// How far one system's reciprocal ranks lie from another's on the same queries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RankGain {
    /// Mean over the queries of `1 / system rank − 1 / baseline rank` (0 for not found):
    /// the difference of the two MRRs.
    pub mrr_delta: f64,
    /// The two-sided randomization test's p-value for that difference
    /// ([`RankGain::of`]).
    pub p: f64,
}

impl RankGain {
    /// Compares `system`'s gold ranks with `baseline`'s by reciprocal rank, query by query
    /// (1-based ranks; `None` scores 0). The p-value is the share of
    /// [`RANDOMIZATION_SAMPLES`] random sign flips of the per-query differences whose sum
    /// is at least as far from zero as the observed sum, counting the observed
    /// arrangement itself; 1 when every query ties.
    pub fn of(system: &[Option<usize>], baseline: &[Option<usize>]) -> RankGain {
        let deltas: Vec<f64> = system
            .iter()
            .zip(baseline)
            .map(|(a, b)| reciprocal_rank(a) - reciprocal_rank(b))
            .collect();
        let mrr_delta = deltas.iter().sum::<f64>() / deltas.len().max(1) as f64;
        RankGain {
            mrr_delta,
            p: randomization_test(&deltas, RANDOMIZATION_SAMPLES, RANDOMIZATION_SEED),
        }
    }
}

/// The two-sided paired randomization test of `deltas` against zero with `samples` random
/// sign flips drawn from `seed`. Zero differences are left out: their sign changes
/// nothing.
fn randomization_test(deltas: &[f64], samples: u32, seed: u64) -> f64 {
    let nonzero: Vec<f64> = deltas.iter().copied().filter(|d| *d != 0.0).collect();
    if nonzero.is_empty() {
        return 1.0;
    }
    let observed = nonzero.iter().sum::<f64>().abs();
    // Sums of the same terms in another order differ in their last bits; a flipped sum
    // within that of the observed one is as extreme as it.
    let slack = 1e-9 * nonzero.iter().map(|d| d.abs()).sum::<f64>();
    let mut random = SplitMix64(seed);
    let mut as_extreme = 0u64;
    for _ in 0..samples {
        let mut sum = 0.0;
        for block in nonzero.chunks(64) {
            let bits = random.next();
            for (i, d) in block.iter().enumerate() {
                sum += if bits >> i & 1 == 1 { *d } else { -*d };
            }
        }
        if sum.abs() >= observed - slack {
            as_extreme += 1;
        }
    }
    (as_extreme + 1) as f64 / (f64::from(samples) + 1.0)
}

/// SplitMix64 (Steele, Lea and Flood, 2014): 64 well-mixed bits per step from a counter,
/// enough for drawing signs, and deterministic from its seed.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// One row of the comparison: the baseline's name, the sign test's counts and the
/// reciprocal-rank difference.
pub(crate) type Comparison<'a> = (&'a str, Paired, RankGain);

/// [`REFERENCE`] compared with every other system that ran, in `ranks`' order. Empty when
/// the reference did not run.
pub(crate) fn against_reference(ranks: &[(String, Vec<Option<usize>>)]) -> Vec<Comparison<'_>> {
    let Some((_, reference)) = ranks.iter().find(|(name, _)| name == REFERENCE) else {
        return Vec::new();
    };
    ranks
        .iter()
        .filter(|(name, _)| name != REFERENCE)
        .map(|(name, baseline)| {
            (
                name.as_str(),
                Paired::of(reference, baseline),
                RankGain::of(reference, baseline),
            )
        })
        .collect()
}

/// The JSON rows for `rows` from [`against_reference`]: `system`, `baseline`, `better`,
/// `worse`, `tied`, `signTestP`, `mrrDelta`, `randomizationP`.
pub(crate) fn json_rows(rows: &[Comparison<'_>]) -> Vec<Value> {
    rows.iter()
        .map(|(baseline, paired, gain)| {
            json!({
                "system": REFERENCE,
                "baseline": baseline,
                "better": paired.better,
                "worse": paired.worse,
                "tied": paired.tied,
                "signTestP": paired.sign_test(),
                "mrrDelta": gain.mrr_delta,
                "randomizationP": gain.p,
            })
        })
        .collect()
}

/// The text lines for `rows` from [`against_reference`].
pub(crate) fn lines(rows: &[Comparison<'_>]) -> Vec<String> {
    if rows.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "per query, {REFERENCE} against each system: gold ranked higher / lower / same with \
         the two-sided sign test p; MRR difference with the randomization test p"
    )];
    for (baseline, paired, gain) in rows {
        out.push(format!(
            "  vs {baseline:<13} better {:>4}  worse {:>4}  tied {:>4}  p = {:<7}  \
             MRR {:+.4}  p = {}",
            paired.better,
            paired.worse,
            paired.tied,
            probability(paired.sign_test()),
            gain.mrr_delta,
            probability(gain.p),
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
    fn mean_reciprocal_rank_counts_a_miss_as_zero() {
        assert_eq!(
            mean_reciprocal_rank(&[Some(1), Some(4), None, Some(2)]),
            0.4375
        );
        assert_eq!(mean_reciprocal_rank(&[]), 0.0);
    }

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
        // full's reciprocal ranks 1 and 1/4 against bm25's 1/2 and 0, then dense's 1 and 1/3.
        assert!((rows[0]["mrrDelta"].as_f64().unwrap() - 0.375).abs() < 1e-12);
        assert!((rows[1]["mrrDelta"].as_f64().unwrap() + 1.0 / 24.0).abs() < 1e-12);
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

    #[test]
    fn reciprocal_rank_gain_is_the_mrr_difference() {
        let system = [Some(1), None, Some(2), Some(4)];
        let baseline = [Some(2), Some(1), Some(2), None];
        let gain = RankGain::of(&system, &baseline);
        // (1/2 − 1 + 0 + 1/4) / 4
        assert!((gain.mrr_delta + 0.0625).abs() < 1e-12);
        assert!(
            gain.p > 0.5,
            "three mixed differences are chance: {}",
            gain.p
        );
        // The same data gives the same p-value.
        assert_eq!(RankGain::of(&system, &baseline), gain);
        let tied = RankGain::of(&[Some(3), None], &[Some(3), None]);
        assert_eq!((tied.mrr_delta, tied.p), (0.0, 1.0));
    }

    #[test]
    fn randomization_test_agrees_with_every_sign_pattern_enumerated() {
        let deltas = [0.5, -0.25, 1.0, 0.9, 0.0, 0.8, -0.33, 0.1, 1.0, 0.5, 0.75];
        let nonzero: Vec<f64> = deltas.iter().copied().filter(|d| *d != 0.0).collect();
        let observed = nonzero.iter().sum::<f64>().abs();
        let patterns = 1u32 << nonzero.len();
        let as_extreme = (0..patterns)
            .filter(|bits| {
                let sum: f64 = nonzero
                    .iter()
                    .enumerate()
                    .map(|(i, d)| if bits >> i & 1 == 1 { *d } else { -*d })
                    .sum();
                sum.abs() >= observed - 1e-9
            })
            .count();
        let exact = as_extreme as f64 / f64::from(patterns);
        let sampled = randomization_test(&deltas, RANDOMIZATION_SAMPLES, 7);
        assert!((sampled - exact).abs() < 0.003, "{sampled} against {exact}");
        assert!(
            exact < 0.05,
            "the test case should be a clear difference: {exact}"
        );
        // Symmetric in the two systems.
        let negated: Vec<f64> = deltas.iter().map(|d| -d).collect();
        assert_eq!(
            randomization_test(&negated, RANDOMIZATION_SAMPLES, 7),
            sampled
        );
    }

    #[test]
    fn randomization_test_bottoms_out_at_one_in_the_samples_plus_one() {
        // 100 queries all better by a half: no sign flip reaches the observed sum.
        let deltas = vec![0.5; 100];
        let p = randomization_test(&deltas, 1_000, 1);
        assert_eq!(p, 1.0 / 1_001.0);
        assert_eq!(randomization_test(&[0.0, 0.0], 1_000, 1), 1.0);
    }
}
