//! `engram observe replay`: recorded sessions (Claude Code transcripts, mini-swe-agent
//! trajectories) replayed through the observer into the database, printing what was inferred
//! and why.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, Subcommand};
use engram::observer::transcript::{self, Session};
use engram::observer::{Outcome, PathNormalizer, Scratchpad, SessionKind};
use engram::{Database, Engram, SessionReport};

use crate::CliError;

/// `engram observe …`
#[derive(Subcommand)]
pub enum ObserveCommand {
    /// Replay recorded sessions into the database and print what the observer inferred.
    Replay(ReplayArgs),
    /// Finalize, as cancelled, sessions that were checkpointed and never finished.
    Recover,
    /// Seed co-access statistics from the repository's history (files changed together),
    /// so the first agent sessions can confirm couplings instead of starting cold.
    Bootstrap {
        /// The repository (runs `git log --name-only` there).
        #[arg(long, default_value = ".")]
        repo: PathBuf,
        /// Read this saved `git log --name-only --format=commit:%H` output instead.
        #[arg(long)]
        git_log: Option<PathBuf>,
        /// Most recent commits to read.
        #[arg(long, default_value_t = 1000)]
        commits: u32,
    },
}

/// Options of `engram observe replay`.
#[derive(Args)]
pub struct ReplayArgs {
    /// Transcript (`.jsonl`) or trajectory (`.traj.json`) files, or folders holding them.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// How the sessions ended: success, failure, cancelled, or auto (a trajectory's
    /// `report.json` beside it decides; otherwise success).
    #[arg(long, default_value = "auto")]
    pub outcome: String,
    /// Extra absolute project roots to strip from paths (the transcript's own working
    /// directory and `/testbed` are always used).
    #[arg(long = "root")]
    pub roots: Vec<String>,
    /// Print every discarded observation, not only the counts per reason.
    #[arg(long)]
    pub discarded: bool,
}

/// One replayed session with its timings.
pub struct Replayed {
    /// The recording.
    pub session: Session,
    /// What finalize did.
    pub report: SessionReport,
    /// Microseconds spent in `observe` per event.
    pub event_micros: Vec<f64>,
    /// Microseconds spent in `finalize_session` (database included).
    pub finalize_micros: f64,
}

/// Recording files under `paths` (folders are searched recursively), sorted.
pub fn recordings(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CliError> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut stack = vec![path.clone()];
            while let Some(dir) = stack.pop() {
                let entries = std::fs::read_dir(&dir)
                    .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", dir.display())))?;
                for entry in entries.flatten() {
                    let p = entry.path();
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    if p.is_dir() {
                        stack.push(p);
                    } else if name.ends_with(".jsonl") || name.ends_with(".traj.json") {
                        out.push(p);
                    }
                }
            }
        } else if path.is_file() {
            out.push(path.clone());
        } else {
            return Err(CliError::Usage(format!(
                "no such file or folder: {}",
                path.display()
            )));
        }
    }
    out.sort();
    Ok(out)
}

/// The outcome of a recording: explicit, or from a `report.json` beside a trajectory.
fn outcome_of(path: &Path, requested: &str) -> Result<Outcome, CliError> {
    match requested {
        "success" => Ok(Outcome::Success),
        "failure" => Ok(Outcome::Failure),
        "cancelled" => Ok(Outcome::Cancelled),
        "auto" => {
            let report = path.parent().map(|d| d.join("report.json"));
            let resolved = report
                .and_then(|r| std::fs::read_to_string(r).ok())
                .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
                .and_then(|v| v.get("resolved").and_then(serde_json::Value::as_bool));
            Ok(match resolved {
                Some(false) => Outcome::Failure,
                _ => Outcome::Success,
            })
        }
        other => Err(CliError::Usage(format!(
            "unknown outcome {other:?}; one of success, failure, cancelled, auto"
        ))),
    }
}

/// Replays one recording file into `engram`.
pub async fn replay_file<D: Database>(
    engram: &Engram<D>,
    path: &Path,
    outcome: &str,
    roots: &[String],
) -> Result<Replayed, CliError> {
    replay_file_as(engram, path, outcome, roots, None).await
}

/// [`replay_file`], as a session of its own id with `suffix` appended when one is given
/// (the same work done again in another session).
pub async fn replay_file_as<D: Database>(
    engram: &Engram<D>,
    path: &Path,
    outcome: &str,
    roots: &[String],
    suffix: Option<&str>,
) -> Result<Replayed, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
    let session = transcript::parse(&text)
        .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
    let outcome = outcome_of(path, outcome)?;
    let normalizer = PathNormalizer::new(session.roots.iter().chain(roots).cloned());
    let id = format!("{}{}", session.id, suffix.unwrap_or(""));
    let mut pad = Scratchpad::new(id, SessionKind::Build, normalizer);
    let mut event_micros = Vec::with_capacity(session.events.len());
    for event in &session.events {
        let start = Instant::now();
        pad.observe(event);
        event_micros.push(start.elapsed().as_secs_f64() * 1e6);
    }
    let start = Instant::now();
    let report = engram.finalize_session(&pad, outcome).await?;
    let finalize_micros = start.elapsed().as_secs_f64() * 1e6;
    Ok(Replayed {
        session,
        report,
        event_micros,
        finalize_micros,
    })
}

/// `engram observe replay`.
pub async fn replay<D: Database>(
    engram: &Engram<D>,
    args: &ReplayArgs,
    json: bool,
) -> Result<(), CliError> {
    let files = recordings(&args.files)?;
    if files.is_empty() {
        return Err(CliError::Usage(
            "no .jsonl or .traj.json recordings found".into(),
        ));
    }
    let mut reports = Vec::new();
    for (i, path) in files.iter().enumerate() {
        if !json {
            eprintln!("[{}/{}] {}", i + 1, files.len(), path.display());
        }
        let replayed = replay_file(engram, path, &args.outcome, &args.roots).await?;
        if json {
            reports.push(serde_json::json!({
                "file": path.display().to_string(),
                "format": replayed.session.format,
                "skipped": replayed.session.skipped,
                "report": replayed.report,
            }));
        } else {
            print_report(&replayed, args.discarded);
        }
    }
    if json {
        say!("{}", serde_json::Value::Array(reports));
    }
    Ok(())
}

fn print_report(replayed: &Replayed, all_discarded: bool) {
    let r = &replayed.report;
    say!(
        "session {} ({:?}, {} events, outcome {}){}",
        r.session_id,
        replayed.session.format,
        r.events,
        r.outcome.as_str(),
        if r.already_finalized {
            " — already finalized, nothing written"
        } else {
            ""
        }
    );
    if !replayed.session.skipped.is_empty() {
        say!(
            "  skipped {} unreadable lines",
            replayed.session.skipped.len()
        );
    }
    let hot: Vec<String> = r
        .hot_files
        .iter()
        .take(5)
        .map(|h| format!("{} (r{} e{})", h.path, h.reads, h.edits))
        .collect();
    say!(
        "  hot files: {}",
        if hot.is_empty() {
            "none".to_owned()
        } else {
            hot.join(", ")
        }
    );
    if !r.triggers.is_empty() {
        let fired: Vec<String> = r
            .triggers
            .iter()
            .map(|t| format!("{} at step {}", t.signal.as_str(), t.step))
            .collect();
        say!("  early triggers: {}", fired.join(", "));
    }
    for m in &r.promoted {
        say!(
            "  + [{}] {} {:.2}{} evidence {} at steps {:?}: {}",
            m.signal.map_or("observer", |s| s.as_str()),
            m.memory_type.as_str(),
            m.confidence,
            if m.contaminated { " contaminated" } else { "" },
            m.evidence,
            m.evidence_steps,
            m.content
        );
    }
    if let Some(record) = &r.record {
        say!("  record: {}", record.content.replace('\n', "\n          "));
    }
    if all_discarded {
        for d in &r.discarded {
            say!("  - [{}] {}: {}", d.class.as_str(), d.key, d.reason);
        }
    } else if !r.discarded.is_empty() {
        let mut reasons: Vec<(String, usize)> = Vec::new();
        for d in &r.discarded {
            let reason = d.reason.split(':').next().unwrap_or("").to_owned();
            match reasons.iter_mut().find(|(r, _)| *r == reason) {
                Some((_, n)) => *n += 1,
                None => reasons.push((reason, 1)),
            }
        }
        let text: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
        say!("  discarded: {} (--discarded lists them)", text.join(", "));
    }
}

/// `engram observe bootstrap`.
pub async fn bootstrap<D: Database>(
    engram: &Engram<D>,
    repo: &Path,
    git_log: Option<&Path>,
    commits: u32,
    json: bool,
) -> Result<(), CliError> {
    let log = match git_log {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?,
        None => {
            let output = std::process::Command::new("git")
                .arg("-C")
                .arg(repo)
                .args(["log", "--no-merges", "--name-only", "--format=commit:%H"])
                .arg(format!("-n{commits}"))
                .output()
                .map_err(|e| CliError::Usage(format!("cannot run git: {e}")))?;
            if !output.status.success() {
                return Err(CliError::Usage(format!(
                    "git log failed in {}: {}",
                    repo.display(),
                    String::from_utf8_lossy(&output.stderr).trim()
                )));
            }
            String::from_utf8_lossy(&output.stdout).into_owned()
        }
    };
    let pairs = engram.bootstrap_from_git_log(&log).await?;
    if json {
        say!("{}", serde_json::json!({ "pairs": pairs }));
    } else {
        say!("recorded {pairs} co-commit pairs");
    }
    Ok(())
}

/// `engram observe recover`.
pub async fn recover<D: Database>(engram: &Engram<D>, json: bool) -> Result<(), CliError> {
    let reports = engram.recover_sessions().await?;
    if json {
        say!("{}", serde_json::to_string(&reports).unwrap_or_default());
    } else if reports.is_empty() {
        say!("no unfinished sessions");
    } else {
        for r in reports {
            say!(
                "recovered session {} as cancelled: {} memories kept",
                r.session_id,
                r.promoted.len()
            );
        }
    }
    Ok(())
}
