//! Dot products of a query with stored byte planes (the scan in 16-bit integers, the rows
//! it keeps in `f32`), and of two `f32` vectors.
//!
//! Each sums whole chunks in independent lanes, which compilers turn into SIMD natively;
//! LLVM leaves those loops scalar on wasm32, so the wasm
//! build writes its lanes out with `simd128`, and the x86-64 scan uses AVX2 when the
//! processor has it.

// The SIMD intrinsics are unsafe to call; each use checks the lengths it reads first.
#![allow(unsafe_code)]

/// The dot product of `a` and `b`.
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let whole = a.len().min(b.len()) / 8 * 8;
    chunks_dot(&a[..whole], &b[..whole]) + tail_dot(&a[whole..], &b[whole..], |y| y)
}

/// The exact dot product of the 16-bit `query` with each `query.len()`-long row of the
/// signed bytes `rows`, for a query whose products sum within `i32`: every component at
/// most [`query_units`]`(query.len())` in magnitude.
///
/// Integers rather than floats because a multiply-add of 16-bit pairs handles twice the
/// values per instruction of widening bytes to `f32` (about three times faster on AVX2).
pub(super) fn scan_i8(query: &[i16], rows: &[i8]) -> Vec<i32> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, which is all the function's code needs.
        return unsafe { x86::scan_i8_avx2(query, rows) };
    }
    scan_rows(query, rows, dot_i16_i8)
}

/// The largest query component [`scan_i8`] takes for `dims`-long rows: 32,767 unless
/// `dims` products of it and a byte (at most 128 in magnitude) could overflow `i32`
/// (past 2²⁴ dimensions, far beyond any embedding, not even 1 fits).
pub(super) fn query_units(dims: usize) -> i16 {
    let fits = i32::MAX as usize / (128 * dims.max(1));
    fits.clamp(1, i16::MAX as usize) as i16
}

/// `dot` of `query` with each row of `rows`.
#[inline(always)]
fn scan_rows(query: &[i16], rows: &[i8], dot: impl Fn(&[i16], &[i8]) -> i32) -> Vec<i32> {
    if query.is_empty() {
        return Vec::new();
    }
    // A loop, not an iterator adapter: an adapter's closure would be a function of its own,
    // compiled without the caller's target features (the AVX2 `dot` carries its own).
    let mut out = Vec::with_capacity(rows.len() / query.len());
    for row in rows.chunks_exact(query.len()) {
        out.push(dot(query, row));
    }
    out
}

/// The dot product of `a` and `b` in sixteen independent lanes, which compilers turn into
/// SIMD multiply-adds.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
fn dot_i16_i8(a: &[i16], b: &[i8]) -> i32 {
    let whole = a.len().min(b.len()) / 16 * 16;
    let mut lanes = [0i32; 16];
    for (x, y) in a[..whole].chunks_exact(16).zip(b[..whole].chunks_exact(16)) {
        for i in 0..16 {
            lanes[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    lanes.iter().sum::<i32>() + tail_i16_i8(&a[whole..], &b[whole..])
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m128i, __m256i, _mm256_add_epi32, _mm256_cvtepi8_epi16, _mm256_loadu_si256,
        _mm256_madd_epi16, _mm256_setzero_si256, _mm256_storeu_si256, _mm_loadu_si128,
    };

    /// [`super::scan_i8`] on AVX2.
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn scan_i8_avx2(query: &[i16], rows: &[i8]) -> Vec<i32> {
        // SAFETY: the caller vouches for AVX2.
        super::scan_rows(query, rows, |q, row| unsafe { dot_avx2(q, row) })
    }

    /// The dot product of `a` and `b`: each 16 bytes widen to 16-bit lanes and
    /// multiply-add with 16 query components into eight 32-bit sums. (LLVM's own
    /// vectorization of the portable lane loop runs at a third of this speed.)
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn dot_avx2(a: &[i16], b: &[i8]) -> i32 {
        let whole = a.len().min(b.len()) / 16 * 16;
        let mut acc = _mm256_setzero_si256();
        for at in (0..whole).step_by(16) {
            // `at + 16 <= whole`: both loads stay inside their slices; neither needs
            // alignment.
            let row = _mm256_cvtepi8_epi16(_mm_loadu_si128(b.as_ptr().add(at).cast::<__m128i>()));
            let q = _mm256_loadu_si256(a.as_ptr().add(at).cast::<__m256i>());
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(row, q));
        }
        let mut lanes = [0i32; 8];
        _mm256_storeu_si256(lanes.as_mut_ptr().cast::<__m256i>(), acc);
        lanes.iter().sum::<i32>() + super::tail_i16_i8(&a[whole..], &b[whole..])
    }
}

/// The dot product of the values past the last whole 16-value chunk, one by one.
#[inline(always)]
fn tail_i16_i8(a: &[i16], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

/// The dot product of `a` and the signed bytes `b`.
pub(super) fn dot_i8(a: &[f32], b: &[i8]) -> f32 {
    let whole = a.len().min(b.len()) / 16 * 16;
    chunks_dot_i8(&a[..whole], &b[..whole]) + tail_dot(&a[whole..], &b[whole..], f32::from)
}

/// The dot product of `a` and the unsigned bytes `b`.
pub(super) fn dot_u8(a: &[f32], b: &[u8]) -> f32 {
    let whole = a.len().min(b.len()) / 16 * 16;
    chunks_dot_u8(&a[..whole], &b[..whole]) + tail_dot(&a[whole..], &b[whole..], f32::from)
}

/// The dot product of the values past the last whole chunk, one by one.
#[inline(always)]
fn tail_dot<T: Copy>(a: &[f32], b: &[T], widen: impl Fn(T) -> f32) -> f32 {
    a.iter().zip(b).map(|(x, &y)| x * widen(y)).sum()
}

/// The dot product of whole 8-value chunks in eight independent lanes, `b` widened by
/// `widen`.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
fn lanes_dot<T: Copy>(a: &[f32], b: &[T], widen: impl Fn(T) -> f32) -> f32 {
    let mut lanes = [0.0f32; 8];
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        for i in 0..8 {
            lanes[i] += x[i] * widen(y[i]);
        }
    }
    lanes.iter().sum()
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn chunks_dot(a: &[f32], b: &[f32]) -> f32 {
    lanes_dot(a, b, |y| y)
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
fn chunks_dot_i8(a: &[f32], b: &[i8]) -> f32 {
    lanes_dot(a, b, f32::from)
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn chunks_dot_u8(a: &[f32], b: &[u8]) -> f32 {
    lanes_dot(a, b, f32::from)
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use core::arch::wasm32::{
    f32x4_add, f32x4_convert_i32x4, f32x4_extract_lane, f32x4_mul, f32x4_splat,
    i16x8_extend_high_i8x16, i16x8_extend_low_i8x16, i32x4_add, i32x4_dot_i16x8,
    i32x4_extend_high_i16x8, i32x4_extend_low_i16x8, i32x4_extract_lane, i32x4_splat,
    u16x8_extend_high_u8x16, u16x8_extend_low_u8x16, u32x4_extend_high_u16x8,
    u32x4_extend_low_u16x8, v128, v128_load,
};

/// Four `f32`s from `x` at `at`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn load_f32x4(x: &[f32], at: usize) -> v128 {
    assert!(at + 4 <= x.len());
    // SAFETY: the assertion keeps the 16-byte load inside `x`; wasm loads need no alignment.
    unsafe { v128_load(x.as_ptr().add(at).cast::<v128>()) }
}

/// Sixteen bytes from `y`, which holds at least sixteen.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn load_bytes<T>(y: &[T]) -> v128 {
    assert!(std::mem::size_of_val(y) >= 16);
    // SAFETY: the assertion keeps the 16-byte load inside `y`; wasm loads need no alignment.
    unsafe { v128_load(y.as_ptr().cast::<v128>()) }
}

/// The sum of four accumulators' lanes.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn lanes_sum(acc: [v128; 4]) -> f32 {
    let sum = f32x4_add(f32x4_add(acc[0], acc[1]), f32x4_add(acc[2], acc[3]));
    f32x4_extract_lane::<0>(sum)
        + f32x4_extract_lane::<1>(sum)
        + f32x4_extract_lane::<2>(sum)
        + f32x4_extract_lane::<3>(sum)
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn chunks_dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [f32x4_splat(0.0); 2];
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        for (half, acc) in acc.iter_mut().enumerate() {
            let product = f32x4_mul(load_f32x4(x, 4 * half), load_f32x4(y, 4 * half));
            *acc = f32x4_add(*acc, product);
        }
    }
    lanes_sum([acc[0], acc[1], f32x4_splat(0.0), f32x4_splat(0.0)])
}

/// Four accumulators of 4 lanes.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
type Acc4 = (v128, v128, v128, v128);

/// `acc` plus the products of the 16 floats of `x` and the 16 widened values `wide`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn mul_add16(acc: Acc4, x: &[f32], wide: Acc4) -> Acc4 {
    (
        f32x4_add(acc.0, f32x4_mul(load_f32x4(x, 0), wide.0)),
        f32x4_add(acc.1, f32x4_mul(load_f32x4(x, 4), wide.1)),
        f32x4_add(acc.2, f32x4_mul(load_f32x4(x, 8), wide.2)),
        f32x4_add(acc.3, f32x4_mul(load_f32x4(x, 12), wide.3)),
    )
}

/// Whole 16-byte chunks: each loads as one vector and widens into four 4-lane `f32`
/// vectors by `widen`. Locals, not arrays: an array of vectors lives in linear memory
/// unless the optimizer takes it apart, and the scan then ran slower than on bfloat16.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn bytes_dot<T>(a: &[f32], b: &[T], widen: impl Fn(v128) -> Acc4) -> f32 {
    let zero = f32x4_splat(0.0);
    let mut acc = (zero, zero, zero, zero);
    for (x, y) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
        acc = mul_add16(acc, x, widen(load_bytes(y)));
    }
    lanes_sum([acc.0, acc.1, acc.2, acc.3])
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn chunks_dot_i8(a: &[f32], b: &[i8]) -> f32 {
    bytes_dot(a, b, |y| {
        let (low, high) = (i16x8_extend_low_i8x16(y), i16x8_extend_high_i8x16(y));
        (
            f32x4_convert_i32x4(i32x4_extend_low_i16x8(low)),
            f32x4_convert_i32x4(i32x4_extend_high_i16x8(low)),
            f32x4_convert_i32x4(i32x4_extend_low_i16x8(high)),
            f32x4_convert_i32x4(i32x4_extend_high_i16x8(high)),
        )
    })
}

/// [`dot_i16_i8`] in `simd128`: each 16 bytes widen to two vectors of 16-bit lanes, each
/// multiply-added with 8 query components into four 32-bit sums.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn dot_i16_i8(a: &[i16], b: &[i8]) -> i32 {
    let whole = a.len().min(b.len()) / 16 * 16;
    let (mut low_acc, mut high_acc) = (i32x4_splat(0), i32x4_splat(0));
    for (x, y) in a[..whole].chunks_exact(16).zip(b[..whole].chunks_exact(16)) {
        let bytes = load_bytes(y);
        let (low, high) = (
            i16x8_extend_low_i8x16(bytes),
            i16x8_extend_high_i8x16(bytes),
        );
        low_acc = i32x4_add(low_acc, i32x4_dot_i16x8(low, load_bytes(&x[..8])));
        high_acc = i32x4_add(high_acc, i32x4_dot_i16x8(high, load_bytes(&x[8..])));
    }
    let sum = i32x4_add(low_acc, high_acc);
    i32x4_extract_lane::<0>(sum)
        + i32x4_extract_lane::<1>(sum)
        + i32x4_extract_lane::<2>(sum)
        + i32x4_extract_lane::<3>(sum)
        + tail_i16_i8(&a[whole..], &b[whole..])
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn chunks_dot_u8(a: &[f32], b: &[u8]) -> f32 {
    bytes_dot(a, b, |y| {
        let (low, high) = (u16x8_extend_low_u8x16(y), u16x8_extend_high_u8x16(y));
        (
            f32x4_convert_i32x4(u32x4_extend_low_u16x8(low)),
            f32x4_convert_i32x4(u32x4_extend_high_u16x8(low)),
            f32x4_convert_i32x4(u32x4_extend_low_u16x8(high)),
            f32x4_convert_i32x4(u32x4_extend_high_u16x8(high)),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_dot_products_match_a_plain_sum_at_every_length() {
        for len in [0, 1, 7, 15, 16, 17, 33, 384] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let signed: Vec<i8> = (0..len)
                .map(|i| (i as i32 * 37 % 256 - 128) as i8)
                .collect();
            let unsigned: Vec<u8> = signed.iter().map(|&b| b as u8).collect();
            let plain = |b: &dyn Fn(usize) -> f64| -> f64 {
                (0..len).map(|i| f64::from(a[i]) * b(i)).sum()
            };
            let want_i8 = plain(&|i| f64::from(signed[i]));
            let want_u8 = plain(&|i| f64::from(unsigned[i]));
            assert!(
                (f64::from(dot_i8(&a, &signed)) - want_i8).abs() < 1e-3,
                "{len}"
            );
            let query: Vec<i16> = (0..len)
                .map(|i| (i as i32 * 911 % 60_000 - 30_000) as i16)
                .collect();
            let want_scan: i64 = (0..len)
                .map(|i| i64::from(query[i]) * i64::from(signed[i]))
                .sum();
            let scanned = scan_i8(&query, &[signed.clone(), signed.clone()].concat());
            assert_eq!(scanned.len(), usize::from(len > 0) * 2);
            assert!(scanned.iter().all(|&s| i64::from(s) == want_scan), "{len}");
            // The portable lanes, which the AVX2 build does not reach through `scan_i8`.
            let portable = scan_rows(&query, &signed, dot_i16_i8);
            assert!(portable.iter().all(|&s| i64::from(s) == want_scan), "{len}");
            assert!(
                (f64::from(dot_u8(&a, &unsigned)) - want_u8).abs() < 1e-3,
                "{len}"
            );
            let want = plain(&|i| f64::from(a[i]));
            assert!((f64::from(dot(&a, &a)) - want).abs() < 1e-4, "{len}");
        }
    }

    #[test]
    fn the_scan_agrees_with_plain_sums_for_every_row_count() {
        for dims in [1, 15, 16, 17, 48, 384] {
            let query: Vec<i16> = (0..dims)
                .map(|i| (i as i32 * 7_919 % 60_000 - 30_000) as i16)
                .collect();
            for count in 0..=9 {
                let rows: Vec<i8> = (0..count * dims)
                    .map(|i| (i as i32 * 131 % 255 - 127) as i8)
                    .collect();
                let want: Vec<i64> = rows
                    .chunks_exact(dims)
                    .map(|row| {
                        row.iter()
                            .zip(&query)
                            .map(|(&b, &q)| i64::from(b) * i64::from(q))
                            .sum()
                    })
                    .collect();
                let got: Vec<i64> = scan_i8(&query, &rows).into_iter().map(i64::from).collect();
                assert_eq!(got, want, "{dims} dims, {count} rows");
                let portable: Vec<i64> = scan_rows(&query, &rows, dot_i16_i8)
                    .into_iter()
                    .map(i64::from)
                    .collect();
                assert_eq!(portable, want, "{dims} dims, {count} rows");
            }
        }
    }

    #[test]
    fn the_integer_scan_holds_the_largest_sums_exactly() {
        for dims in [1, 16, 384, 1536, 4099] {
            let units = query_units(dims);
            let rows = [vec![-128i8; dims], vec![127; dims]].concat();
            for sign in [-1, 1] {
                let query = vec![sign * units; dims];
                let most = i64::from(units) * dims as i64;
                for got in [scan_i8(&query, &rows), scan_rows(&query, &rows, dot_i16_i8)] {
                    assert_eq!(i64::from(got[0]), -128 * i64::from(sign) * most, "{dims}");
                    assert_eq!(i64::from(got[1]), 127 * i64::from(sign) * most, "{dims}");
                }
            }
        }
        assert_eq!(query_units(384), i16::MAX);
        assert!(query_units(1536) < i16::MAX);
    }
}
