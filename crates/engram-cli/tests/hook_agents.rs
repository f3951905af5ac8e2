//! `engram hook` across a session's agents and over its helper's life: a subagent's calls
//! folded in when it stops, what the agent recorded said back later in the session, a
//! helper that hangs, and a helper whose engram binary was upgraded under it.

mod common;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use common::hook::*;
use serde_json::{json, Value as Json};

/// The PostToolUse (or PostToolUseFailure) payloads of the first `n` tool calls of a
/// recorded Claude Code transcript, its paths moved from `recorded_root` to the project's.
fn tool_payloads(
    project: &Project,
    session: &str,
    text: &str,
    recorded_root: &str,
    n: usize,
) -> Vec<String> {
    let recorded = engram::observer::transcript::parse(text).expect("a transcript");
    let mut calls = std::collections::HashMap::new();
    let mut payloads = Vec::new();
    for event in &recorded.events {
        match event {
            engram::observer::Event::ToolCall(call) => {
                calls.insert(call.id.clone(), call.clone());
            }
            engram::observer::Event::ToolResult(result) if payloads.len() < n => {
                let Some(call) = calls.get(&result.id) else {
                    continue;
                };
                let mut fields = json!({"tool_name": call.tool, "tool_input": call.input, "tool_use_id": call.id});
                let event = if result.is_error {
                    fields["error"] = json!(result.output);
                    "PostToolUseFailure"
                } else {
                    fields["tool_response"] = json!(result.output);
                    "PostToolUse"
                };
                let body = payload(project, event, session, fields);
                payloads.push(body.replace(recorded_root, &project.0.to_string_lossy()));
            }
            _ => {}
        }
    }
    payloads
}

/// A real subagent (an Explore agent of a real session, 60-odd calls) stops: the calls
/// the hooks saw become its own, the ones they missed are read from its transcript, no
/// call is logged twice (not even by a second SubagentStop), and the session's finalize
/// learns from every event of both agents.
#[test]
fn a_subagents_calls_are_folded_in_once_and_finalized_with_the_session() {
    let Some(eval) = eval_dir() else { return };
    let recorded = eval.join("transcripts/4d5611e5-241a-462a-8d15-5122611a9569");
    let recorded_root = "/home/USER/projects/spotter-worktrees/spotter-dov";
    let main_text =
        std::fs::read_to_string(recorded.with_extension("jsonl")).expect("main transcript");
    let sub_text = std::fs::read_to_string(recorded.join("subagents/agent-a2898e3.jsonl"))
        .expect("subagent transcript");
    let project = Project::new("subagent");
    let here = project.0.to_string_lossy().into_owned();
    let sub_path = project.0.join("agent-a2898e3.jsonl");
    std::fs::write(&sub_path, sub_text.replace(recorded_root, &here)).expect("transcript copied");
    let sub_calls: std::collections::HashSet<String> =
        engram::observer::transcript::parse(&sub_text)
            .expect("parses")
            .events
            .iter()
            .filter_map(|e| match e {
                engram::observer::Event::ToolCall(call) => call.id.clone(),
                _ => None,
            })
            .collect();
    assert!(
        sub_calls.len() > 30,
        "only {} subagent calls",
        sub_calls.len()
    );

    // The main agent's first calls, then the subagent's first ten, as hooks of a client
    // that does not say which agent made a call.
    for body in tool_payloads(&project, "s", &main_text, recorded_root, 12)
        .into_iter()
        .chain(tool_payloads(&project, "s", &sub_text, recorded_root, 10))
    {
        assert_eq!(context(&hook(&project.0, &body)), None);
    }
    let stop = payload(
        &project,
        "SubagentStop",
        "s",
        json!({"agent_id": "a2898e3", "agent_type": "Explore", "agent_transcript_path": sub_path,
               "stop_hook_active": false}),
    );
    let db = project.db();
    let logged = |sql: &str| count(&db, sql, "s");
    let by_agent =
        "SELECT count(*) FROM hook_events WHERE session_id = ?1 AND agent_id = 'a2898e3'";
    let by_main = "SELECT count(*) FROM hook_events WHERE session_id = ?1 AND agent_id IS NULL";
    for _ in 0..2 {
        assert_eq!(context(&hook(&project.0, &stop)), None);
        assert_eq!(
            logged(by_agent),
            sub_calls.len() as i64,
            "each subagent call once, as its own"
        );
        assert_eq!(logged(by_main), 12, "the main agent's calls stay its own");
    }
    assert_eq!(
        logged("SELECT count(DISTINCT call_id) FROM hook_events WHERE session_id = ?1"),
        logged("SELECT count(*) FROM hook_events WHERE session_id = ?1"),
        "no call logged twice"
    );

    assert_eq!(
        context(&hook(
            &project.0,
            &payload(&project, "Stop", "s", json!({}))
        )),
        None
    );
    assert_eq!(project.log(), "", "no hook failed");
    assert_eq!(
        logged("SELECT events FROM observer_sessions WHERE session_id = ?1"),
        logged("SELECT sum(json_array_length(events)) FROM hook_events WHERE session_id = ?1"),
        "the finalize observed every event of both agents"
    );
}

/// Records a memory through `engram mcp` as the agent does; the tool's answer as Claude
/// Code hands it to a PostToolUse hook (the MCP result's content blocks).
fn record_through_mcp(project: &Project, kind: &str, content: &str) -> Json {
    let mut child = Command::new(env!("CARGO_BIN_EXE_engram"))
        .arg("--db")
        .arg(project.db())
        .args(["--no-embed", "mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("engram mcp starts");
    let mut input = child.stdin.take().expect("stdin");
    for line in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "record_memory", "arguments": {"type": kind, "content": content}}}),
    ] {
        writeln!(input, "{line}").expect("request written");
    }
    drop(input);
    let mut text = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut text)
        .expect("answers read");
    assert!(child.wait().expect("exits").success());
    let answer = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Json>(line).ok())
        .find(|message| message["id"] == 2)
        .expect("the call's answer");
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    answer["result"]["content"].clone()
}

fn bash(project: &Project, session: &str, i: usize) -> String {
    payload(
        project,
        "PostToolUse",
        session,
        json!({"tool_name": "Bash", "tool_input": {"command": format!("ls -la build/{i}")},
               "tool_response": {"stdout": "total 0", "stderr": "", "interrupted": false},
               "tool_use_id": format!("toolu_ls_{i}")}),
    )
}

/// What the agent recorded with engram's MCP tool is said back once twenty calls have
/// passed (before, it is still in view), never twice; a compacted session gets what it
/// recorded back at its start.
#[test]
fn what_the_agent_recorded_is_said_back_later_and_after_a_compaction() {
    let project = Project::new("reflect");
    let content = "The staging deploy needs the VPN: the artifact host is not public";
    let answer = record_through_mcp(&project, "gotcha", content);
    let record = payload(
        &project,
        "PostToolUse",
        "r",
        json!({"tool_name": "mcp__engram__record_memory", "tool_input": {"type": "gotcha", "content": content},
               "tool_response": answer, "tool_use_id": "toolu_record"}),
    );
    assert_eq!(
        context(&hook(&project.0, &record)),
        None,
        "not said back at once"
    );
    let mut said = Vec::new();
    for i in 1..=24 {
        if let Some(text) = context(&hook(&project.0, &bash(&project, "r", i))) {
            said.push((i, text));
        }
    }
    assert_eq!(said.len(), 1, "said back once: {said:?}");
    let (at, text) = &said[0];
    assert_eq!(*at, 21, "after twenty calls");
    assert!(
        text.contains("You recorded this session") && text.contains("staging deploy"),
        "{text}"
    );
    let compact = payload(&project, "SessionStart", "r", json!({"source": "compact"}));
    let after = context(&hook(&project.0, &compact)).unwrap_or_default();
    assert!(
        !after.contains("staging deploy"),
        "already said back: {after}"
    );

    // Another session records and is compacted before twenty calls pass.
    let record = record.replace("\"session_id\":\"r\"", "\"session_id\":\"c\"");
    assert!(record.contains("\"session_id\":\"c\""));
    assert_eq!(context(&hook(&project.0, &record)), None);
    let compact = payload(&project, "SessionStart", "c", json!({"source": "compact"}));
    let after = context(&hook(&project.0, &compact)).expect("context after the compaction");
    assert!(
        after.contains("You recorded this session") && after.contains("staging deploy"),
        "{after}"
    );
    assert_eq!(project.log(), "", "no hook failed");
}

fn sockets(project: &Project) -> Vec<String> {
    let mut names: Vec<String> = helper_files(project)
        .into_iter()
        .filter(|name| name.ends_with(".sock"))
        .collect();
    names.sort();
    names
}

/// `engram hook` run from `exe`, with the model and the helper on.
fn hook_from(exe: &Path, dir: &Path, stdin: &str) -> std::process::Output {
    let mut command = Command::new(exe);
    command
        .env("ENGRAM_MODEL_DIR", model_dir())
        .env("ENGRAM_HOOK_HELPER", "on")
        .env("ENGRAM_HOOK_HELPER_LINGER_SECS", "1");
    run_hook(command, dir, stdin)
}

/// A helper that takes a payload and never answers: the hook gives up on it after a few
/// seconds, takes it out of service (its socket removed, so the next hooks do not wait on
/// it) and answers itself, and the call is logged once.
#[test]
fn a_helper_that_hangs_is_taken_out_of_service_and_the_hook_answers_itself() {
    let project = Project::new("hung");
    let start = payload(&project, "SessionStart", "h", json!({"source": "startup"}));
    let _ = context(&hook_with_model(&project.0, &start, true));
    wait_until("a helper listens", || sockets(&project).len() == 1);
    let socket = project.0.join(".engram").join(&sockets(&project)[0]);
    // The helper is stuck: something holds its socket, takes payloads and never answers.
    std::fs::remove_file(&socket).expect("socket removed");
    let listener = std::os::unix::net::UnixListener::bind(&socket).expect("stuck listener");
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    touch(&project, "src/a.py");
    let read = read_of(&project, "h", "src/a.py");
    assert_eq!(context(&hook_with_model(&project.0, &read, true)), None);
    assert!(
        project.log().contains("did not answer"),
        "{}",
        project.log()
    );
    assert!(!socket.exists(), "the stuck helper is out of service");
    assert_eq!(
        count(
            &project.db(),
            "SELECT count(*) FROM hook_events WHERE session_id = ?1",
            "h"
        ),
        1,
        "the hook logged the call itself"
    );
    // Sent again (Claude Code does not, but a slow helper may have logged it after all):
    // still one row.
    assert_eq!(context(&hook(&project.0, &read)), None);
    assert_eq!(
        count(
            &project.db(),
            "SELECT count(*) FROM hook_events WHERE session_id = ?1",
            "h"
        ),
        1
    );
}

/// engram upgraded while its helper runs (a new file at the binary's path): the old helper
/// leaves, and the new binary's hooks start a helper of their own.
#[test]
fn an_upgraded_engram_gets_a_new_helper_and_the_old_one_leaves() {
    let project = Project::new("upgrade");
    let bin = project.0.join("bin");
    std::fs::create_dir_all(&bin).expect("bin folder");
    let exe = bin.join("engram");
    std::fs::copy(env!("CARGO_BIN_EXE_engram"), &exe).expect("installed");
    let start = |session: &str| {
        payload(
            &project,
            "SessionStart",
            session,
            json!({"source": "startup"}),
        )
    };
    let _ = context(&hook_from(&exe, &project.0, &start("u1")));
    wait_until("the helper listens", || sockets(&project).len() == 1);
    let before = sockets(&project);

    // An installer writes the new version beside the old and renames it into place.
    let staged = bin.join("engram.new");
    std::fs::copy(env!("CARGO_BIN_EXE_engram"), &staged).expect("staged");
    std::fs::rename(&staged, &exe).expect("upgraded");
    wait_until("the old helper leaves", || sockets(&project).is_empty());

    let _ = context(&hook_from(&exe, &project.0, &start("u2")));
    wait_until("a new helper listens", || sockets(&project).len() == 1);
    assert_ne!(
        sockets(&project),
        before,
        "the new binary's helper is another"
    );
    let end = payload(&project, "SessionEnd", "u2", json!({"reason": "other"}));
    let _ = context(&hook_from(&exe, &project.0, &end));
    wait_until("the new helper leaves after its session", || {
        sockets(&project).is_empty()
    });
    assert_eq!(project.log(), "", "no hook failed");
}
