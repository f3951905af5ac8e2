//! `engram hook` as Claude Code runs it: one process per event with the payload on stdin,
//! in the project's folder, in parallel.

mod common;

use std::path::Path;
use std::process::Command;

use common::hook::*;
use common::{memory_contents, rows};
use engram_store::Value;
use serde_json::{json, Value as Json};

#[test]
fn a_read_of_a_file_with_a_gotcha_gets_it_once_per_session_and_the_database_is_the_projects() {
    let project = Project::new("read");
    remember(
        &project,
        "login() must be called after the session cookie is set",
        "src/app.py",
    );
    let first = context(&hook(
        &project.0.join("src/deep"),
        &read_of(&project, "s1", "src/app.py"),
    ))
    .expect("the gotcha is added to the read");
    assert!(first.contains("session cookie"), "{first}");
    assert!(
        context(&hook(&project.0, &read_of(&project, "s1", "src/app.py"))).is_none(),
        "never injected twice in a session"
    );
    let other = context(&hook(&project.0, &read_of(&project, "s2", "src/app.py")));
    assert!(other.is_some(), "another session is shown it again");
    assert!(
        !project.0.join("src/deep/.engram").exists(),
        "no database in a subfolder"
    );
    assert_eq!(
        count(
            &project.db(),
            "SELECT count(*) FROM hook_events WHERE session_id = ?1",
            "s1"
        ),
        2,
        "each tool event is logged"
    );
    assert_eq!(project.log(), "", "nothing failed");
}

#[test]
fn a_gotcha_about_a_deleted_file_is_not_injected_and_is_marked_stale() {
    let project = Project::new("gone");
    remember(
        &project,
        "logout() in src/session.py must clear the remember-me token too",
        "src/session.py",
    );
    let prompt = payload(
        &project,
        "UserPromptSubmit",
        "s1",
        json!({"prompt": "why does logout keep the remember-me token?"}),
    );
    let found = context(&hook(&project.0, &prompt)).expect("found while the file is there");
    assert!(found.contains("remember-me"), "{found}");
    std::fs::remove_file(project.0.join("src/session.py")).expect("delete the file");
    let again = payload(
        &project,
        "UserPromptSubmit",
        "s2",
        json!({"prompt": "why does logout keep the remember-me token?"}),
    );
    assert_eq!(context(&hook(&project.0, &again)), None);
    let stale = rows(
        &project.db(),
        "SELECT stale_reason, needs_review FROM memories WHERE stale_reason IS NOT NULL \
AND ?1 = ?1",
        vec![Value::from("x")],
    );
    assert_eq!(
        stale.len(),
        1,
        "the write of the prompt's hook carried the mark"
    );
    assert_eq!(
        stale[0][0].as_text("stale_reason").expect("reason"),
        "file missing: src/session.py"
    );
    assert_eq!(project.log(), "");
}

#[test]
fn any_failure_exits_zero_with_nothing_printed_and_is_logged() {
    let project = Project::new("failures");
    let garbage = hook(&project.0, "this is not json {");
    assert_eq!(context(&garbage), None);
    let missing = hook(&project.0, r#"{"hook_event_name":"Stop"}"#);
    assert_eq!(context(&missing), None);
    let unknown = hook(
        &project.0,
        &payload(&project, "Notification", "s", json!({})),
    );
    assert_eq!(context(&unknown), None);
    let huge = "x".repeat(10 * 1024 * 1024);
    let big = payload(
        &project,
        "PostToolUse",
        "s",
        json!({"tool_name": "Bash", "tool_input": {"command": "cat big.log"}, "tool_response": {"stdout": huge}}),
    );
    assert_eq!(context(&hook(&project.0, &big)), None);
    let log = project.log();
    let lines: Vec<Json> = log
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(
        lines.len(),
        4,
        "the garbage, the missing session, the unknown event and the cut output are \
         logged: {log}"
    );
    assert!(lines[2]["error"]
        .as_str()
        .unwrap_or("")
        .contains("unknown event"));
    assert!(lines[3]["error"]
        .as_str()
        .unwrap_or("")
        .contains("cut to its first 64 KB"));
    assert_eq!(lines[0]["event"], "(undecodable)");
    assert!(
        lines[1]["error"]
            .as_str()
            .unwrap_or("")
            .contains("session_id"),
        "{log}"
    );
    // The 10 MB output was logged as an event, cut to the observer's cap.
    assert_eq!(
        count(
            &project.db(),
            "SELECT count(*) FROM hook_events WHERE session_id = ?1 AND length(events) < 200000",
            "s"
        ),
        1
    );
}

#[test]
fn secrets_in_tool_output_reach_neither_the_database_nor_the_log() {
    let project = Project::new("secrets");
    let secret = "sk-T3stKeyT3stKeyT3stKeyT3stKeyT3stKeyT3stKeyT3stKey";
    let event = payload(
        &project,
        "PostToolUseFailure",
        "s",
        json!({"tool_name": "Bash", "tool_input": {"command": format!("curl -H 'Authorization: Bearer {secret}' api")},
               "error": format!("Exit code 22: 401 for key {secret}")}),
    );
    assert_eq!(context(&hook(&project.0, &event)), None);
    assert_eq!(
        count(
            &project.db(),
            "SELECT count(*) FROM hook_events WHERE session_id = ?1",
            "s"
        ),
        1
    );
    let bytes = std::fs::read(project.db()).expect("database file");
    let wal = std::fs::read(project.0.join(".engram/engram.db-wal")).unwrap_or_default();
    for file in [&bytes, &wal] {
        assert!(
            !file.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "the secret reached the database"
        );
    }
    assert!(!project.log().contains(secret));
}

#[test]
fn twelve_parallel_hooks_of_two_sessions_lose_nothing_and_never_lock() {
    let project = Project::new("parallel");
    // The first hook makes the database; the parallel ones then share it.
    assert_eq!(
        context(&hook(
            &project.0,
            &payload(&project, "Stop", "a", json!({}))
        )),
        None
    );
    let children: Vec<_> = (0..12)
        .map(|i| {
            let session = if i % 2 == 0 { "a" } else { "b" };
            let event = payload(
                &project,
                "PostToolUse",
                session,
                json!({"tool_name": "Bash", "tool_input": {"command": format!("ls step{i}")},
                       "tool_response": {"stdout": format!("file{i}")}, "tool_use_id": format!("t{i}")}),
            );
            let dir = project.0.clone();
            std::thread::spawn(move || hook(&dir, &event))
        })
        .collect();
    for child in children {
        assert_eq!(context(&child.join().expect("hook thread")), None);
    }
    for session in ["a", "b"] {
        assert_eq!(
            count(
                &project.db(),
                "SELECT count(*) FROM hook_events WHERE session_id = ?1",
                session
            ),
            6,
            "every event of session {session} is logged once"
        );
    }
    assert_eq!(project.log(), "", "no hook failed (no database-is-locked)");
}

/// A real Claude Code session's tool calls, sent one hook process each as Claude Code
/// would, teach what replaying its transcript teaches.
#[test]
fn a_live_session_through_hooks_learns_what_its_transcript_replay_learns() {
    let Some(eval) = eval_dir() else { return };
    let path = eval.join("transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl");
    let text = std::fs::read_to_string(&path).expect("transcript");
    let session = engram::observer::transcript::parse(&text).expect("parses");
    let project = Project::new("live");
    let recorded_root = session.roots.first().cloned().unwrap_or_default();
    let mut calls = std::collections::HashMap::new();
    let mut sent = 0;
    assert_eq!(
        context(&hook(
            &project.0,
            &payload(
                &project,
                "SessionStart",
                "live",
                json!({"source": "startup"})
            )
        )),
        None
    );
    for event in &session.events {
        match event {
            // What the person typed comes as a prompt (the first is the session's task).
            engram::observer::Event::Task { text } => {
                let prompt = payload(
                    &project,
                    "UserPromptSubmit",
                    "live",
                    json!({ "prompt": text }),
                );
                let _ = context(&hook(&project.0, &prompt));
            }
            engram::observer::Event::ToolCall(call) => {
                calls.insert(call.id.clone(), call.clone());
            }
            engram::observer::Event::ToolResult(result) => {
                let Some(call) = calls.get(&result.id) else {
                    continue;
                };
                let mut fields = json!({"tool_name": call.tool, "tool_input": call.input, "tool_use_id": call.id});
                if result.is_error {
                    fields["error"] = json!(result.output);
                } else {
                    fields["tool_response"] = json!(result.output);
                }
                let event = if result.is_error {
                    "PostToolUseFailure"
                } else {
                    "PostToolUse"
                };
                // The recording's paths are under its own folder; here they are this project's.
                let body = payload(&project, event, "live", fields)
                    .replace(&recorded_root, &project.0.to_string_lossy());
                let _ = context(&hook(&project.0, &body));
                sent += 1;
                // Claude Code stops after each turn; a stop halfway finalizes what was seen.
                if sent == 90 {
                    let stop = payload(&project, "Stop", "live", json!({}));
                    assert_eq!(context(&hook(&project.0, &stop)), None);
                }
            }
            _ => {}
        }
    }
    assert!(sent > 100, "only {sent} tool events");
    assert_eq!(
        context(&hook(
            &project.0,
            &payload(&project, "SessionEnd", "live", json!({"reason": "other"}))
        )),
        None
    );
    assert_eq!(project.log(), "", "no hook failed");

    let replayed = project.0.join("replayed.db");
    let output = Command::new(env!("CARGO_BIN_EXE_engram"))
        .arg("--db")
        .arg(&replayed)
        .args(["--no-embed", "observe", "replay"])
        .arg(&path)
        .output()
        .expect("engram runs");
    assert!(output.status.success(), "{output:?}");
    let live = memory_contents(&project.db());
    let from_replay = memory_contents(&replayed);
    assert!(!live.is_empty(), "the live session learned nothing");
    assert_eq!(
        live, from_replay,
        "live and replayed sessions learn the same"
    );
}

#[test]
fn a_session_starts_with_standing_decisions_and_a_prompt_never_repeats_them() {
    let project = Project::new("start");
    let output = Command::new(env!("CARGO_BIN_EXE_engram"))
        .arg("--db")
        .arg(project.db())
        .args([
            "--no-embed",
            "remember",
            "Use CSS grid, not flexbox, for the dashboard layout",
            "--type",
            "decision",
        ])
        .output()
        .expect("engram runs");
    assert!(output.status.success(), "{output:?}");
    let start = context(&hook(
        &project.0,
        &payload(&project, "SessionStart", "s1", json!({"source": "startup"})),
    ))
    .expect("the standing decision opens the session");
    assert!(start.contains("CSS grid"), "{start}");
    let prompt = payload(
        &project,
        "UserPromptSubmit",
        "s1",
        json!({"prompt": "build the dashboard layout with CSS grid"}),
    );
    assert_eq!(
        context(&hook(&project.0, &prompt)),
        None,
        "shown at the start, so not again"
    );
    assert_eq!(project.log(), "");
}

#[test]
fn status_shows_the_hooks_sessions_and_their_last_errors() {
    let project = Project::new("status");
    std::fs::create_dir_all(project.0.join(".claude")).expect(".claude");
    std::fs::write(
        project.0.join(".claude/settings.json"),
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "engram hook"}]}]}}"#,
    )
    .expect("settings");
    let read = read_of(&project, "s1", "src/app.py");
    assert_eq!(context(&hook(&project.0, &read)), None);
    assert_eq!(context(&hook(&project.0, "garbage")), None);
    let output = Command::new(env!("CARGO_BIN_EXE_engram"))
        .args(["--no-embed", "--json", "status"])
        .current_dir(&project.0)
        .env_remove("ENGRAM_DB")
        .output()
        .expect("engram runs");
    assert!(output.status.success(), "{output:?}");
    let status: Json = serde_json::from_slice(&output.stdout).expect("status JSON");
    let hooks = &status["hooks"];
    assert_eq!(hooks["sessionsLogged"], 1, "{status}");
    assert_eq!(hooks["eventsLogged"], 1, "{status}");
    assert_eq!(
        hooks["installedIn"].as_array().map(Vec::len),
        Some(1),
        "{status}"
    );
    assert_eq!(
        hooks["recentErrors"].as_array().map(Vec::len),
        Some(1),
        "{status}"
    );
}

/// A session start starts the project's resident helper; the next prompt is answered by
/// it exactly as a hook answering itself would; it is gone soon after the session ends.
#[test]
fn the_resident_helper_answers_as_a_hook_would_and_leaves_with_its_session() {
    let project = Project::new("helper");
    for (kind, text, file) in [
        (
            "decision",
            "Use CSS grid, not flexbox, for the dashboard layout",
            None,
        ),
        (
            "gotcha",
            "The dashboard cache must be cleared after a schema migration",
            Some("src/a.py"),
        ),
    ] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_engram"));
        command.arg("--db").arg(project.db()).args([
            "--no-embed",
            "remember",
            "--type",
            kind,
            text,
        ]);
        if let Some(file) = file {
            touch(&project, file);
            command.args(["--file", file]);
        }
        assert!(command.output().expect("engram runs").status.success());
    }
    let start = payload(&project, "SessionStart", "h1", json!({"source": "startup"}));
    let opened = context(&hook_with_model(&project.0, &start, true)).expect("a start context");
    assert!(opened.contains("CSS grid"), "{opened}");
    let status = || {
        let output = Command::new(env!("CARGO_BIN_EXE_engram"))
            .args(["--json", "--no-embed", "status"])
            .current_dir(&project.0)
            .env_remove("ENGRAM_DB")
            .output()
            .expect("engram runs");
        serde_json::from_slice::<Json>(&output.stdout).expect("status JSON")
    };
    wait_until("the helper answers", || {
        status()["hooks"]["helpers"]
            .as_array()
            .is_some_and(|h| h.len() == 1)
    });

    let ask = "why is the dashboard cache stale after the migration?";
    let prompt = |session: &str| {
        payload(
            &project,
            "UserPromptSubmit",
            session,
            json!({"prompt": ask}),
        )
    };
    let by_helper = context(&hook_with_model(&project.0, &prompt("h1"), true));
    let by_itself = context(&hook_with_model(&project.0, &prompt("h2"), false));
    let by_helper = by_helper.expect("the helper finds the gotcha");
    assert!(by_helper.contains("dashboard cache"), "{by_helper}");
    assert_eq!(
        Some(by_helper),
        by_itself,
        "the helper answers as the hook itself does"
    );

    let end = payload(&project, "SessionEnd", "h1", json!({"reason": "other"}));
    assert_eq!(context(&hook_with_model(&project.0, &end, true)), None);
    wait_until("the helper leaves after its session", || {
        helper_files(&project).is_empty()
    });
    assert_eq!(status()["hooks"]["helpers"], json!([]));
    assert_eq!(project.log(), "", "no hook failed");
}

/// "fix it" alone finds nothing; with the user's last turn from the session's transcript it
/// finds what that turn was about.
#[test]
fn a_short_prompt_is_searched_with_the_last_turns_of_its_transcript() {
    let project = Project::new("short");
    remember_typed(
        &project,
        "gotcha",
        "The dashboard cache must be cleared after a schema migration",
    );
    let transcript = project.0.join("transcript.jsonl");
    let turns = [
        json!({"type": "user", "message": {"role": "user", "content": "why is the dashboard cache stale after the schema migration?"}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Let me look."}]}}),
        json!({"type": "user", "message": {"role": "user", "content": "fix it"}}),
    ];
    let lines: Vec<String> = turns.iter().map(Json::to_string).collect();
    std::fs::write(&transcript, lines.join("\n") + "\n").expect("transcript");
    let prompt = |session: &str, path: &Path| {
        payload(
            &project,
            "UserPromptSubmit",
            session,
            json!({"prompt": "fix it", "transcript_path": path}),
        )
    };
    let alone = context(&hook(
        &project.0,
        &prompt("s1", Path::new("/nonexistent.jsonl")),
    ));
    assert_eq!(alone, None, "two words find nothing strong");
    let enriched = context(&hook(&project.0, &prompt("s2", &transcript)))
        .expect("the last turn's subject is found");
    assert!(enriched.contains("dashboard cache"), "{enriched}");
    assert_eq!(project.log(), "");
}

/// A search for what memory already answers gets the answer after the search, from the
/// session's fifth tool call on (the first ones are the agent reading its context).
#[test]
fn a_search_memory_already_answers_gets_the_answer_from_the_fifth_call() {
    let project = Project::new("known");
    remember_typed(
        &project,
        "decision",
        "The upload queue retries three times, then parks the job in the dead letter table",
    );
    let grep = |session: &str, id: usize| {
        payload(
            &project,
            "PostToolUse",
            session,
            json!({"tool_name": "Grep", "tool_use_id": format!("g{id}"),
                   "tool_input": {"pattern": "upload queue retries"},
                   "tool_response": {"mode": "files_with_matches", "filenames": [], "numFiles": 0}}),
        )
    };
    assert_eq!(
        context(&hook(&project.0, &grep("early", 0))),
        None,
        "not at the first call"
    );
    for i in 0..5 {
        let listing = payload(
            &project,
            "PostToolUse",
            "later",
            json!({"tool_name": "Bash", "tool_use_id": format!("b{i}"),
                   "tool_input": {"command": "ls"}, "tool_response": {"stdout": "src\n"}}),
        );
        assert_eq!(context(&hook(&project.0, &listing)), None);
    }
    let answered = context(&hook(&project.0, &grep("later", 9))).expect("memory answers it");
    assert!(answered.contains("dead letter table"), "{answered}");
    assert_eq!(
        context(&hook(&project.0, &grep("later", 10))),
        None,
        "never twice"
    );
    assert_eq!(project.log(), "");
}

/// One tool call of a session, as Claude Code sends it after the call (PostToolUse, or
/// PostToolUseFailure with its error).
fn tool_call(
    project: &Project,
    session: &str,
    id: &str,
    tool: &str,
    input: Json,
    result: Result<Json, &str>,
) -> String {
    let (event, extra) = match result {
        Ok(response) => ("PostToolUse", json!({ "tool_response": response })),
        Err(error) => ("PostToolUseFailure", json!({ "error": error })),
    };
    let mut fields = json!({ "tool_name": tool, "tool_input": input, "tool_use_id": id });
    if let (Some(fields), Some(extra)) = (fields.as_object_mut(), extra.as_object()) {
        fields.extend(extra.clone());
    }
    payload(project, event, session, fields)
}

#[test]
fn a_past_sessions_record_and_its_verified_fix_reach_a_new_session_on_a_similar_task() {
    let project = Project::new("experience");
    touch(&project, "src/settings.py");
    touch(&project, "tests/test_settings.py");
    let file = |f: &str| project.0.join(f);
    let run = |stdin: String| context(&hook(&project.0, &stdin));
    // The first session: the person's task, a failing test, the fix, the test passing.
    run(payload(
        &project,
        "SessionStart",
        "past",
        json!({ "source": "startup" }),
    ));
    run(payload(
        &project,
        "UserPromptSubmit",
        "past",
        json!({ "prompt": "The settings loader crashes with KeyError when the timeout key is missing from settings.toml" }),
    ));
    run(tool_call(
        &project,
        "past",
        "t1",
        "Read",
        json!({ "file_path": file("src/settings.py") }),
        Ok(
            json!({ "type": "text", "file": { "filePath": file("src/settings.py"), "content": "def load(raw):\n    return raw['timeout']\n" } }),
        ),
    ));
    run(tool_call(
        &project,
        "past",
        "t2",
        "Bash",
        json!({ "command": "pytest tests/test_settings.py" }),
        Err("Exit code 1\nE   KeyError: 'timeout'\nFAILED tests/test_settings.py::test_defaults"),
    ));
    run(tool_call(
        &project,
        "past",
        "t3",
        "Edit",
        json!({ "file_path": file("src/settings.py"), "old_string": "return raw['timeout']", "new_string": "return raw.get('timeout', DEFAULT_TIMEOUT)" }),
        Ok(json!({ "filePath": file("src/settings.py") })),
    ));
    run(tool_call(
        &project,
        "past",
        "t4",
        "Bash",
        json!({ "command": "pytest tests/test_settings.py" }),
        Ok(json!({ "stdout": "1 passed", "stderr": "", "interrupted": false })),
    ));
    run(payload(&project, "Stop", "past", json!({})));
    assert_eq!(project.log(), "", "nothing failed");

    // A new session starts with no task yet: no past session is guessed at.
    let start = run(payload(
        &project,
        "SessionStart",
        "new",
        json!({ "source": "startup" }),
    ))
    .unwrap_or_default();
    assert!(!start.contains("Past sessions"), "{start}");
    // Its first prompt, on a similar task, brings the past session back, at the default
    // trust level, with what it changed and how it was validated.
    let context = run(payload(
        &project,
        "UserPromptSubmit",
        "new",
        json!({ "prompt": "Loading settings.toml fails with a KeyError when the retries key is missing" }),
    ))
    .expect("the past session comes back");
    assert!(
        context.contains("Past sessions on similar tasks"),
        "{context}"
    );
    assert!(
        context
            .contains("The settings loader crashes with KeyError when the timeout key is missing"),
        "{context}"
    );
    assert!(context.contains("`src/settings.py`"), "{context}");
    assert!(context.contains("added `DEFAULT_TIMEOUT`"), "{context}");
    assert!(
        context.contains("Validated with `pytest tests/test_settings.py` (passed)"),
        "{context}"
    );
    // Reading the file it fixed brings the verified fix, not waiting for a review.
    let read = run(tool_call(&project, "new", "n1", "Read", json!({ "file_path": file("src/settings.py") }),
        Ok(json!({ "type": "text", "file": { "filePath": file("src/settings.py"), "content": "" } }))))
        .expect("the fix comes with the file");
    assert!(
        read.contains("`pytest tests/test_settings.py` failed with")
            && read.contains("DEFAULT_TIMEOUT"),
        "{read}"
    );
    // The same prompt again brings nothing new: a session is shown a record once.
    let again = run(payload(
        &project,
        "UserPromptSubmit",
        "new",
        json!({ "prompt": "Loading settings.toml fails with a KeyError when the retries key is missing" }),
    ))
    .unwrap_or_default();
    assert!(!again.contains("Past sessions"), "{again}");
    // The past session left exactly one record, however often it was finalized.
    run(payload(&project, "Stop", "past", json!({})));
    let records = rows(
        &project.db(),
        "SELECT count(*) FROM memories WHERE type = 'work_unit_outcome' AND session_id = ?1 AND deprecated = 0",
        vec![Value::from("past")],
    );
    assert_eq!(records[0][0].as_i64("count").expect("count"), 1);
    assert_eq!(project.log(), "", "nothing failed");
}
