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

/// The cross-host graph vectors (tests/vectors/graph.json), natively.
#[test]
fn graph_vectors_pass_natively() {
    let file: serde_json::Value =
        serde_json::from_str(include_str!("../../../tests/vectors/graph.json")).unwrap();
    let cases = file["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 6);
    for case in cases {
        let files: Vec<(&str, &str)> = case["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["path"].as_str().unwrap(), f["content"].as_str().unwrap()))
            .collect();
        let graph = engram_code::graph_of_files(files);
        let nodes: Vec<serde_json::Value> = graph
            .nodes
            .iter()
            .map(|n| serde_json::json!([n.id, n.start_line, n.end_line]))
            .collect();
        let edges: Vec<serde_json::Value> = graph
            .edges
            .iter()
            .map(|e| serde_json::json!([e.kind, e.from, e.to, e.weight]))
            .collect();
        assert_eq!(
            serde_json::Value::from(nodes),
            case["nodes"],
            "{}",
            case["name"]
        );
        assert_eq!(
            serde_json::Value::from(edges),
            case["edges"],
            "{}",
            case["name"]
        );
    }
}
