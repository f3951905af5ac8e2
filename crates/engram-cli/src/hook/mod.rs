//! `engram hook`: Claude Code's command hooks. Reads the payload from stdin, finds the
//! project's database from the payload's `cwd`, lets engram handle the event and prints
//! Claude Code's hook JSON when there is context to add.
//!
//! A hook must never break the agent: whatever fails — the payload, the database, the
//! model, the time — the process prints nothing, exits 0 and appends the event and the
//! error (secrets redacted) to `.engram/hooks.log`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use engram::agent_loop::hook::{
    context_output, is_short_prompt, HookEvent, HookPayload, MAX_AGENT_TRANSCRIPT_BYTES,
    MAX_TOOL_OUTPUT_BYTES,
};
use engram_libsql::LocalDatabase;

use crate::{open, CliError, Target};

#[cfg(unix)]
pub mod helper;

/// Largest payload read from stdin; a larger one is cut (and then fails to decode, which
/// is logged). Tool outputs are capped far below this once decoded.
pub const MAX_PAYLOAD_BYTES: u64 = 32 * 1024 * 1024;
/// The hard cap on one hook: well under Claude Code's 60 s default, so a slow database
/// never reaches the agent as a hook timeout.
pub const HOOK_TIME_CAP: Duration = Duration::from_secs(10);
/// How long one statement waits for another writer's lock inside a hook: four attempts
/// (the first and three retries) and their delays fit inside [`HOOK_TIME_CAP`], so a lock
/// that outlasts them all is logged as the lock it is.
const HOOK_BUSY_TIMEOUT: Duration = Duration::from_secs(2);
/// How much of a transcript's end a short prompt's hook reads for the user's last turns.
const TRANSCRIPT_TAIL_BYTES: u64 = 64 * 1024;
/// A write's retries inside a hook (the default backoff would outlast the cap).
const HOOK_RETRY_DELAYS_MS: [u32; 3] = [100, 300, 900];
/// The folder, at the project's root, that holds its database and the hook log.
pub const ENGRAM_DIR: &str = ".engram";
/// The hook log's name inside [`ENGRAM_DIR`].
pub const HOOK_LOG: &str = "hooks.log";

/// Runs one hook: always succeeds as far as Claude Code can tell. The project's resident
/// helper answers when one runs (nothing to open or load); otherwise this process does.
pub async fn run(target: &Target) {
    let mut input = String::new();
    let read = std::io::stdin()
        .take(MAX_PAYLOAD_BYTES)
        .read_to_string(&mut input);
    let fallback_dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    if let Err(e) = read {
        log_failure(
            &fallback_dir,
            "(unread)",
            "",
            &format!("cannot read stdin: {e}"),
        );
        return;
    }
    let started = std::time::Instant::now();
    #[cfg(unix)]
    if let Some(answered) = helper::ask(target, &input, &fallback_dir) {
        print_line(
            &answered.root,
            &answered.line,
            &answered.event,
            &answered.session,
        );
        return;
    }
    // A helper that did not answer has used part of the cap.
    let cap = HOOK_TIME_CAP.saturating_sub(started.elapsed());
    if let Some(answer) = handle(target, &input, &fallback_dir, None, cap).await {
        print_line(&answer.root, &answer.line, &answer.event, &answer.session);
    }
}

/// What one payload's hook prints, and where to log a failure to print it.
pub(crate) struct Printed {
    /// The project's root.
    pub root: PathBuf,
    /// Claude Code's hook JSON (empty: nothing to print).
    pub line: String,
    /// The event, for the log.
    pub event: String,
    /// The session, for the log.
    pub session: String,
}

fn print_line(root: &Path, line: &str, event: &str, session: &str) {
    if line.is_empty() {
        return;
    }
    if let Err(e) = writeln!(std::io::stdout(), "{line}") {
        log_failure(root, event, session, &format!("cannot print: {e}"));
    }
}

/// Decodes one payload and answers it (with `resident`'s engram when it is the project's)
/// within `cap`; what to print, if anything. Every failure is logged, never returned.
pub(crate) async fn handle(
    target: &Target,
    input: &str,
    fallback_dir: &Path,
    resident: Option<&Resident>,
    cap: Duration,
) -> Option<Printed> {
    let payload = match HookPayload::from_json(input) {
        Ok(payload) => payload,
        Err(e) => {
            let root = project_root(fallback_dir);
            log_failure(&root, "(undecodable)", "", &e.to_string());
            return None;
        }
    };
    let root = payload_root(&payload, fallback_dir);
    let Some(event) = payload.event() else {
        let error = format!(
            "unknown event {:?}: engram handles none such",
            payload.hook_event_name
        );
        log_failure(&root, &payload.hook_event_name, &payload.session_id, &error);
        return None;
    };
    if input.len() > 2 * MAX_TOOL_OUTPUT_BYTES {
        let note = format!(
            "a payload of {} bytes: its tool output is cut to its first {} KB",
            input.len(),
            MAX_TOOL_OUTPUT_BYTES / 1024
        );
        log_failure(&root, event.name(), &payload.session_id, &note);
    }
    // PreToolUse has nothing to add and must cost nothing.
    if event == HookEvent::PreToolUse {
        return None;
    }
    let answering = answer(target, &payload, event, &root, resident);
    let line = match tokio::time::timeout(cap, answering).await {
        Ok(Ok(Some(context))) => context_output(event, &context),
        Ok(Ok(None)) => return None,
        Ok(Err(e)) => {
            log_failure(&root, event.name(), &payload.session_id, &describe(&e));
            return None;
        }
        Err(_) => {
            let error = format!(
                "gave up after {:.1} s (the hook's time cap)",
                cap.as_secs_f64()
            );
            log_failure(&root, event.name(), &payload.session_id, &error);
            return None;
        }
    };
    Some(Printed {
        root,
        line,
        event: event.name().to_owned(),
        session: payload.session_id.clone(),
    })
}

/// A project's engram kept open by its resident helper (the model loaded once).
pub(crate) struct Resident {
    /// The project's root.
    pub root: PathBuf,
    /// Its engram.
    pub engram: engram::Engram<LocalDatabase>,
}

/// Opens the project's engram and lets it handle the event; the context to add, if any.
async fn answer(
    target: &Target,
    payload: &HookPayload,
    event: HookEvent,
    root: &Path,
    resident: Option<&Resident>,
) -> Result<Option<String>, CliError> {
    let roots = vec![root.to_string_lossy().into_owned()];
    let enriched;
    let short = payload.prompt_text().is_some_and(is_short_prompt);
    let payload = if event == HookEvent::UserPromptSubmit && short {
        enriched = HookPayload {
            transcript_tail: payload.transcript_path.as_deref().and_then(transcript_tail),
            ..payload.clone()
        };
        &enriched
    } else if event == HookEvent::SubagentStop {
        enriched = HookPayload {
            agent_transcript: agent_transcript(root, payload),
            ..payload.clone()
        };
        &enriched
    } else {
        payload
    };
    if let Some(resident) = resident.filter(|r| r.root == root && target.url.is_none()) {
        return Ok(resident.engram.answer_hook(payload, &roots).await?.context);
    }
    let mut target = hook_target(target);
    // Tool events and turn ends need no model: they log, look up files and checkpoint.
    if !matches!(
        event,
        HookEvent::SessionStart | HookEvent::UserPromptSubmit | HookEvent::SessionEnd
    ) {
        target.no_embed = true;
    }
    let answer = match &target.url {
        Some(url) => {
            let db = engram_hrana::HranaClient::new(
                engram_hrana::ReqwestTransport::new(),
                url,
                target.auth_token.clone(),
            );
            let (engram, model_error) = open::open_keyword_fallback(db, &target).await?;
            note_model_error(root, payload, model_error);
            engram.answer_hook(payload, &roots).await?
        }
        None => {
            let (engram, model_error) = open_project(&target, root).await?;
            note_model_error(root, payload, model_error);
            engram.answer_hook(payload, &roots).await?
        }
    };
    Ok(answer.context)
}

/// The last [`TRANSCRIPT_TAIL_BYTES`] of a transcript, from its first whole line on; none
/// when it cannot be read.
fn transcript_tail(path: &str) -> Option<String> {
    use std::io::Seek;
    let mut file = std::fs::File::open(path).ok()?;
    let length = file.metadata().ok()?.len();
    let start = length.saturating_sub(TRANSCRIPT_TAIL_BYTES);
    file.seek(std::io::SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.take(TRANSCRIPT_TAIL_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let whole = if start > 0 {
        text.split_once('\n').map_or("", |(_, rest)| rest)
    } else {
        &text
    };
    Some(whole.to_owned())
}

/// A stopped subagent's transcript, up to [`MAX_AGENT_TRANSCRIPT_BYTES`]; one that cannot
/// be read is logged (the subagent's calls the hooks saw are still learned from).
fn agent_transcript(root: &Path, payload: &HookPayload) -> Option<String> {
    let path = payload.agent_transcript_path.as_deref()?;
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|file| {
        file.take(MAX_AGENT_TRANSCRIPT_BYTES)
            .read_to_end(&mut bytes)
    });
    if let Err(e) = read {
        let error = format!("cannot read the subagent's transcript {path}: {e}");
        log_failure(root, "SubagentStop", &payload.session_id, &error);
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The flags as a hook uses them: writes retried within the hook's time cap.
pub(crate) fn hook_target(target: &Target) -> Target {
    let mut target = target.clone();
    target.retry_delays_ms = Some(
        target
            .retry_delays_ms
            .take()
            .unwrap_or_else(|| HOOK_RETRY_DELAYS_MS.to_vec()),
    );
    target
}

/// Opens the project's database file as hooks use it (a short wait for another writer's
/// lock) and engram on it; a model that would not load comes back beside it.
pub(crate) async fn open_project(
    target: &Target,
    root: &Path,
) -> Result<(engram::Engram<LocalDatabase>, Option<CliError>), CliError> {
    let path = database_path(root);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| CliError::Usage(format!("cannot create {}: {e}", parent.display())))?;
    }
    let mut attempt = 0;
    loop {
        let db = LocalDatabase::open(&path.to_string_lossy())
            .await
            .map_err(engram::EngramError::from)?;
        db.set_busy_timeout(HOOK_BUSY_TIMEOUT)
            .await
            .map_err(engram::EngramError::from)?;
        match open::open_keyword_fallback(db, target).await {
            // Two processes opening a new database both migrate it; under load one can
            // wait out its lock timeout on the other's migration. Once more, then it is a
            // held lock and is logged as one.
            Err(CliError::Engram(e)) if e.code().is_transient() && attempt < OPEN_RETRIES => {
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// How many times a hook opens the database again after a lock timeout.
const OPEN_RETRIES: u32 = 1;

/// A model that would not load is logged; the hook goes on keyword-only.
pub(crate) fn note_model_error(root: &Path, payload: &HookPayload, error: Option<CliError>) {
    if let Some(error) = error {
        let note = format!("{}; answered keyword-only", describe(&error));
        log_failure(root, &payload.hook_event_name, &payload.session_id, &note);
    }
}

/// The project a payload is about: the root above its `cwd` (else above `fallback_dir`,
/// the hook process's own folder).
pub(crate) fn payload_root(payload: &HookPayload, fallback_dir: &Path) -> PathBuf {
    let cwd = payload
        .cwd
        .as_deref()
        .map(Path::new)
        .unwrap_or(fallback_dir);
    project_root(cwd)
}

/// The project a path belongs to: the nearest folder above it (itself included) that has
/// an `.engram` folder, else the nearest that is a git work tree, else the path itself —
/// so a hook run in a subfolder never makes a database of its own there.
pub fn project_root(start: &Path) -> PathBuf {
    let ancestors = || start.ancestors();
    ancestors()
        .find(|dir| dir.join(ENGRAM_DIR).is_dir())
        .or_else(|| ancestors().find(|dir| dir.join(".git").exists()))
        .unwrap_or(start)
        .to_path_buf()
}

/// The project's database file.
pub fn database_path(root: &Path) -> PathBuf {
    root.join(ENGRAM_DIR).join("engram.db")
}

/// The settings files under which `engram hook` is installed for the project at `root`:
/// its `.claude/settings.json` and `.claude/settings.local.json`, and the user's.
pub fn installed_in(root: &Path) -> Vec<PathBuf> {
    let mut candidates = vec![
        root.join(".claude/settings.json"),
        root.join(".claude/settings.local.json"),
    ];
    if let Some(home) = std::env::var_os("HOME") {
        candidates.push(PathBuf::from(home).join(".claude/settings.json"));
    }
    candidates
        .into_iter()
        .filter(|path| {
            std::fs::read_to_string(path)
                .is_ok_and(|text| crate::install::claude_code::runs_engram_hook(&text))
        })
        .collect()
}

/// The project's resident hook helpers that answer: (process id, started at).
pub fn helpers(root: &Path) -> Vec<(u32, String)> {
    #[cfg(unix)]
    return helper::running(root);
    #[cfg(not(unix))]
    return Vec::new();
}

/// Runs the resident hook helper for the project at `root` (Unix only; elsewhere every
/// hook answers itself).
pub async fn serve_helper(target: &Target, root: &Path) -> Result<(), CliError> {
    #[cfg(unix)]
    return helper::serve(target, root).await;
    #[cfg(not(unix))]
    return Err(CliError::Usage(
        "the resident helper needs Unix sockets".into(),
    ));
}

/// The last `n` lines of the project's hook log.
pub fn recent_errors(root: &Path, n: usize) -> Vec<String> {
    let text = std::fs::read_to_string(root.join(ENGRAM_DIR).join(HOOK_LOG)).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| (*l).to_owned())
        .collect()
}

pub(crate) fn describe(error: &CliError) -> String {
    match error {
        CliError::Engram(e) => format!("{}: {e}", e.code()),
        CliError::NotFound(id) => format!("not_found: {id}"),
        CliError::Usage(message) => message.clone(),
    }
}

/// Appends one line to the project's hook log, secrets redacted; a log that cannot be
/// written is given up on (the agent must not see it).
/// Logs, in the project's hook log, that its `.engram/config.toml` could not be read: a
/// hook then runs on the defaults rather than fail the agent's step.
pub fn log_config_error(error: &CliError) {
    let cwd = std::env::current_dir().unwrap_or_default();
    log_failure(&project_root(&cwd), "(config)", "", &describe(error));
}

pub(crate) fn log_failure(root: &Path, event: &str, session: &str, error: &str) {
    let mut error = error.to_owned();
    if let Ok(scanner) = engram_core::secrets::SecretScanner::shared() {
        scanner.redact_in_place(&mut error);
    }
    let at = engram_core::time::rfc3339_from_millis(crate::now_millis());
    let line = serde_json::json!({ "at": at, "event": event, "session": session, "error": error });
    let dir = root.join(ENGRAM_DIR);
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(HOOK_LOG));
    if let Ok(mut file) = file {
        // One write per line: appends of parallel hooks do not interleave.
        let _ = file.write_all(format!("{line}\n").as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_the_folder_with_engram_else_git_else_the_path() {
        let base = std::env::temp_dir().join(format!("engram-root-{}", std::process::id()));
        let sub = base.join("repo/src/deep");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(project_root(&sub), sub);
        std::fs::create_dir_all(base.join("repo/.git")).unwrap();
        assert_eq!(project_root(&sub), base.join("repo"));
        std::fs::create_dir_all(base.join("repo/src/.engram")).unwrap();
        assert_eq!(project_root(&sub), base.join("repo/src"));
        let _ = std::fs::remove_dir_all(&base);
    }
}
