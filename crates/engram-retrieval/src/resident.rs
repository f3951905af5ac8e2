//! Vectors kept in memory for the dense path.
//!
//! Scanning every stored vector in SQL costs about 2 µs per vector (each row's blob is read
//! and decoded before `vector_distance_cos` runs), 20 ms at 10,000 memories. A long-lived
//! host can instead keep the vectors in one contiguous matrix of unit vectors, where a scan is
//! a dot product per row, and pass the best ids into the candidate statement, which re-scores
//! them exactly and applies the query's filters. [`VectorSet`] is that matrix; keeping it in
//! step with the database (a change log read in the same statement) is the engine's job.
//!
//! The matrix holds bfloat16 (the top half of an `f32`, rounded): a set takes half the
//! memory, which matters in a browser tab, and a scan of a set larger than the caches
//! reads half the bytes (100K × 384: 2.8 ms instead of 4.4 natively; at 10K, where the set
//! fits, about the same). Widening is a shift, so the scan stays SIMD. A similarity it reports
//! lies within [`SIMILARITY_ERROR`] of the exact cosine, which is what a caller needs to
//! know the pick's exact top.

use std::cmp::Ordering;
use std::collections::HashMap;

/// How far a similarity [`VectorSet::nearest`] reports may lie from the exact cosine of the
/// stored and query vectors. Rounding a unit vector's components to bfloat16 (8 significant
/// bits) moves each by at most 2⁻⁸ of itself, so the dot product moves by at most
/// 2⁻⁸ · Σ|qᵢ·xᵢ| ≤ 2⁻⁸ (Cauchy–Schwarz on unit vectors); 10⁻⁴ more covers the rounding of
/// two `f32` computations of a cosine (about 2⁻²⁴ per term at 384 dimensions).
pub const SIMILARITY_ERROR: f32 = 1.0 / 256.0 + 1e-4;

/// Unit vectors of one model by memory id, with the change-log position they reflect.
#[derive(Debug, Clone, Default)]
pub struct VectorSet {
    dims: usize,
    ids: Vec<String>,
    rows: HashMap<String, usize>,
    /// bfloat16 bits, `dims` per row.
    matrix: Vec<u16>,
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

    /// Adds or replaces the vector of `id`, stored at unit length (a zero vector stays zero
    /// and is then similar to nothing, as `vector_distance_cos` has it).
    pub fn upsert(&mut self, id: &str, vector: &[f32]) -> Result<(), DimensionMismatch> {
        if vector.len() != self.dims {
            return Err(DimensionMismatch {
                want: self.dims,
                got: vector.len(),
            });
        }
        let unit: Vec<u16> = unit(vector).into_iter().map(to_bf16).collect();
        match self.rows.get(id) {
            Some(&row) => {
                self.matrix[row * self.dims..(row + 1) * self.dims].copy_from_slice(&unit);
            }
            None => {
                self.rows.insert(id.to_owned(), self.ids.len());
                self.ids.push(id.to_owned());
                self.matrix.extend_from_slice(&unit);
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
            let (head, tail) = self.matrix.split_at_mut(last * self.dims);
            head[row * self.dims..(row + 1) * self.dims].copy_from_slice(&tail[..self.dims]);
            self.rows.insert(self.ids[row].clone(), row);
        }
        self.ids.pop();
        self.matrix.truncate(last * self.dims);
        true
    }

    /// The `k` most cosine-similar vectors to `query`, best first (ties by id), with their
    /// similarity, each within [`SIMILARITY_ERROR`] of the exact one (so the exact top `k`
    /// may differ from this one among vectors that close together). A query of the wrong length or
    /// of zero length finds nothing.
    pub fn nearest(&self, query: &[f32], k: usize) -> Vec<(&str, f32)> {
        if query.len() != self.dims || self.dims == 0 || k == 0 {
            return Vec::new();
        }
        let query = unit(query);
        let mut scored: Vec<(f32, u32)> = self
            .matrix
            .chunks_exact(self.dims)
            .enumerate()
            .map(|(row, vector)| (dot_bf16(&query, vector), row as u32))
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

fn unit(vector: &[f32]) -> Vec<f32> {
    let norm = dot(vector, vector).sqrt();
    if norm > 0.0 && norm.is_finite() {
        vector.iter().map(|x| x / norm).collect()
    } else {
        vec![0.0; vector.len()]
    }
}

/// `value` rounded to the nearest bfloat16 (ties to even), as its bits. Only finite values
/// of at most 1 in magnitude are stored, so rounding never overflows.
fn to_bf16(value: f32) -> u16 {
    let bits = value.to_bits();
    let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1));
    (rounded >> 16) as u16
}

/// The `f32` a bfloat16 stands for.
fn from_bf16(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// The dot product of `a` and a stored row.
fn dot_bf16(a: &[f32], b: &[u16]) -> f32 {
    dot_by(a, b, from_bf16, chunks_dot_bf16)
}

/// A dot product of `a` and `b` widened to `f32` by `widen`: whole 8-value chunks through
/// `chunks`, the rest one by one.
fn dot_by<T: Copy>(
    a: &[f32],
    b: &[T],
    widen: impl Fn(T) -> f32,
    chunks: impl Fn(&[f32], &[T]) -> f32,
) -> f32 {
    let whole = a.len().min(b.len()) / 8 * 8;
    let tail: f32 = a[whole..]
        .iter()
        .zip(&b[whole..])
        .map(|(x, &y)| x * widen(y))
        .sum();
    chunks(&a[..whole], &b[..whole]) + tail
}

/// The dot product of whole 8-value chunks in eight independent lanes, `b` widened by
/// `widen`, which compilers turn into SIMD adds.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn lanes_dot<T: Copy>(a: &[f32], b: &[T], widen: impl Fn(T) -> f32) -> f32 {
    let mut lanes = [0.0f32; 8];
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        for i in 0..8 {
            lanes[i] += x[i] * widen(y[i]);
        }
    }
    lanes.iter().sum()
}

/// [`chunks_dot`] against bfloat16 values, widened in the loop.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn chunks_dot_bf16(a: &[f32], b: &[u16]) -> f32 {
    lanes_dot(a, b, from_bf16)
}

/// The same in wasm SIMD: eight bfloat16 values load as one vector and widen into two
/// 4-lane `f32` vectors by zero-extending and shifting.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn chunks_dot_bf16(a: &[f32], b: &[u16]) -> f32 {
    use core::arch::wasm32::{
        f32x4_add, f32x4_extract_lane, f32x4_mul, f32x4_splat, i32x4_shl, u32x4_extend_high_u16x8,
        u32x4_extend_low_u16x8, v128, v128_load,
    };
    let (mut low, mut high) = (f32x4_splat(0.0), f32x4_splat(0.0));
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        // SAFETY: each `x` chunk holds 8 `f32`s (32 bytes), read as two 16-byte loads at
        // its start and 4 floats in; each `y` chunk holds 8 `u16`s, exactly one 16-byte
        // load. All stay inside their chunks; wasm loads need no alignment.
        let (xl, xh, y) = unsafe {
            (
                v128_load(x.as_ptr().cast::<v128>()),
                v128_load(x.as_ptr().add(4).cast::<v128>()),
                v128_load(y.as_ptr().cast::<v128>()),
            )
        };
        let yl = i32x4_shl(u32x4_extend_low_u16x8(y), 16);
        let yh = i32x4_shl(u32x4_extend_high_u16x8(y), 16);
        low = f32x4_add(low, f32x4_mul(xl, yl));
        high = f32x4_add(high, f32x4_mul(xh, yh));
    }
    let sum = f32x4_add(low, high);
    f32x4_extract_lane::<0>(sum)
        + f32x4_extract_lane::<1>(sum)
        + f32x4_extract_lane::<2>(sum)
        + f32x4_extract_lane::<3>(sum)
}

/// A dot product: whole 8-float chunks through [`chunks_dot`], the rest one by one.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    dot_by(a, b, |y| y, chunks_dot)
}

/// The dot product of whole 8-float chunks in eight independent lanes.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn chunks_dot(a: &[f32], b: &[f32]) -> f32 {
    lanes_dot(a, b, |y| y)
}

/// The same in wasm SIMD: LLVM leaves the portable loop scalar on wasm32 (measured 8×
/// slower than native), so the two 4-lane accumulators are written out.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn chunks_dot(a: &[f32], b: &[f32]) -> f32 {
    use core::arch::wasm32::{
        f32x4_add, f32x4_extract_lane, f32x4_mul, f32x4_splat, v128, v128_load,
    };
    let (mut low, mut high) = (f32x4_splat(0.0), f32x4_splat(0.0));
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        // SAFETY: each chunk holds 8 `f32`s (32 bytes), so both 16-byte loads, at the
        // chunk's start and 4 floats in, stay inside it; wasm loads need no alignment.
        let (xl, yl, xh, yh) = unsafe {
            (
                v128_load(x.as_ptr().cast::<v128>()),
                v128_load(y.as_ptr().cast::<v128>()),
                v128_load(x.as_ptr().add(4).cast::<v128>()),
                v128_load(y.as_ptr().add(4).cast::<v128>()),
            )
        };
        low = f32x4_add(low, f32x4_mul(xl, yl));
        high = f32x4_add(high, f32x4_mul(xh, yh));
    }
    let sum = f32x4_add(low, high);
    f32x4_extract_lane::<0>(sum)
        + f32x4_extract_lane::<1>(sum)
        + f32x4_extract_lane::<2>(sum)
        + f32x4_extract_lane::<3>(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        for (id, similarity) in &got {
            let e = exact(id);
            assert!((f64::from(*similarity) - e).abs() <= f64::from(SIMILARITY_ERROR));
            assert!(e >= tenth - 2.0 * f64::from(SIMILARITY_ERROR), "{id}");
        }
        for id in order
            .iter()
            .filter(|id| exact(id) > tenth + 2.0 * f64::from(SIMILARITY_ERROR))
        {
            assert!(got.iter().any(|(g, _)| g == id), "{id} missing");
        }
        assert_eq!(set.nearest(&query, 500).len(), 200);
    }

    #[test]
    fn similarities_stay_within_the_bound_even_for_the_vector_itself() {
        // A vector against itself makes every term's rounding error point the same way:
        // the worst case the bound is derived for.
        let dims = 384;
        let mut state = 7_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            ((state >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        };
        let mut worst = 0.0f32;
        for _ in 0..200 {
            let v: Vec<f32> = (0..dims).map(|_| next()).collect();
            let w: Vec<f32> = (0..dims).map(|_| next()).collect();
            let mut set = VectorSet::new(dims);
            set.upsert("v", &v).unwrap();
            for q in [&v, &w] {
                let got = set.nearest(q, 1)[0].1;
                let error = (got - similarity(q, &v)).abs();
                assert!(error <= SIMILARITY_ERROR, "{error}");
                worst = worst.max(error);
            }
        }
        // Rounding does move similarities: the bound is not vacuous.
        assert!(worst > 1e-4, "{worst}");
    }

    #[test]
    fn bfloat16_rounds_to_nearest_even() {
        for exact in [0.0f32, 1.0, -1.0, 0.5, 0.0625] {
            assert_eq!(from_bf16(to_bf16(exact)), exact);
        }
        // 1 + 2⁻⁸ lies halfway between 1 and 1 + 2⁻⁷: ties go to the even one, 1.
        assert_eq!(from_bf16(to_bf16(1.0 + 1.0 / 256.0)), 1.0);
        assert_eq!(from_bf16(to_bf16(1.0 + 3.0 / 512.0)), 1.0 + 1.0 / 128.0);
        let x = 0.123_456_f32;
        assert!((from_bf16(to_bf16(x)) - x).abs() <= x / 256.0);
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
