//! The parsers on the real recordings in ../shared/eval (skipped, with a message, when the
//! data is absent) and on malformed input.

use std::path::PathBuf;

use engram_observer::transcript::{self, parse_claude_code, Format};
use engram_observer::{Event, PathNormalizer, Scratchpad, SessionKind};

fn eval_dir() -> Option<PathBuf> {
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

fn replay(session: &transcript::Session) -> Scratchpad {
    let mut pad = Scratchpad::new(
        session.id.clone(),
        SessionKind::Build,
        PathNormalizer::new(session.roots.clone()),
    );
    for event in &session.events {
        pad.observe(event);
    }
    pad
}

#[test]
fn a_real_trajectory_reads_as_bash_events() {
    let Some(dir) = eval_dir() else { return };
    let text = std::fs::read_to_string(
        dir.join("trajectories/psf__requests-1142/psf__requests-1142.traj.json"),
    )
    .unwrap();
    let session = transcript::parse(&text).unwrap();
    assert_eq!(session.format, Format::MiniSweAgent);
    assert_eq!(session.id, "psf__requests-1142");
    let calls = session
        .events
        .iter()
        .filter(|e| matches!(e, Event::ToolCall(_)))
        .count();
    let results = session
        .events
        .iter()
        .filter(|e| matches!(e, Event::ToolResult(_)))
        .count();
    // The last call (the submission) and rejected turns get no return code.
    assert!(
        calls > 20 && results * 10 >= calls * 9,
        "{calls} calls, {results} results"
    );
    assert!(session
        .events
        .iter()
        .any(|e| matches!(e, Event::ToolResult(r) if r.is_error)));
    let pad = replay(&session);
    assert_eq!(pad.hot_files(1)[0].path, "requests/models.py");
    assert!(
        pad.files.iter().all(|f| !f.path.starts_with('/')),
        "paths are project-relative"
    );
}

#[test]
fn a_real_claude_code_transcript_reads_tools_errors_and_web_steps() {
    let Some(dir) = eval_dir() else { return };
    let text = std::fs::read_to_string(dir.join("transcripts/tool_heavy.jsonl")).unwrap();
    let session = parse_claude_code(&text).unwrap();
    assert_eq!(session.format, Format::ClaudeCode);
    assert!(session.skipped.is_empty());
    let pad = replay(&session);
    assert!(
        pad.external_step.is_some(),
        "WebSearch/WebFetch open the trust gate"
    );

    let text =
        std::fs::read_to_string(dir.join("transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl"))
            .unwrap();
    let session = transcript::parse(&text).unwrap();
    let errors = session
        .events
        .iter()
        .filter(|e| matches!(e, Event::ToolResult(r) if r.is_error))
        .count();
    assert!(errors > 0);
    let pad = replay(&session);
    assert!(
        !pad.pairs.is_empty(),
        "co-access between the files the session read and edited"
    );
    assert!(pad.hot_files(3).iter().all(|h| h.path.starts_with("lib/")
        || h.path.starts_with("test/")
        || h.path.contains('.')));
    assert!(pad.errors.values().map(|e| e.count).sum::<u32>() as usize >= 1);
}

#[test]
fn malformed_lines_are_skipped_and_named() {
    let good = r#"{"type":"assistant","sessionId":"x","cwd":"/p","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/p/a.rs"}}]}}"#;
    let session = parse_claude_code(&format!("not json\n{good}\n")).unwrap();
    assert_eq!(session.skipped.len(), 1);
    assert!(session.skipped[0].starts_with("line 1"));
    assert_eq!(session.id, "x");
    assert_eq!(replay(&session).hot_files(1)[0].path, "a.rs");
    assert!(parse_claude_code("nothing here").is_err());
    assert!(transcript::parse("plain text").is_err());
    assert!(transcript::parse(r#"{"messages": 3}"#).is_err());
}

#[test]
fn transcripts_without_a_session_id_are_told_apart_and_keep_their_id_as_they_grow() {
    let line =
        |text: &str| format!(r#"{{"type":"user","message":{{"role":"user","content":"{text}"}}}}"#);
    let first = parse_claude_code(&line("fix the login bug")).expect("parses");
    let second = parse_claude_code(&line("add a dark mode")).expect("parses");
    assert_ne!(first.id, second.id);
    assert!(first.id.starts_with("transcript-"), "{}", first.id);
    let grown = format!("{}\n{}\n", line("fix the login bug"), line("and its test"));
    assert_eq!(parse_claude_code(&grown).expect("parses").id, first.id);
}
