//! The static edge model against its reference vectors (tests/vectors/static-embeddings.json,
//! made by scripts/reference/static_embeddings.py with NumPy and HF tokenizers). The table is
//! distilled by scripts/fetch-model.sh.

mod common;

use common::read_model_file;
use engram_embed::{StaticEmbedder, STATIC_MINILM_ID};

fn load() -> StaticEmbedder {
    let read = |name: &str| read_model_file(STATIC_MINILM_ID, name);
    StaticEmbedder::load(
        &read("model.bin"),
        &read("tokenizer.json"),
        STATIC_MINILM_ID,
    )
    .unwrap()
}

#[test]
fn static_model_matches_its_reference() {
    let model = load();
    let file: serde_json::Value = serde_json::from_str(include_str!(
        "../../../tests/vectors/static-embeddings.json"
    ))
    .unwrap();
    assert_eq!(model.info().dims as u64, file["dims"].as_u64().unwrap());
    let mut worst = 1.0f64;
    for record in file["texts"].as_array().unwrap() {
        let text = record["text"].as_str().unwrap();
        let reference: Vec<f64> = record["embedding"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let vector = model.embed(text).unwrap();
        let dot: f64 = vector
            .iter()
            .zip(&reference)
            .map(|(a, b)| f64::from(*a) * b)
            .sum();
        let norm: f64 = vector
            .iter()
            .map(|a| f64::from(*a).powi(2))
            .sum::<f64>()
            .sqrt();
        let cosine = dot / norm;
        worst = worst.min(cosine);
        assert!(cosine >= 0.99, "cosine {cosine} for {text:?}");
    }
    eprintln!("static model: worst cosine {worst:.6}");
}

#[test]
fn garbage_tables_are_typed_errors() {
    let err = StaticEmbedder::load(b"not a table", b"{}", STATIC_MINILM_ID).unwrap_err();
    assert!(err.to_string().contains("EGST"), "{err}");
}
