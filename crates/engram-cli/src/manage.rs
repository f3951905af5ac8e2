//! The person's commands: `engram list`, `show`, `edit`, `confirm`, `flag`, `restore`, `pin`,
//! `unpin`, `teach`, `purge` and `reset`. Ids may be given by their first 8 characters,
//! as `list` prints them.

use std::io::{BufRead, IsTerminal, Write};

use clap::{Args, Subcommand};
use engram::{
    Database, Engram, ListRequest, Memory, MemoryFilter, MemoryScope, MemorySource, MemoryType,
    MemoryUpdate, SortKey, Status, Taught,
};

use crate::CliError;

/// The person's commands on memories.
#[derive(Subcommand)]
pub enum ManageCommand {
    /// List memories, newest first, with filters; `--count` prints how many match.
    List(ListArgs),
    /// Show one memory with every field and its history.
    Show {
        /// The memory id (or its first 8 characters).
        id: String,
    },
    /// Change a memory's text, type, tags, files, modules, scope or confidence.
    Edit(EditArgs),
    /// Confirm a memory is right (user-verified, review cleared).
    Confirm {
        /// The memory id (or its first 8 characters).
        id: String,
    },
    /// Say a memory is wrong: it is retired and counted against the signal that made it.
    Flag {
        /// The memory id (or its first 8 characters).
        id: String,
        /// Why it is wrong.
        #[arg(long)]
        reason: Option<String>,
    },
    /// Review a session: what memory it was shown, what it learned that waits for you (and
    /// what needs no review), and the tokens memory saved it. Judge each with `confirm`,
    /// `edit --confirm` or `flag`.
    Review {
        /// The session (default: the last one the observer finalized).
        #[arg(long)]
        session: Option<String>,
        /// Show every part, whatever the trust level condenses (level 3 shows what waits
        /// for review only, level 4 nothing).
        #[arg(long)]
        all: bool,
    },
    /// Show the project's trust level, or set it: 1 cautious (inject memories of
    /// confidence 0.80 and up; every new memory waits for review), 2 standard (0.65; the
    /// default), 3 confident (0.55; the review shows what waits only), 4 autonomous (0.45;
    /// new memories count as confirmed, the review shows nothing unless `--all`).
    Trust {
        /// The level to set, 1 to 4.
        #[arg(value_parser = clap::value_parser!(u8).range(1..=4))]
        level: Option<u8>,
    },
    /// The project's memory health: a score from 0 to 100 with its parts, memories by
    /// type and source, growth by week, and the memories about each folder of the code.
    Health,
    /// Make a retired memory (forgotten, flagged, superseded or pruned) live again.
    Restore {
        /// The memory id (or its first 8 characters).
        id: String,
    },
    /// Pin a memory: it never decays and is never pruned.
    Pin {
        /// The memory id (or its first 8 characters).
        id: String,
    },
    /// Unpin a memory.
    Unpin {
        /// The memory id (or its first 8 characters).
        id: String,
    },
    /// Teach engram something yourself (a confirmed `user_taught` memory).
    Teach {
        /// What to remember.
        content: String,
        /// Its type.
        #[arg(long = "type", short = 't', default_value = "preference", value_parser = parse_type)]
        memory_type: MemoryType,
        /// Files it is about (repeatable or comma-separated).
        #[arg(long, value_delimiter = ',')]
        file: Vec<String>,
    },
    /// Delete a memory for good (its history is kept).
    Purge {
        /// The memory id (or its first 8 characters).
        id: String,
    },
    /// Delete every memory of the project for good (their history is kept). Asks first
    /// unless --yes.
    Reset {
        /// Do not ask.
        #[arg(long)]
        yes: bool,
    },
}

/// `engram list`.
#[derive(Args)]
pub struct ListArgs {
    /// Only these types (repeatable).
    #[arg(long = "type", short = 't', value_parser = parse_type)]
    types: Vec<MemoryType>,
    /// Only these sources (repeatable): agent_explicit, observer_inferred, user_taught, …
    #[arg(long = "source", value_parser = parse_source)]
    sources: Vec<MemorySource>,
    /// Only these scopes (repeatable).
    #[arg(long = "scope", value_parser = parse_scope)]
    scopes: Vec<MemoryScope>,
    /// About this file (repeatable).
    #[arg(long = "file")]
    files: Vec<String>,
    /// About this module (repeatable).
    #[arg(long = "module")]
    modules: Vec<String>,
    /// With this tag (repeatable).
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// Containing this text.
    #[arg(long)]
    text: Option<String>,
    /// Only those waiting for review.
    #[arg(long)]
    needs_review: bool,
    /// Only stale ones (the code they cite changed).
    #[arg(long)]
    stale: bool,
    /// Only superseded ones.
    #[arg(long)]
    superseded: bool,
    /// Only pinned ones.
    #[arg(long)]
    pinned: bool,
    /// Only confirmed ones.
    #[arg(long)]
    verified: bool,
    /// live (default), retired or all.
    #[arg(long, value_parser = ["live", "retired", "all"])]
    status: Option<String>,
    /// Stored on or after this day or time (2026-11-30 or RFC 3339).
    #[arg(long)]
    since: Option<String>,
    /// Order: created (default), updated, used or confidence.
    #[arg(long, default_value = "created", value_parser = ["created", "updated", "used", "confidence"])]
    sort: String,
    /// Oldest (lowest) first.
    #[arg(long)]
    ascending: bool,
    /// Memories per page (1-500).
    #[arg(long, short = 'n', default_value_t = 50)]
    limit: u32,
    /// The page after this cursor (printed at the end of the previous page).
    #[arg(long)]
    cursor: Option<String>,
    /// Print how many match instead.
    #[arg(long)]
    count: bool,
}

/// `engram edit`.
#[derive(Args)]
pub struct EditArgs {
    /// The memory id (or its first 8 characters).
    id: String,
    /// New text.
    #[arg(long)]
    content: Option<String>,
    /// New type.
    #[arg(long = "type", value_parser = parse_type)]
    memory_type: Option<MemoryType>,
    /// New tags, replacing the old (comma-separated).
    #[arg(long, value_delimiter = ',')]
    tags: Option<Vec<String>>,
    /// New files, replacing the old (comma-separated).
    #[arg(long, value_delimiter = ',')]
    files: Option<Vec<String>>,
    /// New confidence (0-1).
    #[arg(long)]
    confidence: Option<f64>,
    /// Also confirm it (a correction).
    #[arg(long)]
    confirm: bool,
}

fn parse_type(text: &str) -> Result<MemoryType, String> {
    MemoryType::parse(text).ok_or_else(|| format!("unknown memory type {text:?}"))
}

fn parse_source(text: &str) -> Result<MemorySource, String> {
    MemorySource::parse(text).ok_or_else(|| format!("unknown source {text:?}"))
}

fn parse_scope(text: &str) -> Result<MemoryScope, String> {
    MemoryScope::parse(text).ok_or_else(|| format!("unknown scope {text:?}"))
}

pub async fn run<D: Database>(
    engram: &Engram<D>,
    command: ManageCommand,
    json: bool,
) -> Result<(), CliError> {
    match command {
        ManageCommand::List(args) => list(engram, &args, json).await,
        ManageCommand::Show { id } => {
            let id = engram.resolve_id(&id).await?;
            let memory = engram
                .get_any(&id)
                .await?
                .ok_or_else(|| CliError::NotFound(id.clone()))?;
            let history = engram.history(&id).await?;
            if json {
                say!(
                    "{}",
                    serde_json::json!({ "memory": memory, "history": history })
                );
            } else {
                show(&memory);
                say!("history:");
                engram_cli::output::history(&history, false);
            }
            Ok(())
        }
        ManageCommand::Edit(args) => {
            let update = MemoryUpdate {
                content: args.content,
                memory_type: args.memory_type,
                tags: args.tags,
                related_files: args.files,
                confidence: args.confidence,
                ..MemoryUpdate::default()
            };
            if update == MemoryUpdate::default() && !args.confirm {
                return Err(CliError::Usage(
                    "say what to change: --content, --type, --tags, --files or --confidence".into(),
                ));
            }
            let memory = match (update == MemoryUpdate::default(), args.confirm) {
                (true, _) => engram.confirm(&args.id).await?,
                (false, true) => engram.correct(&args.id, &update).await?,
                (false, false) => engram.update(&args.id, &update).await?,
            };
            done("edited", &memory, json);
            Ok(())
        }
        ManageCommand::Confirm { id } => {
            done("confirmed", &engram.confirm(&id).await?, json);
            Ok(())
        }
        ManageCommand::Flag { id, reason } => {
            done(
                "flagged wrong and retired",
                &engram.flag_wrong(&id, reason.as_deref()).await?,
                json,
            );
            Ok(())
        }
        ManageCommand::Review { session, all } => {
            let review = engram.session_review(session.as_deref()).await?;
            if json {
                say!("{}", serde_json::to_string(&review).unwrap_or_default());
            } else {
                match &review {
                    Some(review) => print_review(review, all),
                    None => say!("no session to review yet"),
                }
            }
            Ok(())
        }
        ManageCommand::Trust { level } => trust(engram, level, json).await,
        ManageCommand::Health => {
            let report = engram.health().await?;
            if json {
                say!("{}", serde_json::to_string(&report).unwrap_or_default());
            } else {
                print_health(&report);
            }
            Ok(())
        }
        ManageCommand::Restore { id } => {
            done("restored", &engram.restore(&id).await?, json);
            Ok(())
        }
        ManageCommand::Pin { id } => {
            done("pinned", &engram.pin(&id, true).await?, json);
            Ok(())
        }
        ManageCommand::Unpin { id } => {
            done("unpinned", &engram.pin(&id, false).await?, json);
            Ok(())
        }
        ManageCommand::Teach {
            content,
            memory_type,
            file,
        } => {
            let stored = engram
                .teach(Taught {
                    content,
                    memory_type: Some(memory_type),
                    related_files: file,
                    tags: Vec::new(),
                })
                .await?;
            engram_cli::output::remembered(&stored, json);
            Ok(())
        }
        ManageCommand::Purge { id } => {
            let id = engram.resolve_id(&id).await?;
            engram.purge(&id).await?;
            if json {
                say!("{}", serde_json::json!({ "purged": id }));
            } else {
                say!(
                    "purged {id} (its history is kept: engram history {})",
                    short(&id)
                );
            }
            Ok(())
        }
        ManageCommand::Reset { yes } => reset(engram, yes, json).await,
    }
}

async fn list<D: Database>(
    engram: &Engram<D>,
    args: &ListArgs,
    json: bool,
) -> Result<(), CliError> {
    let flag = |set: bool| set.then_some(true);
    let filter = MemoryFilter {
        types: args.types.clone(),
        sources: args.sources.clone(),
        scopes: args.scopes.clone(),
        files: args.files.clone(),
        modules: args.modules.clone(),
        tags: args.tags.clone(),
        text: args.text.clone(),
        needs_review: flag(args.needs_review),
        stale: flag(args.stale),
        superseded: flag(args.superseded),
        pinned: flag(args.pinned),
        user_verified: flag(args.verified),
        status: args.status.as_deref().map(|s| match s {
            "retired" => Status::Retired,
            "all" => Status::All,
            _ => Status::Live,
        }),
        created_after: args.since.as_deref().map(day_or_time),
        ..MemoryFilter::default()
    };
    if args.count {
        let count = engram.count(&filter).await?;
        if json {
            say!("{}", serde_json::json!({ "count": count }));
        } else {
            say!("{count}");
        }
        return Ok(());
    }
    let request = ListRequest {
        filter,
        sort: match args.sort.as_str() {
            "updated" => SortKey::Updated,
            "used" => SortKey::Used,
            "confidence" => SortKey::Confidence,
            _ => SortKey::Created,
        },
        ascending: args.ascending,
        limit: Some(args.limit),
        cursor: args.cursor.clone(),
    };
    let page = engram.list(&request).await?;
    if json {
        say!("{}", serde_json::to_string(&page).unwrap_or_default());
        return Ok(());
    }
    for memory in &page.memories {
        let text: String = memory.content.replace('\n', " ").chars().take(90).collect();
        say!(
            "{} {:<16} {:.2} {}{}",
            short(&memory.id),
            memory.memory_type.as_str(),
            memory.confidence,
            marks(memory),
            engram_cli::for_terminal(&text)
        );
    }
    if let Some(cursor) = &page.next_cursor {
        say!("more: engram list --cursor {cursor}");
    }
    Ok(())
}

/// `2026-11-30` as the start of that day; anything else as given.
fn day_or_time(text: &str) -> String {
    if text.len() == 10 && text.as_bytes().get(4) == Some(&b'-') {
        format!("{text}T00:00:00.000Z")
    } else {
        text.to_owned()
    }
}

/// The flags worth seeing in a listing.
fn marks(memory: &Memory) -> String {
    let mut marks = String::new();
    for (set, mark) in [
        (memory.flags.pinned, "pinned "),
        (memory.flags.user_verified, "verified "),
        (memory.flags.needs_review, "review "),
        (memory.stale_reason.is_some(), "stale "),
        (memory.superseded_by.is_some(), "superseded "),
        (
            memory.deprecated && memory.superseded_by.is_none(),
            "retired ",
        ),
    ] {
        if set {
            marks.push_str(mark);
        }
    }
    marks
}

fn short(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

fn show(memory: &Memory) {
    engram_cli::output::memory(memory, false);
    let mut lines = vec![format!(
        "scope {}, visibility {}",
        memory.scope, memory.visibility
    )];
    if !memory.related_modules.is_empty() {
        lines.push(format!("modules: {}", memory.related_modules.join(", ")));
    }
    lines.push(format!(
        "used {} times, last {}; said {} times",
        memory.access_count, memory.last_accessed_at, memory.occurrences
    ));
    let marks = marks(memory);
    if !marks.is_empty() {
        lines.push(format!("state: {}", marks.trim()));
    }
    if let Some(reason) = &memory.stale_reason {
        lines.push(format!("stale: {reason}"));
    }
    if let Some(by) = &memory.superseded_by {
        lines.push(format!("superseded by {by}"));
    }
    if let Some(citation) = &memory.citation_text {
        lines.push(format!("citation: {citation}"));
    }
    for line in lines {
        say!("{}", engram_cli::for_terminal(&line));
    }
}

fn done(what: &str, memory: &Memory, json: bool) {
    if json {
        say!("{}", serde_json::to_string(memory).unwrap_or_default());
    } else {
        say!("{what} {}", short(&memory.id));
    }
}

async fn reset<D: Database>(engram: &Engram<D>, yes: bool, json: bool) -> Result<(), CliError> {
    if !yes {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return Err(CliError::Usage(
                "reset deletes every memory of the project for good; pass --yes to do it without a terminal"
                    .into(),
            ));
        }
        let count = engram
            .count(&MemoryFilter {
                status: Some(Status::All),
                ..MemoryFilter::default()
            })
            .await?;
        eprint!(
            "delete all {count} memories of project {} for good? type the project name to confirm: ",
            engram.project_id()
        );
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        stdin
            .lock()
            .read_line(&mut answer)
            .map_err(|e| CliError::Usage(format!("no answer: {e}")))?;
        if answer.trim() != engram.project_id() {
            return Err(CliError::Usage("not confirmed; nothing was deleted".into()));
        }
    }
    let gone = engram.reset().await?;
    if json {
        say!("{}", serde_json::json!({ "deleted": gone }));
    } else {
        say!("deleted {gone} memories (their history is kept)");
    }
    Ok(())
}

/// `engram health` as text: the score, each part, the counts and the least covered folders.
fn print_health(report: &engram::HealthReport) {
    say!(
        "health {} / 100 ({} live memories)",
        report.health.score,
        report.live
    );
    for part in &report.health.parts {
        say!(
            "  {:<18} {:>4.0}%  (weight {:.2})  {}",
            part.name,
            part.share * 100.0,
            part.weight,
            part.detail
        );
    }
    let listed = |counts: &std::collections::BTreeMap<String, u64>| {
        counts
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    say!("by type: {}", listed(&report.by_type));
    say!("by source: {}", listed(&report.by_source));
    for week in &report.growth {
        say!("  {}  +{} -{}", week.week, week.added, week.retired);
    }
    let uncovered: Vec<&str> = report
        .folders
        .iter()
        .filter(|f| f.memories == 0)
        .map(|f| f.folder.as_str())
        .take(10)
        .collect();
    if !uncovered.is_empty() {
        say!("folders with no memory yet: {}", uncovered.join(", "));
    }
}

/// `engram review` as text: each part with the memories' short ids, to judge them by, as
/// much of it as the trust level shows (everything with `all`).
fn print_review(review: &engram::SessionReview, all: bool) {
    use engram::ReviewDetail;
    let detail = if all {
        ReviewDetail::Full
    } else {
        review.trust.review_detail
    };
    if detail == ReviewDetail::Suppressed {
        say!(
            "session {}: nothing to show at trust level {} (engram review --all shows it)",
            review.session_id,
            review.trust.level
        );
        return;
    }
    say!(
        "session {}: memory saved about {} tokens of reading",
        review.session_id,
        review.estimated_tokens_saved
    );
    let part = |title: &str, memories: &[Memory]| {
        if memories.is_empty() {
            return;
        }
        say!("{title} ({})", memories.len());
        for memory in memories {
            say!(
                "  {} [{}] {}",
                short(&memory.id),
                memory.memory_type,
                memory.content
            );
        }
    };
    let full = detail == ReviewDetail::Full;
    if full {
        part("applied", &review.applied);
    }
    if !review.needs_review.is_empty() {
        say!(
            "new, waiting for review (confirm, edit --confirm or flag) ({})",
            review.needs_review.len()
        );
        // Each with why it waits, so a person knows what confirming it settles.
        for memory in &review.needs_review {
            say!(
                "  {} [{}] {}",
                short(&memory.id),
                memory.memory_type,
                memory.content
            );
            let why = if memory.flags.needs_review {
                memory.review_reason()
            } else {
                format!(
                    "at trust level {} every new memory waits for you",
                    review.trust.level
                )
            };
            say!("    waits because {why}");
        }
    }
    if full {
        part("new, confirmed", &review.auto_confirmed);
        part("new", &review.learned);
    }
    if let Some(level) = review.suggested_level {
        say!(
            "you flagged {} of this session's memories wrong: `engram trust {}` injects only \
more confident ones",
            review.flagged_wrong,
            level.number()
        );
    }
}

/// `engram trust [LEVEL]`: shows the project's trust level, or sets it (unless the
/// project's config file sets it).
async fn trust<D: Database>(
    engram: &Engram<D>,
    level: Option<u8>,
    json: bool,
) -> Result<(), CliError> {
    let setting = match level {
        Some(_)
            if engram_cli::config::ProjectConfig::read(&project_root())?
                .trust_level
                .is_some() =>
        {
            return Err(CliError::Usage(
                "the project's .engram/config.toml sets trust_level; change it there".into(),
            ))
        }
        Some(level) => {
            let level =
                engram::TrustLevel::from_number(level.into()).map_err(engram::EngramError::from)?;
            engram.set_trust_level(level).await?
        }
        None => engram.trust_level().await?,
    };
    if json {
        say!("{}", serde_json::to_string(&setting).unwrap_or_default());
    } else {
        say!(
            "trust level {}{}: memories of confidence {:.2} and up are injected unasked",
            setting.level,
            if setting.set { "" } else { ", the default" },
            setting.injection_threshold
        );
    }
    Ok(())
}

/// The project's root, found from the current folder.
fn project_root() -> std::path::PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    engram_cli::hook::project_root(&cwd)
}
