//! The cross-host chunking vectors (tests/vectors/chunking.json), natively.

use engram_code::{chunk_file, ChunkOptions};

#[test]
fn chunking_vectors_pass_natively() {
    let file: serde_json::Value =
        serde_json::from_str(include_str!("../../../tests/vectors/chunking.json")).unwrap();
    let cases = file["cases"].as_array().unwrap();
    assert!(cases.len() >= 8);
    for case in cases {
        let path = case["path"].as_str().unwrap();
        let options = ChunkOptions {
            max_chars: case["maxChars"].as_u64().unwrap() as usize,
            ..ChunkOptions::default()
        };
        let chunks = chunk_file(path, case["source"].as_str().unwrap(), &options);
        let got: Vec<serde_json::Value> = chunks
            .iter()
            .map(|c| {
                serde_json::json!({
                    "kind": c.kind, "name": c.name, "startLine": c.start_line, "endLine": c.end_line
                })
            })
            .collect();
        assert_eq!(&serde_json::Value::from(got), &case["chunks"], "{path}");
    }
}
