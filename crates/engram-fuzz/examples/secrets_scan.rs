//! The secret scanner's cost per 32 KB text: prose, key-dense text, deep nesting and a
//! hostile assignment chain (`a_key=a_key=…`), with the scanner's compile time.
//! `cargo run --release -p engram-fuzz --example secrets_scan`

fn main() {
    let Ok(scanner) = engram_core::secrets::SecretScanner::shared() else {
        eprintln!("the secret scanner did not compile");
        return;
    };
    let prose =
        "The deploy needs the staging cache warmed; run cargo test -p engram first. ".repeat(430);
    let keys = "token: abc, key=value; password_field: x ".repeat(780);
    let nest = "{\"a\":".repeat(6000);
    let chain = "a_key=".repeat(5000);
    let unicode =
        "Le déploiement échoue — 部署失败 🚀 quand le cache n'est pas chaud. ".repeat(400);
    let t = std::time::Instant::now();
    let _ = engram_core::secrets::SecretScanner::new();
    println!(
        "compiling the scanner: {:.1} ms",
        t.elapsed().as_secs_f64() * 1000.0
    );
    for (name, text) in [
        ("prose 32KB", &prose),
        ("key-like 32KB", &keys),
        ("nested 30KB", &nest),
        ("a_key= chain 30KB", &chain),
        ("non-ASCII prose", &unicode),
    ] {
        let t = std::time::Instant::now();
        let n = 20;
        for _ in 0..n {
            std::hint::black_box(scanner.redact(text));
        }
        println!(
            "{name}: {} bytes, {:.2} ms per scan",
            text.len(),
            t.elapsed().as_secs_f64() * 1000.0 / n as f64
        );
    }
}
