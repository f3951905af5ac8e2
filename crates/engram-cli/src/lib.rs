//! The engram command line's host glue, shared by the `engram` binary and `engram-eval`:
//! the global flags and the options they describe, the bundled model, replaying recorded
//! sessions, and output.

/// `println!` that ends the process quietly when stdout is closed (e.g. `engram … | head`)
/// instead of panicking, and prints control characters (escape sequences in stored text)
/// as visible escapes instead of letting them act on the terminal.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let line = format!($($arg)*);
        let line = $crate::for_terminal(&line);
        if let Err(e) = writeln!(std::io::stdout(), "{line}") {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
    }};
}

pub use engram_core::quote::for_terminal;

pub mod backup;
pub mod config;
pub mod hook;
pub mod install;
pub mod model;
pub mod observe;
pub mod open;
pub mod output;
pub mod ui;

use std::future::Future;
use std::process::ExitCode;

use clap::Args;
use engram::EngramError;

/// Runs a command to completion on a single-threaded runtime (engram is single-threaded:
/// it runs in wasm too) and turns its outcome into the process's exit code, printing a
/// failure as `output::error` does.
pub fn run_to_exit(command: impl Future<Output = Result<(), CliError>>, json: bool) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            output::error(&e, json);
            ExitCode::FAILURE
        }
    }
}

impl Target {
    /// Reads the project's `.engram/config.toml` (found from the current folder) under the
    /// flags and environment in `matches`, then puts the default database at the project's
    /// root.
    pub fn configure(&mut self, matches: &clap::ArgMatches) -> Result<(), CliError> {
        if let Ok(cwd) = std::env::current_dir() {
            let root = hook::project_root(&cwd);
            config::ProjectConfig::read(&root)?.apply(self, matches, &root);
        }
        self.at_project_root();
        Ok(())
    }

    /// Puts the default database at the project's root, so `engram` run anywhere in a
    /// project (and its hooks and MCP server) use one database. A path given by `--db` or
    /// `ENGRAM_DB` is kept as it is.
    pub fn at_project_root(&mut self) {
        if self.db != DEFAULT_DB || std::env::var_os("ENGRAM_DB").is_some() {
            return;
        }
        if let Ok(cwd) = std::env::current_dir() {
            let root = hook::project_root(&cwd);
            if root != cwd {
                self.db = hook::database_path(&root).to_string_lossy().into_owned();
            }
        }
    }
}

/// The host's clock in Unix milliseconds (0 if it is before the epoch).
pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The local database's default path, relative to the project's root.
pub const DEFAULT_DB: &str = ".engram/engram.db";

/// Where memories live.
#[derive(Args, Clone)]
#[command(next_help_heading = "Global options")]
pub struct Target {
    /// Local database file (the default store). The default is `.engram/engram.db` at the
    /// project's root: the nearest folder above the current one holding `.engram/`, else
    /// the top of its git work tree, else the current folder.
    #[arg(
        long,
        global = true,
        env = "ENGRAM_DB",
        default_value = DEFAULT_DB
    )]
    pub db: String,
    /// A libSQL server instead of the local file (`libsql://…`, `https://…`, `http://…`).
    #[arg(long, global = true, env = "LIBSQL_URL")]
    pub url: Option<String>,
    /// Auth token for `--url` (never printed).
    #[arg(long, global = true, env = "LIBSQL_AUTH_TOKEN", hide_env_values = true)]
    pub auth_token: Option<String>,
    /// Project whose memories to use. (`engram install claude-code --project`, with no
    /// name, is the install's project scope.)
    #[arg(
        long,
        global = true,
        env = "ENGRAM_PROJECT",
        default_value = "default",
        num_args = 0..=1,
        default_missing_value = ""
    )]
    pub project: String,
    /// Folder holding the embedding model (scripts/fetch-model.sh puts it in
    /// ~/.cache/engram/models); without it engram runs keyword-only.
    #[arg(long, global = true, env = "ENGRAM_MODEL_DIR")]
    pub model_dir: Option<std::path::PathBuf>,
    /// Do not load the embedding model (keyword search only).
    #[arg(long, global = true)]
    pub no_embed: bool,
    /// Which bundled model: `minilm` (the transformer, default) or `static` (the distilled
    /// edge model: microseconds per text, weaker).
    #[arg(long, global = true, env = "ENGRAM_LOCAL_MODEL", default_value = "minilm", value_parser = ["minilm", "static"])]
    pub local_model: String,
    /// Embed through a remote provider instead of the bundled model: `openai` (any
    /// OpenAI-compatible `/embeddings` endpoint) or `ollama`.
    #[arg(long, global = true, env = "ENGRAM_EMBED_PROVIDER", requires_all = ["embed_url", "embed_model", "embed_dims"])]
    pub embed_provider: Option<String>,
    /// The provider's base URL (`https://api.openai.com/v1`, `http://127.0.0.1:11434`).
    #[arg(long, global = true, env = "ENGRAM_EMBED_URL")]
    pub embed_url: Option<String>,
    /// The provider's model name.
    #[arg(long, global = true, env = "ENGRAM_EMBED_MODEL")]
    pub embed_model: Option<String>,
    /// The vector length the model returns; every answer is checked against it.
    #[arg(long, global = true, env = "ENGRAM_EMBED_DIMS")]
    pub embed_dims: Option<usize>,
    /// API key for the provider (never printed).
    #[arg(
        long,
        global = true,
        env = "ENGRAM_EMBED_API_KEY",
        hide_env_values = true
    )]
    pub embed_api_key: Option<String>,
    /// Rerank the best 20 candidates of each search with a rerank service: `cohere` (the
    /// `/rerank` shape Cohere, Jina, Voyage, vLLM, Infinity and llama.cpp share) or `tei`
    /// (Hugging Face text-embeddings-inference).
    #[arg(
        long,
        global = true,
        env = "ENGRAM_RERANK_PROVIDER",
        requires = "rerank_url"
    )]
    pub rerank_provider: Option<String>,
    /// The rerank service's base URL (`https://api.cohere.com/v2`, `http://127.0.0.1:8080`)
    /// or its full `/rerank` endpoint.
    #[arg(long, global = true, env = "ENGRAM_RERANK_URL")]
    pub rerank_url: Option<String>,
    /// The rerank service's model name (`rerank-v3.5`, `BAAI/bge-reranker-v2-m3`).
    #[arg(long, global = true, env = "ENGRAM_RERANK_MODEL")]
    pub rerank_model: Option<String>,
    /// API key for the rerank service (never printed).
    #[arg(
        long,
        global = true,
        env = "ENGRAM_RERANK_API_KEY",
        hide_env_values = true
    )]
    pub rerank_api_key: Option<String>,
    /// The largest request body sent to `--url` (default 1 MiB); larger transactions go in
    /// pieces on one stream, still one transaction.
    #[arg(long, global = true, env = "ENGRAM_MAX_REQUEST_BYTES")]
    pub max_request_bytes: Option<u64>,
    /// The waits in milliseconds before each retry of a write that failed for a passing
    /// reason (default 1000,2000,4000,8000; an empty value: one attempt).
    #[arg(
        long,
        global = true,
        env = "ENGRAM_RETRY_DELAYS_MS",
        value_delimiter = ','
    )]
    pub retry_delays_ms: Option<Vec<u32>>,
    /// The trust level the project's `.engram/config.toml` sets, applied to the database
    /// on every open.
    #[arg(skip)]
    pub trust_level: Option<engram::TrustLevel>,
}

/// Why the CLI failed.
#[derive(Debug)]
pub enum CliError {
    /// engram refused or failed.
    Engram(EngramError),
    /// No memory with this id.
    NotFound(String),
    /// The command line or a file it names is wrong.
    Usage(String),
}

impl From<EngramError> for CliError {
    fn from(e: EngramError) -> Self {
        CliError::Engram(e)
    }
}
