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
        // Stops on a signal; a connection that keeps the graceful shutdown waiting gets 5 s.
        let stop = std::sync::Arc::new(tokio::sync::Notify::new());
        let stopping = stop.clone();
        let served = serve(listener, config, async move { stopping.notified().await });
        tokio::pin!(served);
        tokio::select! {
            result = &mut served => result,
            _ = shutdown_signal() => {
                stop.notify_one();
                tokio::time::timeout(std::time::Duration::from_secs(5), &mut served)
                    .await
                    .unwrap_or(Ok(()))
            }
        }
    });
    if let Err(e) = result {
        eprintln!("engram-testserver: {e}");
        std::process::exit(1);
    }
}

/// Resolves on Ctrl-C, or on SIGTERM where there is one (test harnesses stop the server
/// with it), so the server shuts down gracefully and deletes the database it made.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut terminate) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
