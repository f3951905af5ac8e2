//! `engram ui`: the memory panel (www/, a Next.js app on the npm package) for this project.
//! The panel reaches the database over libSQL's HTTP protocol: for the local file this
//! command serves it on a loopback port with a fresh bearer token, so the file keeps one
//! engine (SQLite's own locking) shared with agents' hooks; for `--url` the panel talks to
//! that server itself. Nothing listens beyond loopback unless `--listen` says so, and then
//! only behind a token.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clap::Args;
use engram_libsql::LocalDatabase;

use crate::{model, open, CliError, Target};

/// How to run the panel.
#[derive(Args, Debug, Clone)]
pub struct UiArgs {
    /// The port the panel listens on.
    #[arg(long, default_value_t = 3000)]
    pub port: u16,
    /// The address the panel listens on. Anything but a loopback address needs a token
    /// (`--token`, or one is made and printed), which every browser must present once.
    #[arg(long, default_value = "127.0.0.1")]
    pub listen: String,
    /// The token a browser presents (`?token=…` once, then a cookie) when listening
    /// beyond loopback.
    #[arg(long, env = "ENGRAM_PANEL_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// The panel's folder (default: `www/` of the engram checkout this binary was built
    /// from).
    #[arg(long, env = "ENGRAM_WWW")]
    pub www: Option<PathBuf>,
    /// Run Next.js in development mode (rebuilds on change) instead of the built panel.
    #[arg(long)]
    pub dev: bool,
}

/// The project's database file served over libSQL's HTTP protocol on a loopback port, on a
/// thread of its own, until dropped. Unlike the tests' server it never deletes the file.
struct Bridge {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Bridge {
    fn start(db: PathBuf, token: String) -> std::io::Result<Bridge> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let url = format!("http://{}", listener.local_addr()?);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let config = engram_testserver::ServerConfig {
            db_path: Some(db),
            auth_token: Some(token),
            v3: true,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let thread = std::thread::spawn(move || {
            runtime.block_on(async move {
                let served = match tokio::net::TcpListener::from_std(listener) {
                    Ok(listener) => {
                        engram_testserver::serve(listener, config, async {
                            let _ = stopped.await;
                        })
                        .await
                    }
                    Err(e) => Err(e),
                };
                if let Err(e) = served {
                    eprintln!("engram ui: the database bridge stopped: {e}");
                }
            });
        });
        Ok(Bridge {
            url,
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Whether `address` only accepts connections from this machine.
pub fn is_loopback(address: &str) -> bool {
    address == "localhost"
        || address
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// 32 random bytes as hex, from the operating system's generator.
fn fresh_token() -> String {
    let mut bytes = [0u8; 32];
    engram::Host::native().entropy.fill(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn www_dir(args: &UiArgs) -> Result<PathBuf, CliError> {
    let dir = args
        .www
        .clone()
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../www"));
    if dir.join("package.json").is_file() {
        Ok(dir)
    } else {
        Err(CliError::Usage(format!(
            "no panel at {}: give its folder with --www (the www/ folder of an engram checkout)",
            dir.display()
        )))
    }
}

/// Runs `npm` with `args` in `dir`, saying what it does; fails with its exit status.
fn npm(dir: &Path, args: &[&str], why: &str) -> Result<(), CliError> {
    eprintln!(
        "engram ui: {why} (npm {} in {})",
        args.join(" "),
        dir.display()
    );
    let status = Command::new("npm")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .status()
        .map_err(|e| {
            CliError::Usage(format!("cannot run npm ({e}); install Node.js 20 or newer"))
        })?;
    if status.success() {
        Ok(())
    } else {
        Err(CliError::Usage(format!(
            "npm {} failed: {status}",
            args.join(" ")
        )))
    }
}

/// Installs and builds the panel when it was never built.
fn prepare(dir: &Path, dev: bool) -> Result<(), CliError> {
    if !dir.join("node_modules/next").is_dir() {
        npm(
            dir,
            &["ci", "--no-audit", "--no-fund"],
            "installing the panel's packages",
        )?;
    }
    if !dev && !dir.join(".next/BUILD_ID").is_file() {
        npm(dir, &["run", "build"], "building the panel")?;
    }
    Ok(())
}

/// Where the panel finds the database: its address, the token it sends, and the bridge
/// (for a local file) that must live as long as the panel.
async fn database(target: &Target) -> Result<(String, Option<String>, Option<Bridge>), CliError> {
    if let Some(url) = &target.url {
        return Ok((url.clone(), target.auth_token.clone(), None));
    }
    // Opened once here so the schema is current and a project's settings apply.
    let db = LocalDatabase::open(&target.db)
        .await
        .map_err(engram::EngramError::from)?;
    open::open(&db, target).await?;
    drop(db);
    let token = fresh_token();
    let bridge = Bridge::start(PathBuf::from(&target.db), token.clone())
        .map_err(|e| CliError::Usage(format!("cannot serve {}: {e}", target.db)))?;
    Ok((bridge.url.clone(), Some(token), Some(bridge)))
}

/// The panel's process: `scripts/panel.mjs` in `dir` with the database's address and
/// token, the project, the address to listen on, its own token, and the model folder.
fn panel_command(
    dir: &Path,
    target: &Target,
    args: &UiArgs,
    (url, auth_token): (&str, Option<&str>),
    panel_token: Option<&str>,
) -> Command {
    let mut panel = Command::new("node");
    panel
        .arg("scripts/panel.mjs")
        .arg(if args.dev { "dev" } else { "start" })
        .current_dir(dir)
        .env("ENGRAM_URL", url)
        .env("ENGRAM_PROJECT", &target.project)
        .env("HOSTNAME", &args.listen)
        .env("PORT", args.port.to_string())
        .env_remove("ENGRAM_AUTH_TOKEN")
        .env_remove("ENGRAM_PANEL_TOKEN")
        .env_remove("ENGRAM_MODEL_DIR");
    if let Some(token) = auth_token {
        panel.env("ENGRAM_AUTH_TOKEN", token);
    }
    if let Some(token) = panel_token {
        panel.env("ENGRAM_PANEL_TOKEN", token);
    }
    if let Some(models) = model::model_dir(target).filter(|_| !target.no_embed) {
        panel.env("ENGRAM_MODEL_DIR", models);
    }
    panel
}

/// The address a person opens (with the token when one is needed).
fn address(args: &UiArgs, panel_token: Option<&str>) -> String {
    let host = if args.listen.contains(':') {
        format!("[{}]", args.listen)
    } else {
        args.listen.clone()
    };
    match panel_token {
        Some(token) => format!("http://{host}:{}/?token={token}", args.port),
        None => format!("http://{host}:{}/", args.port),
    }
}

/// Serves the panel until it stops (Ctrl-C stops both it and the database bridge).
pub async fn run(target: &Target, args: &UiArgs) -> Result<(), CliError> {
    let panel_token = match (&args.token, is_loopback(&args.listen)) {
        (Some(token), _) => Some(token.clone()),
        (None, true) => None,
        (None, false) => Some(fresh_token()),
    };
    let dir = www_dir(args)?;
    prepare(&dir, args.dev)?;
    let (url, auth_token, bridge) = database(target).await?;
    let mut panel = panel_command(
        &dir,
        target,
        args,
        (&url, auth_token.as_deref()),
        panel_token.as_deref(),
    );
    eprintln!(
        "engram ui: {} (project {}, database {}); Ctrl-C stops it",
        address(args, panel_token.as_deref()),
        target.project,
        target.url.as_deref().unwrap_or(&target.db)
    );
    let status = panel.status().map_err(|e| {
        CliError::Usage(format!(
            "cannot run node ({e}); install Node.js 20 or newer"
        ))
    })?;
    drop(bridge);
    if status.success() {
        Ok(())
    } else {
        Err(CliError::Usage(format!("the panel stopped: {status}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_count_as_loopback() {
        assert!(is_loopback("127.0.0.1"));
        assert!(is_loopback("::1"));
        assert!(is_loopback("localhost"));
        assert!(!is_loopback("0.0.0.0"));
        assert!(!is_loopback("192.168.1.20"));
        assert!(!is_loopback("example.com"));
    }

    #[test]
    fn the_address_carries_the_token_only_when_one_is_needed() {
        let args = UiArgs {
            port: 3000,
            listen: "::1".into(),
            token: None,
            www: None,
            dev: false,
        };
        assert_eq!(address(&args, None), "http://[::1]:3000/");
        assert_eq!(address(&args, Some("t0k")), "http://[::1]:3000/?token=t0k");
    }

    #[test]
    fn tokens_are_fresh_and_long() {
        let (a, b) = (fresh_token(), fresh_token());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
