//! The resident hook helper: one small process per project (and configuration) that keeps
//! the database open and the embedding model loaded, so a hook that needs the model (a
//! prompt's auto-inject, a session's start) does not pay the model's load every time.
//!
//! Every hook process first tries the helper's Unix socket in `.engram/`; when one answers,
//! the hook hands it the payload and prints its answer. When none does, the hook answers
//! itself, and a session start or a prompt starts a helper for the next ones. A helper
//! exits when no hook has come for [`IDLE_EXIT`], soon ([`AFTER_LAST_SESSION`]) after the
//! last session it saw ended, and when its folder is removed: it never outlives its
//! sessions by long. `ENGRAM_HOOK_HELPER=off` turns it off.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use engram::agent_loop::hook::{HookEvent, HookPayload};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{
    describe, handle, hook_target, log_failure, open_project, payload_root, Printed, Resident,
    ENGRAM_DIR, HOOK_TIME_CAP, MAX_PAYLOAD_BYTES,
};
use crate::{CliError, Target};

/// A helper no hook has used for this long exits.
pub const IDLE_EXIT: Duration = Duration::from_secs(10 * 60);
/// A helper whose sessions have all ended exits after this long without a new one (unless
/// `ENGRAM_HOOK_HELPER_LINGER_SECS` says otherwise).
pub const AFTER_LAST_SESSION: Duration = Duration::from_secs(30);
/// How often an idle helper checks that its folder still exists.
const CHECK_EVERY: Duration = Duration::from_secs(5);
/// The longest a hook waits for the helper to take its payload.
const SEND_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest a hook waits for the helper's answer. A helper answers a prompt in tens of
/// milliseconds; one that takes this long is hung (or drowning), and the hook answers
/// itself within what is left of its time cap.
pub(crate) const ANSWER_TIMEOUT: Duration = Duration::from_secs(4);
/// A helper still busy with one hook after this long is stuck in something the hook's own
/// time cap cannot interrupt (a blocking call): it removes its socket and exits.
const STUCK_AFTER: Duration = Duration::from_secs(2 * HOOK_TIME_CAP.as_secs());

/// How long a helper stays after its last session ended: [`AFTER_LAST_SESSION`], or
/// `ENGRAM_HOOK_HELPER_LINGER_SECS`.
fn linger() -> Duration {
    std::env::var("ENGRAM_HOOK_HELPER_LINGER_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(AFTER_LAST_SESSION, Duration::from_secs)
}

/// Whether helpers are turned off (`ENGRAM_HOOK_HELPER=off`, `0` or `false`).
fn disabled() -> bool {
    std::env::var("ENGRAM_HOOK_HELPER")
        .is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "off" | "0" | "false"))
}

/// The helper's files for `target` at `root`: `.engram/helper-<configuration>.{sock,pid}`.
/// A hook run with another model folder, model, project or engram binary (an upgrade
/// replaces the file) finds its own helper.
pub fn paths(target: &Target, root: &Path) -> (PathBuf, PathBuf) {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (
        &target.model_dir,
        &target.local_model,
        &target.project,
        target.no_embed,
        binary_identity(),
    )
        .hash(&mut hasher);
    let name = format!("helper-{:08x}", hasher.finish() as u32);
    let dir = root.join(ENGRAM_DIR);
    (
        dir.join(format!("{name}.sock")),
        dir.join(format!("{name}.pid")),
    )
}

/// This engram binary as a file: its path, inode, size and modification time. An upgrade
/// (a new file at the path) changes it; a running helper of the old one sees that and
/// leaves, and hooks of the new one start a helper of their own.
fn binary_identity() -> Option<(PathBuf, u64, u64, i64)> {
    let exe = std::env::current_exe().ok()?;
    // A replaced binary's running image reads "(deleted)": the path is the file's.
    let path = exe
        .to_str()
        .and_then(|p| p.strip_suffix(" (deleted)"))
        .map_or(exe.clone(), PathBuf::from);
    let meta = std::fs::metadata(&path).ok()?;
    use std::os::unix::fs::MetadataExt;
    Some((path, meta.ino(), meta.size(), meta.mtime()))
}

/// In a hook process: the helper's answer to `input`, or `None` when no helper runs or the
/// one that runs did not answer (the caller answers itself; a session start or prompt
/// then starts a helper).
pub(crate) fn ask(target: &Target, input: &str, fallback_dir: &Path) -> Option<Printed> {
    if target.url.is_some() || disabled() {
        return None;
    }
    let payload = HookPayload::from_json(input).ok()?;
    let event = payload.event()?;
    if event == HookEvent::PreToolUse {
        return None;
    }
    let root = payload_root(&payload, fallback_dir);
    let (socket, _) = paths(target, &root);
    let stream = match UnixStream::connect(&socket) {
        Ok(stream) => stream,
        Err(_) => {
            let wants_model =
                matches!(event, HookEvent::SessionStart | HookEvent::UserPromptSubmit);
            if wants_model && !target.no_embed {
                start(target, &root);
            }
            return None;
        }
    };
    let connected = inode(&socket);
    let line = match exchange(stream, input) {
        Ok(line) => line,
        Err(e) => {
            // A helper that took the payload and did not answer is taken out of service
            // (its socket removed, unless a new helper has it already), so the next hooks
            // do not wait on it too; this hook answers itself. A tool call the helper
            // logged after all is not logged twice: the log keeps one row per call id.
            if inode(&socket) == connected {
                let _ = std::fs::remove_file(&socket);
            }
            let error = format!(
                "the resident helper did not answer ({e}); it is taken out of service and the hook answers itself"
            );
            log_failure(&root, event.name(), &payload.session_id, &error);
            return None;
        }
    };
    Some(Printed {
        root,
        line,
        event: event.name().to_owned(),
        session: payload.session_id,
    })
}

fn exchange(mut stream: UnixStream, input: &str) -> std::io::Result<String> {
    stream.set_write_timeout(Some(SEND_TIMEOUT))?;
    stream.set_read_timeout(Some(ANSWER_TIMEOUT))?;
    stream.write_all(input.as_bytes())?;
    stream.shutdown(std::net::Shutdown::Write)?;
    let mut answer = String::new();
    stream.take(MAX_PAYLOAD_BYTES).read_to_string(&mut answer)?;
    Ok(answer)
}

/// Starts a helper for `root` in the background, detached from the hook (its own process
/// group, no inherited output), with the hook's configuration.
fn start(target: &Target, root: &Path) {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut command = std::process::Command::new(exe);
    command
        .arg("--project")
        .arg(&target.project)
        .arg("--local-model")
        .arg(&target.local_model)
        .arg("hook-helper")
        .arg(root)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if let Some(dir) = &target.model_dir {
        command.arg("--model-dir").arg(dir);
    }
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    if let Err(e) = command.spawn() {
        let error = format!("cannot start the resident helper: {e}");
        log_failure(root, "SessionStart", "", &error);
    }
}

/// Runs the helper for `root` until it has nothing more to do. Returns at once when
/// another helper of the same configuration answers already.
pub async fn serve(target: &Target, root: &Path) -> Result<(), CliError> {
    let failed = |what: &str, e: std::io::Error| CliError::Usage(format!("{what}: {e}"));
    // Before anything slow (the model loads after the socket is bound): an upgrade while
    // this helper starts must still read as one.
    let binary = binary_identity();
    let target = hook_target(target);
    let (socket, pid) = paths(&target, root);
    std::fs::create_dir_all(root.join(ENGRAM_DIR))
        .map_err(|e| failed("cannot create .engram", e))?;
    // A helper that answers already: this one is not needed.
    if UnixStream::connect(&socket).is_ok() {
        return Ok(());
    }
    let _ = std::fs::remove_file(&socket);
    let listener =
        tokio::net::UnixListener::bind(&socket).map_err(|e| failed("cannot listen", e))?;
    let own = inode(&socket);
    let started = engram_core::time::rfc3339_from_millis(crate::now_millis());
    let _ = std::fs::write(&pid, format!("{} {started}\n", std::process::id()));
    let (engram, model_error) = open_project(&target, root).await?;
    if let Some(error) = model_error {
        let note = format!("{}; the helper answers keyword-only", describe(&error));
        log_failure(root, "(helper)", "", &note);
    }
    let resident = Resident {
        root: root.to_path_buf(),
        engram,
    };
    let busy_since = watch_for_stuck(socket.clone(), own);
    let own = Own {
        socket: own,
        binary,
    };
    listen(&target, &resident, &listener, &socket, &own, &busy_since).await;
    // Only its own files: a helper started since may have taken the names.
    if inode(&socket) == own.socket {
        let _ = std::fs::remove_file(&socket);
        let _ = std::fs::remove_file(&pid);
    }
    Ok(())
}

/// What a helper was started as: its socket file's inode and its binary's identity.
struct Own {
    socket: Option<u64>,
    binary: Option<(PathBuf, u64, u64, i64)>,
}

impl Own {
    /// Whether this helper should leave: its socket is gone or another's, or its binary
    /// was replaced (the file at its path changed, or its running image was unlinked).
    fn superseded(&self, socket: &Path) -> bool {
        let unlinked = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.to_str().map(|p| p.ends_with(" (deleted)")))
            .unwrap_or(false);
        inode(socket) != self.socket || unlinked || binary_identity() != self.binary
    }
}

/// Milliseconds since the helper started at which it took the hook it is answering, or
/// [`IDLE`] between hooks.
type BusySince = std::sync::Arc<std::sync::atomic::AtomicU64>;
/// [`BusySince`] between hooks.
const IDLE: u64 = u64::MAX;

/// A thread that ends the helper when one hook has kept it busy for [`STUCK_AFTER`]: the
/// socket is removed first (if still its own), so hooks stop waiting on it at once.
fn watch_for_stuck(socket: PathBuf, own: Option<u64>) -> BusySince {
    let busy_since: BusySince = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(IDLE));
    let watched = busy_since.clone();
    let started = Instant::now();
    std::thread::spawn(move || loop {
        std::thread::sleep(CHECK_EVERY);
        let since = watched.load(std::sync::atomic::Ordering::Relaxed);
        let now = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        if since != IDLE && now.saturating_sub(since) >= STUCK_AFTER.as_millis() as u64 {
            if inode(&socket) == own {
                let _ = std::fs::remove_file(&socket);
            }
            std::process::exit(1);
        }
    });
    busy_since
}

/// Answers hooks one at a time until idle, the last session's end, the socket's removal or
/// the engram binary's replacement.
async fn listen(
    target: &Target,
    resident: &Resident,
    listener: &tokio::net::UnixListener,
    socket: &Path,
    own: &Own,
    busy_since: &BusySince,
) {
    let mut sessions: HashSet<String> = HashSet::new();
    let mut ended_any = false;
    let mut last_use = Instant::now();
    let started = Instant::now();
    loop {
        let limit = if sessions.is_empty() && ended_any {
            linger()
        } else {
            IDLE_EXIT
        };
        // Gone or replaced (its folder removed, another helper started in a race), or
        // engram upgraded under it: hooks of the new binary start a helper of their own.
        if last_use.elapsed() >= limit || own.superseded(socket) {
            return;
        }
        let Ok(accepted) = tokio::time::timeout(CHECK_EVERY, listener.accept()).await else {
            continue;
        };
        let Ok((mut stream, _)) = accepted else {
            continue;
        };
        let mut input = Vec::new();
        let mut limited = (&mut stream).take(MAX_PAYLOAD_BYTES);
        let read = limited.read_to_end(&mut input);
        if tokio::time::timeout(SEND_TIMEOUT, read).await.is_err() {
            continue;
        }
        let input = String::from_utf8_lossy(&input).into_owned();
        // An empty message is a liveness probe (`engram status`), not a hook.
        if input.trim().is_empty() {
            continue;
        }
        last_use = Instant::now();
        if let Ok(payload) = HookPayload::from_json(&input) {
            match payload.event() {
                Some(HookEvent::SessionEnd) => {
                    sessions.remove(&payload.session_id);
                    ended_any = true;
                }
                Some(_) => {
                    sessions.insert(payload.session_id.clone());
                }
                None => {}
            }
        }
        let now = u64::try_from(started.elapsed().as_millis()).unwrap_or(0);
        busy_since.store(now, std::sync::atomic::Ordering::Relaxed);
        let printed = handle(
            target,
            &input,
            &resident.root,
            Some(resident),
            HOOK_TIME_CAP,
        )
        .await;
        busy_since.store(IDLE, std::sync::atomic::Ordering::Relaxed);
        let line = printed.map(|p| p.line).unwrap_or_default();
        let _ = stream.write_all(line.as_bytes()).await;
        let _ = stream.shutdown().await;
    }
}

/// The file's inode: which socket file a path names now.
fn inode(path: &Path) -> Option<u64> {
    Some(std::os::unix::fs::MetadataExt::ino(
        &std::fs::metadata(path).ok()?,
    ))
}

/// The helpers running for the project at `root`: (process id, started at).
pub fn running(root: &Path) -> Vec<(u32, String)> {
    let Ok(entries) = std::fs::read_dir(root.join(ENGRAM_DIR)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("helper-") && name.ends_with(".pid")
        })
        .filter(|pid_file| UnixStream::connect(pid_file.with_extension("sock")).is_ok())
        .filter_map(|pid_file| {
            let text = std::fs::read_to_string(&pid_file).ok()?;
            let (pid, started) = text.trim().split_once(' ')?;
            Some((pid.parse().ok()?, started.to_owned()))
        })
        .collect()
}
