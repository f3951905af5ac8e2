//! `engram hook` run as Claude Code runs it: a project folder, one process per event with
//! the payload on stdin, and what the hook printed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use engram_store::Value;
use serde_json::{json, Value as Json};

use super::rows;

/// A project folder (a git work tree) in the temp folder, removed on drop.
pub struct Project(pub PathBuf);

impl Project {
    pub fn new(name: &str) -> Project {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let root =
            std::env::temp_dir().join(format!("engram-hook-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(root.join(".git")).expect("project folder");
        std::fs::create_dir_all(root.join("src/deep")).expect("source folder");
        Project(root)
    }

    pub fn db(&self) -> PathBuf {
        self.0.join(".engram/engram.db")
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.0.join(".engram/hooks.log")).unwrap_or_default()
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `engram hook` in `dir` with `stdin`, as Claude Code does, keyword-only.
pub fn hook(dir: &Path, stdin: &str) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_engram"));
    command.arg("--no-embed");
    run_hook(command, dir, stdin)
}

/// Runs `command hook` in `dir` with `stdin` and no database flag.
pub fn run_hook(mut command: Command, dir: &Path, stdin: &str) -> Output {
    let mut child = command
        .arg("hook")
        .current_dir(dir)
        .env_remove("ENGRAM_DB")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("engram runs");
    let mut input = child.stdin.take().expect("stdin");
    // A hook may exit before reading everything (a payload it does not need).
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    child.wait_with_output().expect("engram exits")
}

pub fn payload(project: &Project, event: &str, session: &str, extra: Json) -> String {
    let mut payload = json!({
        "hook_event_name": event,
        "session_id": session,
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": project.0.join("src/deep"),
    });
    if let (Some(fields), Some(extra)) = (payload.as_object_mut(), extra.as_object()) {
        fields.extend(extra.clone());
    }
    payload.to_string()
}

/// What a hook that succeeded printed: its additional context, if any.
pub fn context(output: &Output) -> Option<String> {
    assert!(output.status.success(), "a hook exits 0: {output:?}");
    assert!(
        output.stderr.is_empty(),
        "a hook says nothing on stderr: {output:?}"
    );
    let text = String::from_utf8_lossy(&output.stdout);
    if text.trim().is_empty() {
        return None;
    }
    let answer: Json = serde_json::from_str(text.trim()).expect("hook JSON");
    answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .map(str::to_owned)
}

/// Writes `file` in the project: memories cite files that exist (the hooks' file probe
/// keeps memories about missing files out of the context).
pub fn touch(project: &Project, file: &str) {
    let path = project.0.join(file);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("source folder");
    }
    std::fs::write(path, "# source\n").expect("source file");
}

pub fn remember(project: &Project, content: &str, file: &str) {
    touch(project, file);
    let output = Command::new(env!("CARGO_BIN_EXE_engram"))
        .arg("--db")
        .arg(project.db())
        .args(["--no-embed", "remember", content, "--file", file])
        .output()
        .expect("engram runs");
    assert!(output.status.success(), "{output:?}");
}

pub fn count(db: &Path, sql: &str, session: &str) -> i64 {
    rows(db, sql, vec![Value::from(session)])[0][0]
        .as_i64("count")
        .expect("count")
}

/// Calls made so far by [`read_of`], for their ids.
static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub fn read_of(project: &Project, session: &str, file: &str) -> String {
    payload(
        project,
        "PostToolUse",
        session,
        json!({
            "tool_name": "Read",
            "tool_input": {"file_path": project.0.join(file)},
            "tool_response": {"type": "text", "file": {"filePath": project.0.join(file), "content": "def login(): ..."}},
            // Each call its own id, as Claude Code gives them (a call is logged once).
            "tool_use_id": format!("toolu_{file}_{}", CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)),
        }),
    )
}

pub fn eval_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("ENGRAM_EVAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval"));
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipping: no evaluation data at {}", dir.display());
        None
    }
}

/// The bundled model's folder (scripts/fetch-model.sh puts it there).
pub fn model_dir() -> PathBuf {
    let dir = std::env::var_os("ENGRAM_MODEL_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/engram/models")))
        .expect("a model folder");
    assert!(
        dir.is_dir(),
        "no model at {} (run scripts/fetch-model.sh)",
        dir.display()
    );
    dir
}

/// `engram hook` with the model, as installed hooks run it.
pub fn hook_with_model(dir: &Path, stdin: &str, helper: bool) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_engram"));
    command
        .env("ENGRAM_MODEL_DIR", model_dir())
        .env("ENGRAM_HOOK_HELPER", if helper { "on" } else { "off" })
        .env("ENGRAM_HOOK_HELPER_LINGER_SECS", "1");
    run_hook(command, dir, stdin)
}

pub fn helper_files(project: &Project) -> Vec<String> {
    std::fs::read_dir(project.0.join(".engram"))
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                .filter(|name| name.starts_with("helper-"))
                .collect()
        })
        .unwrap_or_default()
}

pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !done() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "gave up waiting: {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Stores a memory of `kind` in the project's database, keyword-only.
pub fn remember_typed(project: &Project, kind: &str, content: &str) {
    let output = Command::new(env!("CARGO_BIN_EXE_engram"))
        .arg("--db")
        .arg(project.db())
        .args(["--no-embed", "remember", "--type", kind, content])
        .output()
        .expect("engram runs");
    assert!(output.status.success(), "{output:?}");
}
