//! `engram-testserver`: runs the test server until killed.
//!
//! ```text
//! engram-testserver [--listen 127.0.0.1:0] [--db PATH] [--auth-token TOKEN] [--v2-only]
//! ```
//! Prints `ENGRAM_TESTSERVER_URL=http://127.0.0.1:PORT` on its first line of stdout once it
//! accepts connections.

use std::io::Write;

use engram_testserver::{serve, ServerConfig};

fn usage() -> ! {
    eprintln!(
        "usage: engram-testserver [--listen 127.0.0.1:PORT] [--db PATH] [--auth-token TOKEN] [--v2-only]"
    );
    std::process::exit(2)
}

fn main() {
    let mut listen = "127.0.0.1:0".to_owned();
    let mut config = ServerConfig::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--listen" => listen = args.next().unwrap_or_else(|| usage()),
            "--db" => config.db_path = Some(args.next().unwrap_or_else(|| usage()).into()),
            "--auth-token" => config.auth_token = Some(args.next().unwrap_or_else(|| usage())),
            "--v2-only" => config.v3 = false,
            _ => usage(),
        }
    }
    if !listen.starts_with("127.") && !listen.starts_with("localhost") {
        eprintln!("engram-testserver only listens on loopback addresses");
        std::process::exit(2);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start runtime: {e}");
            std::process::exit(1);
        }
    };
    let result = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&listen).await?;
        let addr = listener.local_addr()?;
        println!("ENGRAM_TESTSERVER_URL=http://{addr}");
        std::io::stdout().flush()?;
        serve(listener, config, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
    });
    if let Err(e) = result {
        eprintln!("engram-testserver: {e}");
        std::process::exit(1);
    }
}
