//! The int8 model in tract against the fp32 reference vectors (tests/vectors/embeddings.json,
//! made by scripts/reference/embeddings.py). The model comes from scripts/fetch-model.sh.

mod common;

use common::read_model_file;
use engram_embed::{Embedder, Footprint, MINILM_INT8_ID};

fn load() -> Embedder {
    load_with(Footprint::Fast)
}

fn load_with(footprint: Footprint) -> Embedder {
    let read = |name: &str| read_model_file(MINILM_INT8_ID, name);
    let (onnx, tokenizer) = (read("model.onnx"), read("tokenizer.json"));
    Embedder::load_owned(onnx, &tokenizer, MINILM_INT8_ID, footprint).unwrap()
}

fn cosine(a: &[f32], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| f64::from(*x) * y).sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|y| y * y).sum::<f64>().sqrt();
    dot / (na * nb)
}

#[test]
fn int8_in_tract_matches_the_fp32_reference() {
    matches_the_fp32_reference(Footprint::Fast);
}

#[test]
fn the_compact_footprint_matches_the_fp32_reference() {
    matches_the_fp32_reference(Footprint::Compact);
}

fn matches_the_fp32_reference(footprint: Footprint) {
    let embedder = load_with(footprint);
    assert_eq!(embedder.info().dims, 384);
    let file: serde_json::Value =
        serde_json::from_str(include_str!("../../../tests/vectors/embeddings.json")).unwrap();
    let mut worst = (1.0f64, String::new());
    let texts = file["texts"].as_array().unwrap();
    assert_eq!(texts.len(), 50);
    for record in texts {
        let text = record["text"].as_str().unwrap();
        let reference: Vec<f64> = record["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let pieces = embedder.word_pieces(text).unwrap();
        assert_eq!(
            pieces.len() as u64,
            record["pieces"].as_u64().unwrap(),
            "tokenization of {text:?}"
        );
        let vector = embedder.embed(text).unwrap();
        let norm: f32 = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "not normalized: {norm}");
        let c = cosine(&vector, &reference);
        if c < worst.0 {
            worst = (c, text.chars().take(40).collect());
        }
        assert!(c >= 0.99, "cosine {c:.5} for {text:?}");
    }
    println!(
        "{footprint:?}: worst cosine vs fp32 reference: {:.6} ({:?})",
        worst.0, worst.1
    );
}

#[test]
fn similar_texts_are_closer_than_unrelated_ones() {
    let embedder = load();
    let a = embedder
        .embed("the database is locked during tests")
        .unwrap();
    let b = embedder
        .embed("tests fail because sqlite reports database locked")
        .unwrap();
    let c = embedder
        .embed("use CSS grid for the dashboard layout")
        .unwrap();
    let dot = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
    assert!(
        dot(&a, &b) > dot(&a, &c) + 0.2,
        "{} vs {}",
        dot(&a, &b),
        dot(&a, &c)
    );
}

#[test]
fn garbage_model_bytes_are_an_error_not_a_panic() {
    let tokenizer = read_model_file(MINILM_INT8_ID, "tokenizer.json");
    assert!(Embedder::load(b"not an onnx file", &tokenizer, "x").is_err());
    assert!(Embedder::load(&[], b"{}", "x").is_err());
    assert!("huge".parse::<Footprint>().is_err());
}
