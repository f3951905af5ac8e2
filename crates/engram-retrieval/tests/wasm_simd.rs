//! The resident vector set's wasm SIMD dot product, run in Node by wasm-bindgen-test: the
//! native unit tests cannot reach it (it is compiled only for wasm32 with simd128), and the
//! end-to-end tests only see its effect through the pick, which the statement re-scores.
#![cfg(all(target_family = "wasm", target_os = "unknown"))]

use engram_retrieval::resident::{similarity, VectorSet};
use wasm_bindgen_test::wasm_bindgen_test;

/// Deterministic pseudo-random floats in [-0.5, 0.5) (a linear congruential sequence).
fn vector(seed: u64, dims: usize) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(1);
    (0..dims)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        })
        .collect()
}

fn exact(a: &[f32], b: &[f32]) -> f64 {
    1.0 - engram_core::vector::cosine_distance(a, b).expect("same length")
}

#[wasm_bindgen_test]
fn simd_similarity_matches_the_f64_cosine_at_every_length() {
    // Lengths below one 8-float chunk, with a tail, exact multiples, and the models' sizes.
    for dims in [1, 3, 7, 8, 9, 16, 19, 20, 33, 256, 384] {
        for seed in 0..20 {
            let (a, b) = (vector(seed, dims), vector(seed + 1000, dims));
            let got = f64::from(similarity(&a, &b));
            let want = exact(&a, &b);
            assert!(
                (got - want).abs() < 1e-5,
                "dims {dims} seed {seed}: {got} vs {want}"
            );
        }
    }
}

#[wasm_bindgen_test]
fn simd_nearest_holds_the_f64_top_within_the_bound() {
    let dims = 384;
    let vectors: Vec<Vec<f32>> = (0..300).map(|i| vector(i, dims)).collect();
    let mut set = VectorSet::new(dims);
    for (i, v) in vectors.iter().enumerate() {
        set.upsert(&format!("m{i:03}"), v).expect("dims");
    }
    for q in 0..5 {
        let query = vector(10_000 + q, dims);
        let mut want: Vec<(f64, String)> = vectors
            .iter()
            .enumerate()
            .map(|(i, v)| (exact(&query, v), format!("m{i:03}")))
            .collect();
        want.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let got = set.nearest(&query, 20);
        let bound = f64::from(set.similarity_error());
        let exact_of = |id: &str| want.iter().find(|(_, w)| w == id).map(|(s, _)| *s).unwrap();
        // The stored vectors are 16-bit fixed point, scanned in two byte planes: each
        // similarity is within the bound of the exact one, so the pick holds every vector that beats the exact 20th by twice the
        // bound, and nothing below it by more.
        let twentieth = want[19].0;
        for (id, score) in &got {
            assert!((f64::from(*score) - exact_of(id)).abs() <= bound, "{id}");
            assert!(exact_of(id) >= twentieth - 2.0 * bound, "{id}");
        }
        for (score, id) in want.iter().filter(|(s, _)| *s > twentieth + 2.0 * bound) {
            assert!(got.iter().any(|(g, _)| g == id), "{id} ({score}) missing");
        }
    }
}

#[wasm_bindgen_test]
fn simd_pruned_scan_keeps_every_row_of_the_full_top() {
    // Odd lengths exercise the 16-byte chunks and their tails.
    for dims in [7, 17, 33, 384] {
        let mut set = VectorSet::new(dims);
        for i in 0..200 {
            set.upsert(&format!("m{i:03}"), &vector(i, dims))
                .expect("dims");
        }
        let query = vector(777, dims);
        let everything = set.nearest(&query, set.len());
        for k in [1, 10, 60] {
            assert_eq!(set.nearest(&query, k), everything[..k], "dims {dims} k {k}");
        }
    }
}
