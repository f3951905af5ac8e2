//! Vectors kept in memory for the dense path.
//!
//! Scanning every stored vector in SQL costs about 2 µs per vector (each row's blob is read
//! and decoded before `vector_distance_cos` runs), 20 ms at 10,000 memories. A long-lived
//! host can instead keep the vectors in one contiguous matrix of unit vectors, where a scan is
//! a dot product per row, and pass the best ids into the candidate statement, which re-scores
//! them exactly and applies the query's filters. [`VectorSet`] is that matrix; keeping it in
//! step with the database (a change log read in the same statement) is the engine's job.
//!
//! Each row is stored in 16-bit fixed point with its own scale (its largest component is
//! ±32,767 units), split into two planes: the high bytes of every row, then the low bytes.
//! A scan reads the high plane only, a quarter of the bytes of `f32` rows, in integer
//! multiply-adds against the query rounded to 16-bit fixed point. The bytes left unread move
//! a similarity by at most 128 units per component, and the query's rounding by a known
//! drift, so only the rows whose bound reaches the best `k` can be among them, and those few
//! read both planes against the `f32` query for the full 16-bit similarity. A set larger than the caches is read from memory
//! at its bandwidth, so the bytes a scan touches are its time (100K × 384: 11 ms for
//! bfloat16 rows on a machine where 30K took 1.1 ms). A reported similarity lies within
//! [`VectorSet::similarity_error`] of the exact cosine, which is what a caller needs to know
//! the pick's exact top.

mod dot;

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};

use dot::{dot, dot_i8, dot_u8, query_units, scan_i8};

/// Units of a row's largest component (16-bit fixed point, symmetric).
const FULL_SCALE: f32 = 32_767.0;

/// How far a similarity computed in `f32` may lie from the same sum computed exactly, per
/// unit of Σ|qᵢ·xᵢ| (at most √dims for unit vectors with 16-bit components of at most
/// 32,767 units times their scale): the classic bound of (n + 1)·2⁻²⁴ for a sum of n
/// products, with room for the scale's own rounding.
fn float_error(dims: usize) -> f32 {
    (dims as f32 + 16.0) * f32::EPSILON / 2.0
}

/// Unit vectors of one model by memory id, with the change-log position they reflect.
#[derive(Debug, Clone, Default)]
pub struct VectorSet {
    dims: usize,
    ids: Vec<String>,
    rows: HashMap<String, usize>,
    /// The high byte of each 16-bit component, `dims` per row.
    high: Vec<i8>,
    /// The low byte of each 16-bit component, `dims` per row.
    low: Vec<u8>,
    /// Per row, what one unit of its components stands for.
    scales: Vec<f32>,
    seq: i64,
}

/// Why a vector was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("vector of {got} dimensions in a set of {want}")]
pub struct DimensionMismatch {
    /// The set's vector length.
    pub want: usize,
    /// The offered vector's length.
    pub got: usize,
}

impl VectorSet {
    /// An empty set of `dims`-long vectors at change-log position 0.
    pub fn new(dims: usize) -> Self {
        VectorSet {
            dims,
            ..VectorSet::default()
        }
    }

    /// The vector length.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// How many vectors the set holds.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the set holds no vector.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The change-log position the set reflects: every change up to it is applied.
    pub fn seq(&self) -> i64 {
        self.seq
    }

    /// Records that every change up to `seq` is applied (positions never go back).
    pub fn advance_to(&mut self, seq: i64) {
        self.seq = self.seq.max(seq);
    }

    /// Whether the set holds `id`.
    pub fn contains(&self, id: &str) -> bool {
        self.rows.contains_key(id)
    }

    /// How far a similarity [`VectorSet::nearest`] reports may lie from the exact cosine of
    /// the stored and query vectors. A unit vector's components are rounded to half a unit
    /// of at most 1/32,767, so the dot product with a unit query moves by at most
    /// Σ|qᵢ| / 65,534 ≤ √dims / 65,534 (Cauchy–Schwarz); the `f32` sums add at most
    /// (dims + 16) · 2⁻²⁴ per unit of Σ|qᵢ·xᵢ| ≤ √dims. At 384 dimensions: 7.7 · 10⁻⁴.
    pub fn similarity_error(&self) -> f32 {
        (self.dims as f32).sqrt() / (2.0 * FULL_SCALE) + self.sum_error()
    }

    /// The bound on the `f32` rounding of one similarity: [`float_error`] per unit of
    /// Σ|qᵢ·xᵢ|, which is at most √dims.
    fn sum_error(&self) -> f32 {
        float_error(self.dims) * (self.dims as f32).sqrt()
    }

    /// Adds or replaces the vector of `id`, stored at unit length (a zero vector stays zero
    /// and is then similar to nothing, as `vector_distance_cos` has it).
    pub fn upsert(&mut self, id: &str, vector: &[f32]) -> Result<(), DimensionMismatch> {
        if vector.len() != self.dims {
            return Err(DimensionMismatch {
                want: self.dims,
                got: vector.len(),
            });
        }
        let (scale, fixed) = fixed_point(&unit(vector), FULL_SCALE);
        let high = fixed.iter().map(|&v| (v >> 8) as i8);
        let low = fixed.iter().map(|&v| (v & 0xff) as u8);
        match self.rows.get(id) {
            Some(&row) => {
                let span = row * self.dims..(row + 1) * self.dims;
                self.high[span.clone()]
                    .iter_mut()
                    .zip(high)
                    .for_each(|(slot, v)| *slot = v);
                self.low[span]
                    .iter_mut()
                    .zip(low)
                    .for_each(|(slot, v)| *slot = v);
                self.scales[row] = scale;
            }
            None => {
                self.rows.insert(id.to_owned(), self.ids.len());
                self.ids.push(id.to_owned());
                self.high.extend(high);
                self.low.extend(low);
                self.scales.push(scale);
            }
        }
        Ok(())
    }

    /// Removes the vector of `id`; returns whether there was one.
    pub fn remove(&mut self, id: &str) -> bool {
        let Some(row) = self.rows.remove(id) else {
            return false;
        };
        let last = self.ids.len() - 1;
        if row != last {
            self.ids.swap(row, last);
            let (from, to) = (last * self.dims, row * self.dims);
            self.high.copy_within(from..from + self.dims, to);
            self.low.copy_within(from..from + self.dims, to);
            self.scales[row] = self.scales[last];
            self.rows.insert(self.ids[row].clone(), row);
        }
        self.ids.pop();
        self.high.truncate(last * self.dims);
        self.low.truncate(last * self.dims);
        self.scales.pop();
        true
    }

    /// The `k` most cosine-similar vectors to `query`, best first (ties by id), with their
    /// similarity, each within [`VectorSet::similarity_error`] of the exact one (so the exact
    /// top `k` may differ from this one among vectors that close together). A query of the
    /// wrong length or of zero length finds nothing.
    pub fn nearest(&self, query: &[f32], k: usize) -> Vec<(&str, f32)> {
        if query.len() != self.dims || self.dims == 0 || k == 0 {
            return Vec::new();
        }
        let query = unit(query);
        let sum: f32 = query.iter().sum();
        let l1: f32 = query.iter().map(|q| q.abs()).sum();
        let slack = self.sum_error();
        let largest_scale = self.scales.iter().fold(0.0f32, |m, &s| m.max(s));
        // The coarse pass: per row, Σ qᵢ·highᵢ with the query in 16-bit fixed point, then
        // the estimate that takes every low byte at its middle (128). Rounding the query
        // moves each qᵢ by at most one unit `qs` (a half, and the division's rounding), so
        // the sum by at most qs·Σ|highᵢ|; a row's |highᵢ| is at most |vᵢ|/256 + 1, with
        // Σ|vᵢ| ≤ (√dims + dims·scale/2)/scale for a unit vector, which makes `drift`.
        let (qs, fixed_query) = fixed_point(&query, f32::from(query_units(self.dims)));
        let dims = self.dims as f32;
        let drift = qs * (dims.sqrt() + 512.0 * dims * largest_scale) + slack;
        let estimates: Vec<f32> = scan_i8(&fixed_query, &self.high)
            .into_iter()
            .zip(&self.scales)
            .map(|(c, scale)| scale * (256.0 * qs * c as f32 + 128.0 * sum))
            .collect();
        // The full similarity lies within 128 units per |qᵢ| of the exact estimate (`reach`
        // for the row with the largest units), which lies within `drift` of the coarse one.
        // k rows score at least the k-th best coarse estimate less both, so a row whose
        // estimate falls more than twice both below it is not among the best k.
        let reach = largest_scale * 128.0 * l1 + slack + drift;
        let threshold =
            kth_largest(&estimates, k).map_or(f32::NEG_INFINITY, |kth| kth - 2.0 * reach);
        // The rows left read both planes with the query in `f32`.
        let mut scored: Vec<(f32, u32)> = estimates
            .iter()
            .enumerate()
            .filter(|(_, &estimate)| estimate >= threshold)
            .map(|(row, _)| {
                let span = row * self.dims..(row + 1) * self.dims;
                let scale = self.scales[row];
                let estimate =
                    scale * (256.0 * dot_i8(&query, &self.high[span.clone()]) + 128.0 * sum);
                let full = estimate + scale * (dot_u8(&query, &self.low[span]) - 128.0 * sum);
                (full, row as u32)
            })
            .collect();
        let order = |a: &(f32, u32), b: &(f32, u32)| -> Ordering {
            b.0.total_cmp(&a.0)
                .then_with(|| self.ids[a.1 as usize].cmp(&self.ids[b.1 as usize]))
        };
        if scored.len() > k {
            scored.select_nth_unstable_by(k - 1, order);
            scored.truncate(k);
        }
        scored.sort_unstable_by(order);
        scored
            .into_iter()
            .map(|(score, row)| (self.ids[row as usize].as_str(), score))
            .collect()
    }
}

/// The cosine similarity of `query` and `vector` in `f32`, as [`VectorSet::nearest`] would
/// compute it from unrounded vectors (0 when either is zero or their lengths differ).
pub fn similarity(query: &[f32], vector: &[f32]) -> f32 {
    if query.len() != vector.len() {
        return 0.0;
    }
    dot(&unit(query), &unit(vector))
}

/// The `k`-th largest of `values` by [`f32::total_cmp`], or `None` when there are no more
/// than `k` (every value is then among the largest `k`). One pass with the largest `k` so
/// far in a heap: most values lose to its smallest and cost one integer comparison, where
/// selecting in a copy of all the values moves each several times.
fn kth_largest(values: &[f32], k: usize) -> Option<f32> {
    if k == 0 || values.len() <= k {
        return None;
    }
    let mut largest: BinaryHeap<Reverse<i32>> = values[..k]
        .iter()
        .map(|&value| Reverse(total_order(value)))
        .collect();
    let mut smallest = largest.peek()?.0;
    for &value in &values[k..] {
        let key = total_order(value);
        if key > smallest {
            if let Some(mut top) = largest.peek_mut() {
                *top = Reverse(key);
            }
            smallest = largest.peek()?.0;
        }
    }
    Some(from_total_order(smallest))
}

/// `value` as an integer that orders as [`f32::total_cmp`] orders the values.
fn total_order(value: f32) -> i32 {
    flip_if_negative(value.to_bits() as i32)
}

/// The value whose [`total_order`] is `key`.
fn from_total_order(key: i32) -> f32 {
    f32::from_bits(flip_if_negative(key) as u32)
}

/// The bits with the magnitude flipped when the sign bit is set (which it leaves alone, so
/// flipping twice is the identity): larger negative magnitudes then compare smaller.
fn flip_if_negative(bits: i32) -> i32 {
    bits ^ (((bits >> 31) as u32) >> 1) as i32
}

fn unit(vector: &[f32]) -> Vec<f32> {
    let norm = dot(vector, vector).sqrt();
    if norm > 0.0 && norm.is_finite() {
        vector.iter().map(|x| x / norm).collect()
    } else {
        vec![0.0; vector.len()]
    }
}

/// `values` in 16-bit fixed point with `units` units for the largest magnitude: the value
/// of one unit, and each component rounded to the nearest unit. A zero vector has unit 0.
/// Rows use [`FULL_SCALE`]; a query uses what [`scan_i8`] can sum ([`query_units`]).
fn fixed_point(values: &[f32], units: f32) -> (f32, Vec<i16>) {
    let largest = values.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 {
        return (0.0, vec![0; values.len()]);
    }
    let scale = largest / units;
    let fixed = values
        .iter()
        .map(|x| (x / scale).round().clamp(-units, units) as i16)
        .collect();
    (scale, fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random floats in [-0.5, 0.5) (a linear congruential sequence).
    fn uniform(mut state: u64) -> impl FnMut() -> f32 {
        move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            ((state >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        }
    }

    fn brute_force<'a>(vectors: &'a [(&'a str, Vec<f32>)], q: &[f32]) -> Vec<&'a str> {
        let mut scored: Vec<(f64, &str)> = vectors
            .iter()
            .map(|(id, v)| {
                let d = engram_core::vector::cosine_distance(q, v).unwrap();
                (1.0 - d, *id)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored.into_iter().map(|(_, id)| id).collect()
    }

    #[test]
    fn nearest_holds_the_exact_top_within_the_bound() {
        // 19 dims exercises the SIMD lanes and the tail.
        let ids: Vec<String> = (0..200).map(|i| format!("m{i:03}")).collect();
        let vectors: Vec<(&str, Vec<f32>)> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                // A linear congruential sequence: no two vectors are parallel.
                let mut state = 0x9e37_79b9_u64.wrapping_mul(i as u64 + 1);
                let v = (0..19)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1);
                        ((state >> 40) as f32 / (1u64 << 24) as f32) - 0.5
                    })
                    .collect();
                (id.as_str(), v)
            })
            .collect();
        let mut set = VectorSet::new(19);
        for (id, v) in &vectors {
            set.upsert(id, v).unwrap();
        }
        let query: Vec<f32> = (0..19).map(|d| (d as f32 * 0.7).sin()).collect();
        let exact = |id: &str| {
            let v = &vectors.iter().find(|(i, _)| *i == id).unwrap().1;
            1.0 - engram_core::vector::cosine_distance(&query, v).unwrap()
        };
        let got = set.nearest(&query, 10);
        let order = brute_force(&vectors, &query);
        // Each similarity is within the bound of the exact one, so the pick holds every
        // vector that beats the exact 10th by twice the bound, and nothing below the exact
        // 10th by more than that.
        let tenth = exact(order[9]);
        let bound = f64::from(set.similarity_error());
        for (id, similarity) in &got {
            let e = exact(id);
            assert!((f64::from(*similarity) - e).abs() <= bound);
            assert!(e >= tenth - 2.0 * bound, "{id}");
        }
        for id in order.iter().filter(|id| exact(id) > tenth + 2.0 * bound) {
            assert!(got.iter().any(|(g, _)| g == id), "{id} missing");
        }
        assert_eq!(set.nearest(&query, 500).len(), 200);
    }

    #[test]
    fn similarities_stay_within_the_bound_even_for_the_vector_itself() {
        // A vector against itself makes every term's rounding error point the same way:
        // the worst case the bound is derived for.
        let dims = 384;
        let mut next = uniform(7_u64);
        let mut worst = 0.0f32;
        for _ in 0..200 {
            let v: Vec<f32> = (0..dims).map(|_| next()).collect();
            let w: Vec<f32> = (0..dims).map(|_| next()).collect();
            let mut set = VectorSet::new(dims);
            set.upsert("v", &v).unwrap();
            for q in [&v, &w] {
                let got = set.nearest(q, 1)[0].1;
                let error = (got - similarity(q, &v)).abs();
                assert!(error <= set.similarity_error(), "{error}");
                worst = worst.max(error);
            }
        }
        // Rounding does move similarities.
        assert!(worst > 0.0, "{worst}");
    }

    #[test]
    fn kth_largest_agrees_with_sorting() {
        let mut next = uniform(11);
        // Values drawn from a few levels, so that ties are common, with signed zeros.
        let values: Vec<f32> = (0..500)
            .map(|i| match i % 7 {
                0 => 0.0,
                1 => -0.0,
                _ => (next() * 8.0).floor() - 4.0,
            })
            .collect();
        let mut sorted = values.clone();
        sorted.sort_by(|a, b| b.total_cmp(a));
        for k in [1, 2, 7, 60, 499] {
            let kth = kth_largest(&values, k).expect("more values than k");
            assert_eq!(kth.to_bits(), sorted[k - 1].to_bits(), "k = {k}");
        }
        assert_eq!(kth_largest(&values, 500), None);
        assert_eq!(kth_largest(&values, 0), None);
        assert_eq!(kth_largest(&[], 3), None);
    }

    #[test]
    fn fixed_point_keeps_the_largest_component_at_full_scale() {
        let (scale, fixed) = fixed_point(&[0.6, -0.8, 0.0, 0.3], FULL_SCALE);
        assert_eq!(fixed[1], -32_767);
        assert!((scale - 0.8 / FULL_SCALE).abs() < 1e-12);
        for (x, v) in [0.6f32, -0.8, 0.0, 0.3].iter().zip(&fixed) {
            assert!((f32::from(*v) * scale - x).abs() <= scale / 2.0);
        }
        assert_eq!(fixed_point(&[0.0, 0.0], FULL_SCALE), (0.0, vec![0, 0]));
        // The planes put a negative component back together: −1 is high −1, low 255.
        let mut set = VectorSet::new(2);
        set.upsert("a", &[-1.0, 1e-6]).unwrap();
        assert_eq!((set.high[0], set.low[0]), (-128, 1));
        assert_eq!(set.nearest(&[-1.0, 0.0], 1)[0].1, 1.0);
    }

    #[test]
    fn the_pruned_scan_keeps_every_row_of_the_full_top() {
        // Near-duplicates within a few units of each other, among spread vectors: the rows
        // the coarse bound keeps must include every row of the top k by full similarity.
        let dims = 40;
        let mut set = VectorSet::new(dims);
        let mut next = uniform(11_u64);
        let base: Vec<f32> = (0..dims).map(|_| next()).collect();
        for i in 0..300 {
            let v: Vec<f32> = if i % 3 == 0 {
                base.iter().map(|x| x + next() * 1e-4).collect()
            } else {
                (0..dims).map(|_| next()).collect()
            };
            set.upsert(&format!("m{i:03}"), &v).unwrap();
        }
        for query in [base.clone(), (0..dims).map(|_| next()).collect()] {
            let everything = set.nearest(&query, set.len());
            for k in [1, 5, 30, 99, 150] {
                assert_eq!(set.nearest(&query, k), everything[..k], "k {k}");
            }
        }
    }

    #[test]
    fn upsert_replaces_and_remove_keeps_the_rest_findable() {
        let mut set = VectorSet::new(2);
        set.upsert("a", &[1.0, 0.0]).unwrap();
        set.upsert("b", &[0.0, 1.0]).unwrap();
        set.upsert("c", &[1.0, 1.0]).unwrap();
        assert_eq!(set.nearest(&[1.0, 0.0], 1)[0].0, "a");
        set.upsert("a", &[-1.0, 0.0]).unwrap();
        assert_eq!(set.len(), 3);
        assert_eq!(set.nearest(&[1.0, 0.0], 1)[0].0, "c");
        assert!(set.remove("a"));
        assert!(!set.remove("a"));
        let order: Vec<&str> = set.nearest(&[0.0, 1.0], 5).iter().map(|h| h.0).collect();
        assert_eq!(order, ["b", "c"]);
        assert!(set.remove("c"));
        assert!(set.remove("b"));
        assert!(set.is_empty() && set.nearest(&[0.0, 1.0], 5).is_empty());
    }

    #[test]
    fn bad_lengths_and_zero_vectors_find_nothing_wrongly() {
        let mut set = VectorSet::new(2);
        assert_eq!(
            set.upsert("a", &[1.0]),
            Err(DimensionMismatch { want: 2, got: 1 })
        );
        set.upsert("z", &[0.0, 0.0]).unwrap();
        set.upsert("y", &[0.0, 2.0]).unwrap();
        assert!(set.nearest(&[1.0], 3).is_empty());
        let hits = set.nearest(&[0.0, 1.0], 3);
        assert_eq!(hits[0], ("y", 1.0));
        assert_eq!(hits[1], ("z", 0.0));
        assert_eq!(similarity(&[0.0, 1.0], &[0.0, 3.0]), 1.0);
        assert_eq!(similarity(&[0.0, 1.0], &[0.0]), 0.0);
        set.advance_to(5);
        set.advance_to(3);
        assert_eq!(set.seq(), 5);
    }
}
