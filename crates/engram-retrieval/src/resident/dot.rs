//! Dot products of an `f32` query with stored byte planes, and of two `f32` vectors.
//!
//! Each sums whole 8-value chunks in eight independent lanes, which compilers turn into
//! SIMD adds natively; LLVM leaves those loops scalar on wasm32 (measured 8× slower than
//! native), so the wasm build writes its lanes out with `simd128`.

/// The dot product of `a` and `b`.
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let whole = a.len().min(b.len()) / 8 * 8;
    chunks_dot(&a[..whole], &b[..whole]) + tail_dot(&a[whole..], &b[whole..], |y| y)
}

/// The dot product of `a` with each `a.len()`-long row of the signed bytes `rows`.
pub(super) fn scan_i8(a: &[f32], rows: &[i8]) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, which is all the function's code needs.
        return unsafe { x86::scan_i8_avx2(a, rows) };
    }
    scan_i8_portable(a, rows)
}

/// [`scan_i8`] in the instructions the build targets. Widening bytes to `f32` takes
/// several SSE2 instructions per lane where SSE4.1 and AVX2 have one, so the baseline
/// x86-64 build scanned at half the speed of one made for the machine (10K × 384: 0.71 ms
/// against 0.33 ms).
#[inline(always)]
fn scan_i8_portable(a: &[f32], rows: &[i8]) -> Vec<f32> {
    if a.is_empty() {
        return Vec::new();
    }
    // A loop, not an iterator adapter: a closure would be a function of its own, compiled
    // without the caller's target features.
    let mut out = Vec::with_capacity(rows.len() / a.len());
    for row in rows.chunks_exact(a.len()) {
        out.push(dot_i8(a, row));
    }
    out
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    /// [`super::scan_i8_portable`] compiled for AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn scan_i8_avx2(a: &[f32], rows: &[i8]) -> Vec<f32> {
        super::scan_i8_portable(a, rows)
    }
}

/// The dot product of `a` and the signed bytes `b`.
#[inline(always)]
fn dot_i8(a: &[f32], b: &[i8]) -> f32 {
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
    i16x8_extend_high_i8x16, i16x8_extend_low_i8x16, i32x4_extend_high_i16x8,
    i32x4_extend_low_i16x8, u16x8_extend_high_u8x16, u16x8_extend_low_u8x16,
    u32x4_extend_high_u16x8, u32x4_extend_low_u16x8, v128, v128_load,
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
            let scanned = scan_i8(&a, &[signed.clone(), signed.clone()].concat());
            assert_eq!(scanned.len(), usize::from(len > 0) * 2);
            assert!(scanned
                .iter()
                .all(|s| s.to_bits() == dot_i8(&a, &signed).to_bits()));
            assert!(
                (f64::from(dot_u8(&a, &unsigned)) - want_u8).abs() < 1e-3,
                "{len}"
            );
            let want = plain(&|i| f64::from(a[i]));
            assert!((f64::from(dot(&a, &a)) - want).abs() < 1e-4, "{len}");
        }
    }
}
