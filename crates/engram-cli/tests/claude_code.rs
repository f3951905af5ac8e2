//! engram inside the real Claude Code CLI (`@anthropic-ai/claude-code` from npm, fetched by
//! `scripts/fetch-claude-code.sh`), driven by a scripted Messages API on 127.0.0.1.
//!
//! The project is the pytest 4.4.1 source release (the one the SWE-bench eval fetches),
//! made a git work tree; `engram install claude-code` wires engram in as a user would.
//! Session 1 replays, as Claude Code Bash calls, the commands a real agent ran on pytest
//! (the evaluation trajectory of pytest-dev__pytest-5262); session 2 starts fresh, asks
//! about the same bug and reads the file; session 3 injects every failure a hook can meet.
//! What the model was shown is read from the request bodies the scripted API received.

mod common;
#[path = "claude_code/scripted_api.rs"]
mod scripted_api;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{memory_contents, rows};
use scripted_api::{user_texts, Block, ScriptedApi};
use serde_json::Value;

/// The trajectory session 1 replays and the SWE-bench instance it worked on.
const INSTANCE: &str = "pytest-dev__pytest-5262";
/// The longest one Claude Code run may take before the test gives up on it.
const SESSION_CAP: Duration = Duration::from_secs(300);

fn home_cache() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default()
        .join(".cache/engram")
}

fn claude_binary() -> PathBuf {
    let path = std::env::var_os("ENGRAM_CLAUDE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            home_cache().join("claude-code/node_modules/@anthropic-ai/claude-code-linux-x64/claude")
        });
    assert!(
        path.is_file(),
        "no Claude Code CLI at {}: run scripts/fetch-claude-code.sh (or set ENGRAM_CLAUDE_BIN)",
        path.display()
    );
    path
}

fn pytest_source() -> PathBuf {
    let corpora = std::env::var_os("ENGRAM_CORPORA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| home_cache().join("corpora"));
    let path = corpora.join("swebench/pytest-4.4.1");
    assert!(
        path.join("src/_pytest/capture.py").is_file(),
        "no pytest 4.4.1 source at {}: run scripts/fetch-swebench.sh 4.4.1",
        path.display()
    );
    path
}

fn eval_dir() -> PathBuf {
    let dir = std::env::var_os("ENGRAM_EVAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval"));
    assert!(
        dir.join("trajectories").is_dir(),
        "no evaluation data at {} (set ENGRAM_EVAL_DIR)",
        dir.display()
    );
    dir
}

/// The bundled model's folder, when it has been fetched (scripts/fetch-model.sh).
fn model_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("ENGRAM_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| home_cache().join("models"));
    dir.is_dir().then_some(dir)
}

/// A temporary project (pytest's source as a git work tree) and home folder.
struct World {
    base: PathBuf,
    claude: PathBuf,
    /// Load engram as the plugin in this folder instead of through installed settings.
    plugin: Option<PathBuf>,
}

impl World {
    fn new() -> World {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let base = std::env::temp_dir().join(format!("engram-cc-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(base.join("home")).expect("home");
        let world = World {
            base,
            claude: claude_binary(),
            plugin: None,
        };
        run(Command::new("cp")
            .arg("-r")
            .arg(pytest_source())
            .arg(world.project()));
        for args in [
            &["init", "-q"][..],
            &["add", "-A"],
            &[
                "-c",
                "user.name=engram",
                "-c",
                "user.email=engram@localhost",
                "commit",
                "-qm",
                "pytest 4.4.1",
            ],
        ] {
            run(Command::new("git").args(args).current_dir(world.project()));
        }
        world
    }

    fn project(&self) -> PathBuf {
        self.base.join("project")
    }

    fn home(&self) -> PathBuf {
        self.base.join("home")
    }

    fn db(&self) -> PathBuf {
        self.project().join(".engram/engram.db")
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.project().join(".engram/hooks.log")).unwrap_or_default()
    }

    /// `engram ARGS` in the project with the bundled model, when there is one.
    fn engram_with(&self, model: Option<&Path>, args: &[&str]) -> String {
        let mut command = Command::new(env!("CARGO_BIN_EXE_engram"));
        command
            .args(args)
            .current_dir(self.project())
            .env("HOME", self.home())
            .env_remove("ENGRAM_DB")
            .env_remove("ENGRAM_MODEL_DIR");
        if let Some(model) = model {
            command.env("ENGRAM_MODEL_DIR", model);
        }
        run(&mut command)
    }

    /// One `claude -p PROMPT` session against `api`; its JSON result.
    fn claude(&self, api: &ScriptedApi, prompt: &str, model: Option<&Path>) -> Value {
        let mut command = Command::new(&self.claude);
        command
            .args([
                "-p",
                prompt,
                "--dangerously-skip-permissions",
                "--output-format",
                "json",
            ])
            .current_dir(self.project())
            .env("HOME", self.home())
            .env("ANTHROPIC_BASE_URL", &api.url)
            .env("ANTHROPIC_API_KEY", "sk-ant-scripted")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("IS_SANDBOX", "1")
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env_remove("ENGRAM_DB")
            .env_remove("ENGRAM_MODEL_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(model) = model {
            command.env("ENGRAM_MODEL_DIR", model);
        }
        if let Some(plugin) = &self.plugin {
            command
                .arg("--plugin-dir")
                .arg(plugin)
                .env("ENGRAM_BIN", env!("CARGO_BIN_EXE_engram"));
        }
        let mut child = command.spawn().expect("claude starts");
        let started = Instant::now();
        while child.try_wait().expect("claude runs").is_none() {
            if started.elapsed() > SESSION_CAP {
                let _ = child.kill();
                panic!("a Claude Code session ran over {SESSION_CAP:?}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let output = child.wait_with_output().expect("claude exits");
        assert!(output.status.success(), "claude failed: {output:?}");
        let result: Value = serde_json::from_slice(&output.stdout).expect("claude's JSON result");
        assert_eq!(result["is_error"], false, "{result}");
        result
    }

    /// The transcript Claude Code wrote for `session`.
    fn transcript(&self, session: &str) -> PathBuf {
        let projects = self.home().join(".claude/projects");
        std::fs::read_dir(&projects)
            .expect("Claude Code's projects folder")
            .flatten()
            .map(|dir| dir.path().join(format!("{session}.jsonl")))
            .find(|path| path.is_file())
            .unwrap_or_else(|| panic!("no transcript of {session} under {}", projects.display()))
    }
}

impl Drop for World {
    fn drop(&mut self) {
        if std::env::var_os("ENGRAM_KEEP_TEST_FILES").is_none() {
            let _ = std::fs::remove_dir_all(&self.base);
        }
    }
}

fn run(command: &mut Command) -> String {
    let output = command.output().expect("the command runs");
    assert!(output.status.success(), "{command:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The hook failures Claude Code recorded in a transcript (a hook that exited non-zero,
/// timed out or printed what it could not use).
fn hook_failures(transcript: &Path) -> Vec<Value> {
    std::fs::read_to_string(transcript)
        .expect("transcript")
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|line| line.get("attachment").cloned())
        .filter(|attachment| {
            let kind = attachment["type"].as_str().unwrap_or("");
            kind.starts_with("hook") && (kind.contains("error") || kind.contains("cancel"))
        })
        .collect()
}

/// The assistant turns of a trajectory: its Bash commands, one call a turn, then a word.
fn trajectory_turns(eval: &Path, instance: &str) -> Vec<Vec<Block>> {
    let path = eval.join(format!("trajectories/{instance}/{instance}.traj.json"));
    let trajectory: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("trajectory")).expect("JSON");
    let mut turns: Vec<Vec<Block>> = trajectory["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| {
            let content = m["content"].as_str()?;
            let start = content.find("```bash\n")? + "```bash\n".len();
            let end = start + content[start..].find("\n```")?;
            Some(vec![Block::bash(&content[start..end])])
        })
        .collect();
    turns.push(vec![Block::Text("The fix is in place.".into())]);
    turns
}

/// The first line of the instance's problem statement: what its user asked.
fn problem_title(eval: &Path, instance: &str) -> String {
    let instances =
        std::fs::read_to_string(eval.join("swebench/dev_instances.jsonl")).expect("instances");
    instances
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|row| row["instance_id"] == instance)
        .and_then(|row| row["problem_statement"].as_str().map(str::to_owned))
        .and_then(|text| text.lines().next().map(str::to_owned))
        .expect("the instance's problem statement")
}

#[test]
fn claude_code_sessions_learn_live_and_are_shown_what_was_learned() {
    let eval = eval_dir();
    let world = World::new();
    let api = ScriptedApi::start();
    let model = model_dir();
    let installed = world.engram_with(model.as_deref(), &["install", "claude-code"]);
    assert!(installed.contains("settings.json"), "{installed}");

    // Session 1: a real agent's work on pytest, live through the hooks.
    api.play(trajectory_turns(&eval, INSTANCE));
    let title = problem_title(&eval, INSTANCE);
    let first = world.claude(&api, &title, model.as_deref());
    let session = first["session_id"].as_str().expect("session id").to_owned();
    let transcript = world.transcript(&session);
    assert_eq!(hook_failures(&transcript), Vec::<Value>::new());
    assert_eq!(world.log(), "", "no hook failed");
    let live = memory_contents(&world.db());
    let replayed_db = world.base.join("replayed.db");
    run(Command::new(env!("CARGO_BIN_EXE_engram"))
        .arg("--db")
        .arg(&replayed_db)
        .args(["--no-embed", "observe", "replay"])
        .arg(&transcript));
    let replayed = memory_contents(&replayed_db);
    eprintln!("session 1 learned {live:#?}");
    assert!(!live.is_empty(), "session 1 learned nothing");
    assert_eq!(
        live, replayed,
        "the live hooks learn what a replay of the transcript learns"
    );

    // Between the sessions a person records what they know about capture.py: why the fix
    // matters (which the next prompt is about) and what running its tests in this tree
    // does (session 1's runs of testing/test_capture.py all failed that way).
    let why = "EncodedFile must report the mode of its buffer without `b`: youtube-dl writes bytes when `b` is in out.mode, and EncodedFile.write() takes str only";
    let tests = "Every pytest run in this tree with a newer installed pytest stops at startup: the filterwarnings in tox.ini name pytest.RemovedInPytest4Warning, which it lacks; pip install -e . first";
    world.engram_with(
        model.as_deref(),
        &[
            "remember",
            "--type",
            "gotcha",
            "--file",
            "src/_pytest/capture.py",
            why,
        ],
    );
    world.engram_with(
        model.as_deref(),
        &[
            "remember",
            "--type",
            "error_pattern",
            "--file",
            "tox.ini",
            tests,
        ],
    );

    // Session 2: a fresh session on the same bug reads the file the fix touched.
    api.play(vec![
        vec![Block::read(&world.project().join("src/_pytest/capture.py"))],
        vec![Block::read(&world.project().join("tox.ini"))],
        vec![Block::Text("I see the EncodedFile class.".into())],
    ]);
    let second = world.claude(&api, &title, model.as_deref());
    let second_session = second["session_id"]
        .as_str()
        .expect("session id")
        .to_owned();
    assert_eq!(
        hook_failures(&world.transcript(&second_session)),
        Vec::<Value>::new()
    );
    let requests = api.requests();
    let shown: Vec<String> = requests.iter().flat_map(user_texts).collect();
    // A project with no standing memories may start a session with nothing to add.
    let at_start = shown
        .iter()
        .find_map(|text| {
            text.find("SessionStart hook additional context")
                .map(|at| text[at..].to_owned())
        })
        .unwrap_or_default();
    let after_prompt = injected(&shown, "UserPromptSubmit hook additional context");
    let after_read = injected(&shown, "PostToolUse:Read hook additional context");
    // A fresh session has no task yet; its first prompt, the same task, brings back what
    // session 1 did: its record, at the default trust level.
    assert!(
        !at_start.contains("Past sessions on similar tasks"),
        "no past session is guessed at before the task is known: {at_start}"
    );
    assert!(
        after_prompt.contains("Past sessions on similar tasks here")
            && after_prompt.contains(&format!("Past session's task: {}", title.trim())),
        "session 1's record opens session 2's task: {after_prompt}"
    );
    assert!(
        live.iter()
            .any(|memory| memory.starts_with("Past session's task:")),
        "session 1 left its record: {live:#?}"
    );
    assert!(
        after_prompt.contains(why),
        "the prompt about EncodedFile's mode gets why: {after_prompt}"
    );
    assert!(
        after_read.contains(tests),
        "reading capture.py gets its error pattern: {after_read}"
    );
    assert!(
        !after_read.contains(why),
        "a memory shown after the prompt is not shown again"
    );
    assert_eq!(world.log(), "", "no hook failed");
    for (event, text) in contexts(&world.transcript(&second_session)) {
        eprintln!(
            "session 2, {event}: {} tokens",
            engram::retrieval::tokens::estimate(&text)
        );
    }

    faults(&world, &api);
}

/// The plugin folder wires the same hooks: a session run with `--plugin-dir` and no
/// install is observed and finalized.
#[test]
fn the_plugin_folder_observes_a_session_without_an_install() {
    let mut world = World::new();
    world.plugin =
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../integrations/claude-code"));
    let api = ScriptedApi::start();
    api.play(vec![
        vec![Block::bash(
            "grep -n 'class EncodedFile' src/_pytest/capture.py",
        )],
        vec![Block::read(&world.project().join("src/_pytest/capture.py"))],
        vec![Block::Text("Found it.".into())],
    ]);
    let result = world.claude(&api, "where is EncodedFile defined?", None);
    let session = result["session_id"].as_str().expect("session id");
    assert_eq!(
        hook_failures(&world.transcript(session)),
        Vec::<Value>::new()
    );
    assert!(
        !world.project().join(".claude").exists(),
        "nothing was installed"
    );
    let logged = rows(
        &world.db(),
        "SELECT count(*) FROM hook_events WHERE session_id = ?1 AND tool IS NOT NULL",
        vec![engram_store::Value::from(session)],
    );
    assert_eq!(
        logged[0][0].as_i64("count").expect("count"),
        2,
        "both tool calls logged"
    );
    let finalized = rows(
        &world.db(),
        "SELECT count(*) FROM observer_sessions WHERE session_id = ?1",
        vec![engram_store::Value::from(session)],
    );
    assert_eq!(finalized[0][0].as_i64("count").expect("count"), 1);
    assert_eq!(world.log(), "", "no hook failed");
}

/// Session 3: every failure a hook can meet, inside a real session. Claude Code must see
/// none of them; the hook log must name each.
fn faults(world: &World, api: &ScriptedApi) {
    let engram = env!("CARGO_BIN_EXE_engram");
    let big = world.base.join("big-payload.py");
    std::fs::write(
        &big,
        "import json\nprint(json.dumps({'hook_event_name': 'PostToolUse', 'session_id': 'big', \
         'tool_name': 'Bash', 'tool_input': {'command': 'cat build.log'}, \
         'tool_response': {'stdout': 'x' * (10 * 1024 * 1024)}}))\n",
    )
    .expect("payload script");
    let lock = world.base.join("lock.py");
    std::fs::write(
        &lock,
        "import pathlib, sqlite3, sys, time\n\
         db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)\n\
         db.execute('BEGIN EXCLUSIVE')\n\
         pathlib.Path(sys.argv[2]).touch()\n\
         time.sleep(float(sys.argv[3]))\n\
         db.execute('COMMIT')\n",
    )
    .expect("lock script");
    // Payloads Claude Code itself never sends, through more hooks of the project's settings
    // (run after each prompt).
    let injected = [
        format!("printf 'this is not json {{' | {engram} hook"),
        format!(
            "printf '{{\"hook_event_name\":\"Bogus\",\"session_id\":\"faults\"}}' | {engram} hook"
        ),
        format!("printf '{{\"hook_event_name\":\"PostToolUse\"}}' | {engram} hook"),
        format!("python3 {} | {engram} hook", big.display()),
    ];
    let settings_path = world.project().join(".claude/settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings_path).expect("settings"))
            .expect("settings JSON");
    let hooks: Vec<Value> = injected
        .iter()
        .map(|command| serde_json::json!({"type": "command", "command": command, "timeout": 15}))
        .collect();
    if let Some(groups) = settings["hooks"]["UserPromptSubmit"].as_array_mut() {
        groups.push(serde_json::json!({ "hooks": hooks }));
    }
    std::fs::write(&settings_path, settings.to_string()).expect("settings written");

    let secret = "sk-T3stKeyT3stKeyT3stKeyT3stKeyT3stKeyT3stKeyT3stKey";
    api.play(vec![
        vec![Block::bash(&format!(
            "echo \"curl -H 'Authorization: Bearer {secret}' failed: 401\"; exit 22"
        ))],
        vec![Block::bash(&format!(
            "python3 {} .engram/engram.db .engram/locked 12 >/dev/null 2>&1 & \
             while [ ! -e .engram/locked ]; do sleep 0.1; done",
            lock.display()
        ))],
        vec![Block::read(&world.project().join("src/_pytest/capture.py"))],
        vec![Block::Text("Done.".into())],
    ]);
    // The model's files are gone: the hooks that use it answer keyword-only.
    let deleted = world.base.join("deleted-model/minilm-l6-v2-int8");
    std::fs::create_dir_all(&deleted).expect("model folder");
    let third = world.claude(api, "list the capture sources", deleted.parent());
    let session = third["session_id"].as_str().expect("session id");
    assert_eq!(
        hook_failures(&world.transcript(session)),
        Vec::<Value>::new()
    );
    let log = world.log();
    eprintln!("hook log:\n{log}");
    let lines: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let named = |what: &str| {
        lines.iter().any(|line| {
            line.to_string()
                .to_lowercase()
                .contains(&what.to_lowercase())
        })
    };
    for failure in [
        "(undecodable)",
        "unknown event",
        "session_id",
        "cut to its first 64 KB",
        "database is locked",
        "no model in",
    ] {
        assert!(named(failure), "the hook log names {failure:?}: {log}");
    }
    // Without its model the hooks still answer, keyword-only: the prompt is logged as the
    // session's task.
    let prompts = rows(
        &world.db(),
        "SELECT count(*) FROM hook_events WHERE session_id = ?1 AND events LIKE '%list the capture sources%'",
        vec![engram_store::Value::from(session)],
    );
    assert_eq!(
        prompts[0][0].as_i64("count").expect("count"),
        1,
        "without its model the session's prompt is still logged"
    );
    let db = std::fs::read(world.db()).expect("database file");
    let wal = std::fs::read(world.project().join(".engram/engram.db-wal")).unwrap_or_default();
    for bytes in [&db, &wal] {
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "the secret reached the database"
        );
    }
    assert!(!log.contains(secret), "the secret reached the log");
}

/// What each engram hook added in a session, as Claude Code recorded it: (event, text).
fn contexts(transcript: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(transcript)
        .expect("transcript")
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|line| line.get("attachment").cloned())
        .filter(|attachment| attachment["type"] == "hook_additional_context")
        .filter_map(|attachment| {
            let text: Vec<&str> = attachment["content"]
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .collect();
            Some((attachment["hookName"].as_str()?.to_owned(), text.join("\n")))
        })
        .collect()
}

/// The text from an injection point's label on, as the model received it (the first
/// request that carries it; later requests repeat the conversation).
fn injected(shown: &[String], label: &str) -> String {
    shown
        .iter()
        .find_map(|text| text.find(label).map(|at| text[at..].to_owned()))
        .unwrap_or_else(|| panic!("no {label:?} in the model's requests"))
}
