//! Milliseconds per text at 16, 64 and 256 tokens (one thread), for bench/embed.sh.
//! Usage: cargo run --release -p engram-embed --example bench -- MODEL_DIR [compact]

use std::time::Instant;

use engram_embed::{Embedder, Footprint};

fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).expect("usage: bench MODEL_DIR"));
    let read = |n: &str| std::fs::read(dir.join(n)).expect("model file");
    let started = Instant::now();
    let (footprint, runtime) = match std::env::args().nth(2).as_deref() {
        Some("compact") => (Footprint::Compact, "tract-native-compact"),
        _ => (Footprint::Fast, "tract-native"),
    };
    let embedder = Embedder::load_with(
        &read("model.onnx"),
        &read("tokenizer.json"),
        "bench",
        footprint,
    )
    .expect("model loads");
    println!(
        "{{\"runtime\":\"{runtime}\",\"loadMs\":{:.1}}}",
        started.elapsed().as_secs_f64() * 1000.0
    );
    for tokens in [16usize, 64, 256] {
        // "hello" is one word piece; with [CLS] and [SEP] the model sees exactly `tokens`.
        let text = vec!["hello"; tokens - 2].join(" ");
        assert_eq!(embedder.word_pieces(&text).unwrap().len(), tokens - 2);
        for _ in 0..3 {
            embedder.embed(&text).unwrap();
        }
        let mut times: Vec<f64> = (0..20)
            .map(|_| {
                let t = Instant::now();
                embedder.embed(&text).unwrap();
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "{{\"runtime\":\"{runtime}\",\"tokens\":{tokens},\"medianMs\":{:.2}}}",
            times[10]
        );
    }
}
