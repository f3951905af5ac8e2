//! `engram`: long-term memory for AI coding agents, from the command line.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use engram::{
    Database, Engram, EngramError, MemoryType, NewMemory, Phase, SearchIntent, SearchMode,
    SearchQuery,
};
use engram_hrana::{HranaClient, ReqwestTransport};
use engram_libsql::LocalDatabase;

#[macro_use]
extern crate engram_cli;

mod agent;
mod code;
mod export;
mod import;
mod manage;
mod mcp;

use engram_cli::{backup, install, observe, open, output};
pub(crate) use engram_cli::{CliError, Target};

/// Long-term memory for AI coding agents.
#[derive(Parser)]
#[command(name = "engram", version, about)]
struct Cli {
    #[command(flatten)]
    target: Target,
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true, help_heading = "Global options")]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Store a memory.
    Remember(RememberArgs),
    /// Search memories.
    Search {
        /// What to look for.
        query: String,
        /// Most results to show (1-50).
        #[arg(long, short = 'n', default_value_t = 10)]
        limit: u32,
        /// Only these types (repeatable).
        #[arg(long = "type", short = 't', value_parser = parse_type)]
        types: Vec<MemoryType>,
        /// Candidate paths: hybrid (default), keyword or dense.
        #[arg(long, default_value = "hybrid", value_parser = parse_mode)]
        mode: SearchMode,
        /// Auto-inject rules instead of search: at most 3 strong results, maybe none.
        #[arg(long)]
        auto: bool,
        /// The agent's phase (define, implement, validate, refine, explore, reflect): weights
        /// memory types and packs the results into the phase's token budget.
        #[arg(long, value_parser = parse_phase)]
        phase: Option<Phase>,
        /// Pack the results into this many tokens and print the packed context.
        #[arg(long)]
        budget: Option<u32>,
        /// Only memories related to this file (repeatable).
        #[arg(long = "file")]
        files: Vec<String>,
        /// A file the agent touched recently; its graph neighbours become candidates
        /// (repeatable).
        #[arg(long = "recent-file")]
        recent_files: Vec<String>,
        /// Print each result's score breakdown and the stage timings.
        #[arg(long)]
        explain: bool,
        /// Also print, under each result, the retired memories it superseded.
        #[arg(long)]
        superseded: bool,
    },
    /// Several searches in one round trip: a JSON array of queries (objects as the search
    /// API takes them, or plain strings), at most 16, from a file or `-` for stdin. Prints
    /// each answer in order (--json: an array of responses).
    SearchMany {
        /// The file holding the array, or `-` for stdin.
        queries: String,
        /// Print each result's score breakdown and the stage timings.
        #[arg(long)]
        explain: bool,
    },
    /// Embed memories that have no vector of the current model (after a model switch, or
    /// when embedding failed at write time). Resumable: progress lives in the database.
    EmbedPending {
        /// Memories per batch.
        #[arg(long, default_value_t = 64)]
        batch: u32,
    },
    /// Show the embedder: model, circuit breaker state and memories waiting for a vector.
    Status,
    /// Print shell completions: `engram completions bash > /etc/bash_completion.d/engram`,
    /// `engram completions zsh > "${fpath[1]}/_engram"`, `engram completions fish >
    /// ~/.config/fish/completions/engram.fish`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Show one memory.
    Get {
        /// The memory id.
        id: String,
    },
    /// Forget (soft-delete) a memory.
    Forget {
        /// The memory id.
        id: String,
    },
    /// Every change to a memory, oldest first: created, merged, superseded, retired…
    /// (kept after the memory is deleted).
    History {
        /// The memory id.
        id: String,
    },
    /// Retire memories whose confidence decayed below the floor past 3 half-lives,
    /// delete retired ones after the grace period (unless verified, pinned or
    /// superseded), and keep the project under its cap. Idempotent.
    Prune {
        /// Report what would change and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// The most live memories the project keeps.
        #[arg(long, default_value_t = engram::lifecycle_rules::prune::DEFAULT_CAP)]
        cap: u64,
        /// Current confidence below which an idle memory is retired.
        #[arg(long, default_value_t = 0.1)]
        floor: f64,
        /// Days a retired memory is kept before it is deleted.
        #[arg(long, default_value_t = 30.0)]
        grace_days: f64,
    },
    /// Browse, edit and judge memories.
    #[command(flatten)]
    Manage(manage::ManageCommand),
    /// Import the instruction files people keep for agents (CLAUDE.md, AGENTS.md,
    /// GEMINI.md, .cursorrules, .cursor/rules/*.mdc, .windsurf rules,
    /// .github/copilot-instructions.md; nested ones and `@path` imports too) as memories.
    /// Importing a file again updates what changed, retires removed rules and writes
    /// nothing for an unchanged file.
    Import(import::ImportArgs),
    /// Export the project's memories: JSON (every field, with history and import origins;
    /// `engram load-export` reads it back), Markdown for people, or engram's section of a
    /// CLAUDE.md or AGENTS.md (`--into FILE`; the rest of the file stays byte for byte).
    /// Secrets are redacted on the way out.
    Export(export::ExportArgs),
    /// Load a JSON export (from `engram export`) into this project, which must not hold
    /// its memories already; the memories are embedded when a model is loaded.
    LoadExport {
        /// The export file, or `-` for stdin.
        file: String,
    },
    /// Index a repository's code into the graph (incremental: only changed files are
    /// parsed). Honours .gitignore; skips vendored and build folders.
    Index(code::IndexArgs),
    /// What a change to a file, symbol id or qualified name impacts, with the memories
    /// attached.
    Impact {
        /// `src/auth.ts`, `src/auth.ts#function:verifyJwt` or `Store.get`.
        target: String,
        /// Most hops to follow (the stored closure has 3).
        #[arg(long, default_value_t = 3)]
        depth: u32,
    },
    /// What a file depends on.
    Deps {
        /// The file, relative to the repository root.
        file: String,
        /// Most hops to follow.
        #[arg(long, default_value_t = 3)]
        depth: u32,
    },
    /// The observer: replay recorded agent sessions, recover unfinished ones.
    #[command(subcommand)]
    Observe(observe::ObserveCommand),
    /// Agent-loop integration: tool definitions and calls, session-start context,
    /// tool-result augmentation, step injection.
    #[command(subcommand)]
    Agent(agent::AgentCommand),
    /// Serve engram's tools (search_memory, record_memory, analyze_impact) over the Model
    /// Context Protocol on stdin/stdout, e.g. `claude mcp add engram -- engram mcp`.
    Mcp,
    /// Check the database: the engine's page check, the keyword index, and that the
    /// keyword index holds every live memory; lists the backups. Exits 1 when something
    /// is wrong.
    Doctor,
    /// Repair the database: rebuild the keyword index from the memories, or (--restore)
    /// put the newest backup (or --from FILE) back in place, keeping the current file
    /// beside it as `<db>.damaged-<time>`.
    Repair {
        /// Restore a backup instead of rebuilding in place.
        #[arg(long)]
        restore: bool,
        /// The backup to restore (default: the newest).
        #[arg(long, requires = "restore")]
        from: Option<std::path::PathBuf>,
    },
    /// Back the local database file up now (it is also backed up once a day, the newest
    /// three kept, in `<db>.backups/`).
    Backup,
    /// Create a database in a temporary folder, remember a few memories and search them.
    Demo,
    /// Open the memory panel for this project on http://127.0.0.1:3000: health, memories,
    /// sessions to review, the module map, teaching and importing. It needs Node.js 20+;
    /// the first run installs and builds the panel (www/).
    Ui(engram_cli::ui::UiArgs),
    /// Handle one Claude Code hook: the event's JSON on stdin, Claude Code's hook JSON on
    /// stdout when there is context to add. The database is the project's
    /// (`.engram/engram.db` at the root found from the payload's `cwd`, or `--url`). Never
    /// fails: errors go to `.engram/hooks.log`.
    Hook,
    /// Install engram into an agent: `engram install claude-code` adds engram's hooks and
    /// MCP server to the project's `.claude/settings.json` and `.mcp.json` (or, with
    /// --user, to `~/.claude/settings.json` and `~/.claude.json`), keeping everything else
    /// in those files as it is. Running it again changes nothing.
    #[command(subcommand)]
    Install(install::Integration),
    /// The resident hook helper of the project at ROOT (started by `engram hook`).
    #[command(hide = true)]
    HookHelper {
        /// The project's root.
        root: std::path::PathBuf,
    },
    /// Remove exactly what `engram install` added (the memories stay).
    #[command(subcommand)]
    Uninstall(install::Integration),
}

#[derive(Args)]
struct RememberArgs {
    /// The memory text.
    content: Option<String>,
    /// Memory type (gotcha, decision, error_pattern, …).
    #[arg(long = "type", short = 't', default_value = "gotcha", value_parser = parse_type)]
    memory_type: MemoryType,
    /// Tags (repeatable or comma-separated).
    #[arg(long, value_delimiter = ',')]
    tag: Vec<String>,
    /// Related files (repeatable or comma-separated).
    #[arg(long, value_delimiter = ',')]
    file: Vec<String>,
    /// Confidence from 0 to 1.
    #[arg(long, default_value_t = 0.8)]
    confidence: f64,
    /// Read the whole memory as JSON from this file (`-` for stdin) instead.
    #[arg(long, conflicts_with = "content")]
    from_json: Option<String>,
}

fn parse_phase(text: &str) -> Result<Phase, String> {
    Phase::parse(text).ok_or_else(|| {
        format!(
            "unknown phase {text:?}; one of define, implement, validate, refine, explore, reflect"
        )
    })
}

fn parse_mode(text: &str) -> Result<SearchMode, String> {
    match text {
        "hybrid" => Ok(SearchMode::Hybrid),
        "keyword" => Ok(SearchMode::Keyword),
        "dense" => Ok(SearchMode::Dense),
        _ => Err(format!(
            "unknown mode {text:?}; one of: hybrid, keyword, dense"
        )),
    }
}

fn parse_type(text: &str) -> Result<MemoryType, String> {
    MemoryType::parse(text).ok_or_else(|| {
        let names: Vec<&str> = MemoryType::ALL.iter().map(|t| t.as_str()).collect();
        format!("unknown memory type {text:?}; one of: {}", names.join(", "))
    })
}

fn main() -> ExitCode {
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command().get_matches();
    let mut cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let json = cli.json;
    if let Command::Completions { shell } = cli.command {
        clap_complete::generate(shell, &mut Cli::command(), "engram", &mut std::io::stdout());
        return ExitCode::SUCCESS;
    }
    if let Err(e) = cli.target.configure(&matches) {
        if !matches!(cli.command, Command::Hook | Command::HookHelper { .. }) {
            output::error(&e, json);
            return ExitCode::FAILURE;
        }
        // A hook never breaks the agent's step: it runs on the defaults and logs why.
        engram_cli::hook::log_config_error(&e);
        cli.target.at_project_root();
    }
    engram_cli::run_to_exit(run(cli), json)
}

async fn run(cli: Cli) -> Result<(), CliError> {
    if let Command::Hook = cli.command {
        engram_cli::hook::run(&cli.target).await;
        return Ok(());
    }
    if let Command::HookHelper { root } = &cli.command {
        return engram_cli::hook::serve_helper(&cli.target, root).await;
    }
    let project_scope = cli.target.project.is_empty();
    match cli.command {
        Command::Install(integration) => {
            return install::run(integration, false, project_scope, cli.json)
        }
        Command::Uninstall(integration) => {
            return install::run(integration, true, project_scope, cli.json)
        }
        _ if project_scope => {
            return Err(CliError::Usage(
                "--project needs the name of the project whose memories to use".into(),
            ))
        }
        _ => {}
    }
    if let Command::Demo = cli.command {
        return demo(&cli.target, cli.json).await;
    }
    if let Command::Ui(args) = &cli.command {
        return engram_cli::ui::run(&cli.target, args).await;
    }
    if let Command::Agent(agent::AgentCommand::Tools { format }) = &cli.command {
        agent::tools(*format);
        return Ok(());
    }
    match &cli.target.url {
        Some(url) => {
            let mut db =
                HranaClient::new(ReqwestTransport::new(), url, cli.target.auth_token.clone());
            if let Some(bytes) = cli.target.max_request_bytes {
                db = db.with_max_request_bytes(usize::try_from(bytes).unwrap_or(usize::MAX));
            }
            let engram = open::open(db, &cli.target).await?;
            execute(engram, cli, &[]).await
        }
        None => {
            let path = std::path::PathBuf::from(&cli.target.db);
            if let Some(parent) = path.parent() {
                if !parent.as_os_str().is_empty() {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        CliError::Usage(format!("cannot create {}: {e}", parent.display()))
                    })?;
                }
            }
            if let Command::Repair {
                restore: true,
                from,
            } = &cli.command
            {
                let restored = backup::restore(&path, from.as_deref(), engram_cli::now_millis())?;
                output::restored(&path, &restored, cli.json);
                return Ok(());
            }
            // A file that lost its memories is refused before anything writes to it.
            let guarded = !matches!(cli.command, Command::Doctor | Command::Repair { .. });
            if guarded {
                backup::guard_file(&path)?;
            }
            let db = LocalDatabase::open(&cli.target.db)
                .await
                .map_err(EngramError::from)?;
            if guarded {
                backup::guard(&db, &path).await?;
            }
            let engram = open::open(&db, &cli.target).await?;
            match &cli.command {
                Command::Backup => {
                    let taken = backup::take(&db, &path, engram_cli::now_millis()).await?;
                    output::backed_up(&taken, cli.json);
                    return Ok(());
                }
                Command::Doctor | Command::Repair { .. } => {}
                _ => {
                    // A failed backup is said, not fatal: the command the user asked for runs.
                    if let Err(e) = backup::rotate(&db, &path, engram_cli::now_millis()).await {
                        let reason = match e {
                            CliError::Engram(e) => e.to_string(),
                            CliError::NotFound(what) | CliError::Usage(what) => what,
                        };
                        eprintln!(
                            "warning: the daily backup failed: {}",
                            engram_cli::for_terminal(&reason)
                        );
                    }
                }
            }
            let backups = backup::list(&path);
            // A deliberate deletion is backed up before (so it can be undone) and after
            // (so the next command does not take the smaller file for lost data).
            let deletes = matches!(
                cli.command,
                Command::Manage(manage::ManageCommand::Purge { .. })
                    | Command::Manage(manage::ManageCommand::Reset { .. })
                    | Command::Prune { dry_run: false, .. }
            );
            if deletes {
                backup::take(&db, &path, engram_cli::now_millis()).await?;
            }
            execute(engram, cli, &backups).await?;
            if deletes {
                backup::take(&db, &path, engram_cli::now_millis()).await?;
            }
            Ok(())
        }
    }
}

async fn execute<D: Database>(
    engram: Engram<D>,
    cli: Cli,
    backups: &[backup::Backup],
) -> Result<(), CliError> {
    let json = cli.json;
    match cli.command {
        Command::Remember(args) => {
            let memory = match &args.from_json {
                Some(path) => {
                    NewMemory::from_json(&read_input(path)?).map_err(EngramError::from)?
                }
                None => {
                    let content = args.content.clone().ok_or_else(|| {
                        CliError::Usage("give the memory text, or --from-json FILE".into())
                    })?;
                    let mut memory = NewMemory::new(args.memory_type, content);
                    memory.tags = args.tag.clone();
                    memory.related_files = args.file.clone();
                    memory.confidence = args.confidence;
                    memory
                }
            };
            let stored = engram.remember(memory).await?;
            output::remembered(&stored, json);
        }
        Command::Search {
            query,
            limit,
            types,
            mode,
            auto,
            phase,
            budget,
            files,
            recent_files,
            explain,
            superseded,
        } => {
            let mut query = SearchQuery::new(query);
            query.include_superseded = superseded;
            query.limit = limit;
            query.types = types;
            query.mode = mode;
            query.phase = phase;
            query.budget = budget;
            query.files = files;
            query.context.recent_files = recent_files;
            if auto {
                query.intent = SearchIntent::AutoInject;
            }
            let response = engram.search(&query).await?;
            output::search(&response, json, explain);
        }
        Command::SearchMany { queries, explain } => {
            let queries =
                SearchQuery::list_from_json(&read_input(&queries)?).map_err(EngramError::from)?;
            let responses = engram.search_many(&queries).await?;
            output::searches(&queries, &responses, json, explain);
        }
        Command::Get { id } => match engram.get(&id).await? {
            Some(memory) => output::memory(&memory, json),
            None => return Err(CliError::NotFound(id)),
        },
        Command::Forget { id } => {
            if !engram.forget(&id).await? {
                return Err(CliError::NotFound(id));
            }
            output::forgotten(&id, json);
        }
        Command::History { id } => {
            let entries = engram.history(&id).await?;
            output::history(&entries, json);
        }
        Command::Prune {
            dry_run,
            cap,
            floor,
            grace_days,
        } => {
            let policy = engram::PrunePolicy {
                cap: Some(cap),
                floor,
                grace_days,
                ..engram::PrunePolicy::default()
            };
            let report = engram.prune(&policy, dry_run).await?;
            output::pruned(&report, json);
        }
        Command::EmbedPending { batch } => loop {
            let progress = engram.embed_pending(batch).await?;
            output::progress(&progress, json);
            if progress.embedded == 0 || progress.remaining == 0 {
                break;
            }
        },
        Command::Status => {
            let status = engram.embedding_status().await?;
            let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
            let root = engram_cli::hook::project_root(&cwd);
            let hooks = output::HooksView {
                installed_in: engram_cli::hook::installed_in(&root),
                status: engram.hook_status().await?,
                recent_errors: engram_cli::hook::recent_errors(&root, 3),
                helpers: engram_cli::hook::helpers(&root),
            };
            output::status(status.as_ref(), &hooks, json);
        }
        Command::Index(args) => code::index(&engram, &args, json).await?,
        Command::Import(args) => import::run(&engram, &args, json).await?,
        Command::Export(args) => export::run(&engram, &args).await?,
        Command::LoadExport { file } => export::load(&engram, &file, json).await?,
        Command::Manage(command) => manage::run(&engram, command, json).await?,
        Command::Observe(observe::ObserveCommand::Replay(args)) => {
            observe::replay(&engram, &args, json).await?
        }
        Command::Observe(observe::ObserveCommand::Recover) => {
            observe::recover(&engram, json).await?
        }
        Command::Observe(observe::ObserveCommand::Bootstrap {
            repo,
            git_log,
            commits,
        }) => observe::bootstrap(&engram, &repo, git_log.as_deref(), commits, json).await?,
        Command::Impact { target, depth } => {
            let report = engram.analyze_impact(&target, depth).await?;
            if report.targets.is_empty() {
                return Err(code::not_in_graph(&target));
            }
            code::impact(&report, json)
        }
        Command::Deps { file, depth } => {
            let (nodes, files) = engram.dependencies(&file, depth).await?;
            // No dependencies, or no such file: the file's own nodes tell them apart.
            if nodes.is_empty() && engram.analyze_impact(&file, 1).await?.targets.is_empty() {
                return Err(code::not_in_graph(&file));
            }
            code::dependencies(&file, &files, json);
        }
        Command::Agent(command) => agent::run(&engram, command, json).await?,
        Command::Mcp => mcp::serve(&engram).await?,
        Command::Doctor => {
            let report = engram.check_integrity().await?;
            output::integrity(&report, backups, json);
            if !report.is_whole() {
                return Err(CliError::Engram(EngramError::Store(
                    engram_store::StoreError::Integrity(format!(
                        "{} problem(s) found; run `engram repair`",
                        report.problems.len()
                    )),
                )));
            }
        }
        Command::Repair { .. } => {
            let before = engram.check_integrity().await?;
            if !before.is_whole() && !before.keyword_index_only {
                return Err(CliError::Engram(EngramError::Store(
                    engram_store::StoreError::Integrity(format!(
                        "the database file itself is damaged ({}); rebuilding cannot fix it: \
                         run `engram repair --restore` to bring the newest backup back",
                        before.problems.join("; ")
                    )),
                )));
            }
            let rebuilt = engram.rebuild_keyword_index().await?;
            let after = engram.check_integrity().await?;
            output::repaired(&before, rebuilt, &after, json);
        }
        Command::Backup => {
            return Err(CliError::Usage(
                "`engram backup` copies the local file; a libSQL server keeps its own backups"
                    .into(),
            ))
        }
        Command::Demo
        | Command::Ui(_)
        | Command::Completions { .. }
        | Command::Hook
        | Command::HookHelper { .. }
        | Command::Install(_)
        | Command::Uninstall(_) => {
            return Err(CliError::Usage("handled before opening a database".into()))
        }
    }
    // The command is over: the uses of what it showed are written now (a failure is said,
    // never fatal: what the user asked for was done).
    if let Err(e) = engram.flush_uses().await {
        eprintln!(
            "warning: could not count the memories shown as used: {}",
            engram_cli::for_terminal(&e.to_string())
        );
    }
    Ok(())
}

/// The README's main job: a local database, a few memories, a search.
async fn demo(target: &Target, json: bool) -> Result<(), CliError> {
    let dir = std::env::temp_dir().join(format!("engram-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::Usage(format!("cannot create {}: {e}", dir.display())))?;
    let path = dir.join("engram.db");
    let path_text = path.to_string_lossy().into_owned();
    let db = LocalDatabase::open(&path_text)
        .await
        .map_err(EngramError::from)?;
    if !json {
        say!("engram demo: database {}", path.display());
    }
    let demo_target = Target {
        db: path_text.clone(),
        url: None,
        project: engram::DEFAULT_PROJECT.to_owned(),
        ..target.clone()
    };
    let engram = open::open(db, &demo_target).await?;
    if !json {
        match engram.embedding_model() {
            Some(model) => say!("embedding model: {model} (hybrid search)"),
            None if target.no_embed => say!("embedding disabled (--no-embed): keyword search"),
            None => {
                say!("no embedding model found (run scripts/fetch-model.sh): keyword search")
            }
        }
    }
    let memories = [
        (MemoryType::Gotcha, "Run `cargo sqlx prepare` after changing any query, or CI fails offline", &["sqlx", "ci"][..], &["src/db/queries.rs"][..]),
        (MemoryType::Decision, "Auth tokens are stored hashed with argon2id; never log the raw token", &["auth", "security"], &["src/auth/tokens.rs"]),
        (MemoryType::ErrorPattern, "`database is locked` in tests: each test needs its own temp database file", &["sqlite", "testing"], &["tests/common/mod.rs"]),
        (MemoryType::DeadEnd, "Mocking the HTTP client with a global hook raced in parallel tests; inject a transport instead", &["testing", "http"], &["src/http/client.rs"]),
        (MemoryType::WorkflowRecipe, "Adding an API route: handler in src/api, register in router.rs, then add an integration test", &["api"], &["src/api/router.rs"]),
    ];
    for (memory_type, content, tags, files) in memories {
        let mut memory = NewMemory::new(memory_type, content);
        memory.tags = tags.iter().map(|t| t.to_string()).collect();
        memory.related_files = files.iter().map(|f| f.to_string()).collect();
        let stored = engram.remember(memory).await?;
        if !json {
            say!("  remembered {} {}", &stored.id[..8], content);
        }
    }
    for query in [
        "why do my tests fail with database locked?",
        "how do I add a new api route",
    ] {
        let response = engram.search(&SearchQuery::new(query)).await?;
        if !json {
            say!("\nsearch: {query}");
        }
        output::search(&response, json, false);
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn read_input(path: &str) -> Result<String, CliError> {
    if path == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| CliError::Usage(format!("cannot read stdin: {e}")))?;
        Ok(text)
    } else {
        std::fs::read_to_string(path)
            .map_err(|e| CliError::Usage(format!("cannot read {path}: {e}")))
    }
}
