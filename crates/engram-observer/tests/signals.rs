//! Each signal pinned with the event sequences agents produce (Claude Code tool names and
//! inputs, bash commands as mini-swe-agent runs them), plus the trust gate, caps, discard on
//! failure, checkpoint/restore and secret redaction.

use engram_observer::{
    Event, Outcome, PathNormalizer, Prior, Scratchpad, SessionKind, SignalClass, ToolCall,
    ToolResult,
};
use serde_json::json;

struct Session {
    pad: Scratchpad,
    next: u32,
}

impl Session {
    fn new(kind: SessionKind) -> Self {
        Session {
            pad: Scratchpad::new("s", kind, PathNormalizer::new(["/repo"])),
            next: 0,
        }
    }
    fn call(
        &mut self,
        step: u32,
        tool: &str,
        input: serde_json::Value,
        output: &str,
        is_error: bool,
    ) -> &mut Self {
        self.next += 1;
        let id = format!("t{}", self.next);
        self.pad.observe(&Event::ToolCall(ToolCall {
            step,
            id: Some(id.clone()),
            tool: tool.into(),
            input,
            at_ms: None,
        }));
        self.pad.observe(&Event::ToolResult(ToolResult {
            step,
            id: Some(id),
            output: output.into(),
            is_error,
        }));
        self
    }
    fn read(&mut self, step: u32, path: &str) -> &mut Self {
        self.call(
            step,
            "Read",
            json!({ "file_path": format!("/repo/{path}") }),
            "contents",
            false,
        )
    }
    fn edit(&mut self, step: u32, path: &str) -> &mut Self {
        self.call(
            step,
            "Edit",
            json!({ "file_path": format!("/repo/{path}"), "old_string": "a", "new_string": "b" }),
            "ok",
            false,
        )
    }
    fn bash(&mut self, step: u32, command: &str, output: &str, is_error: bool) -> &mut Self {
        self.call(
            step,
            "Bash",
            json!({ "command": command }),
            output,
            is_error,
        )
    }
    /// A failing test run, an edit of `src/cfg.py` from `old` to `new`, the test passing.
    fn timeout_fixed(&mut self, old: &str, new: &str) -> &mut Self {
        self.bash(
            1,
            "pytest tests/test_cfg.py",
            "E   KeyError: 'timeout'",
            true,
        );
        self.call(
            2,
            "Edit",
            json!({ "file_path": "/repo/src/cfg.py", "old_string": old, "new_string": new }),
            "ok",
            false,
        );
        self.bash(3, "pytest tests/test_cfg.py", "1 passed", false)
    }
    fn say(&mut self, step: u32, text: &str) -> &mut Self {
        self.pad.observe(&Event::Reasoning {
            step,
            text: text.into(),
        });
        self
    }
    fn keys(&self, class: SignalClass) -> Vec<String> {
        self.pad
            .observations()
            .into_iter()
            .filter(|o| o.class == class)
            .map(|o| o.key)
            .collect()
    }
}

/// Prior statistics in which every observation key has been seen often enough.
fn seasoned(pad: &Scratchpad) -> Prior {
    let mut prior = Prior::default();
    for o in pad.observations() {
        prior.sessions.insert(o.key.clone(), 10);
        prior.occurrences.insert(o.key, 10);
    }
    prior
}

#[test]
fn file_access_ranks_edits_over_reads_and_drops_scratch_files() {
    let mut s = Session::new(SessionKind::Build);
    s.read(1, "src/a.py")
        .read(2, "src/b.py")
        .read(3, "src/b.py")
        .edit(4, "src/a.py");
    s.bash(5, "cat <<'EOF' > repro.py\nimport a\nEOF", "", false)
        .bash(6, "python repro.py", "ok", false);
    s.bash(7, "cat <<'EOF' > gone.py\nx\nEOF\nrm gone.py", "", false);
    let hot: Vec<String> = s.pad.hot_files(5).into_iter().map(|h| h.path).collect();
    // A file the session created is not the project's until the host says it is still
    // there; one it created and deleted never is.
    assert_eq!(hot, vec!["src/a.py".to_owned(), "src/b.py".to_owned()]);
    s.pad.set_file_presence(
        [("repro.py".to_owned(), true), ("gone.py".to_owned(), true)]
            .into_iter()
            .collect(),
    );
    let hot: Vec<String> = s.pad.hot_files(5).into_iter().map(|h| h.path).collect();
    assert_eq!(hot[0], "src/a.py");
    assert_eq!(hot[1], "src/b.py");
    assert_eq!(
        hot.last().map(String::as_str),
        Some("repro.py"),
        "created files rank last: {hot:?}"
    );
    assert!(!hot.contains(&"gone.py".to_owned()));
    assert!(s
        .keys(SignalClass::FileAccess)
        .contains(&"file:src/a.py".to_owned()));
}

#[test]
fn co_access_needs_the_three_step_window() {
    let mut s = Session::new(SessionKind::Build);
    s.read(1, "a.py").read(2, "b.py").read(9, "c.py");
    let keys = s.keys(SignalClass::CoAccess);
    assert_eq!(keys, vec!["co:a.py|b.py".to_owned()]);
    // Three sessions are needed: with two earlier ones it is promoted as a causal dependency.
    let mut prior = Prior::default();
    let done = s.pad.finalize(Outcome::Success, &prior);
    assert!(done
        .discarded
        .iter()
        .any(|d| d.key == "co:a.py|b.py" && d.reason.starts_with("frequency")));
    prior.sessions.insert("co:a.py|b.py".into(), 2);
    let done = s.pad.finalize(Outcome::Success, &prior);
    let promoted = done
        .promoted
        .iter()
        .find(|c| c.observation.key == "co:a.py|b.py")
        .expect("promoted");
    assert_eq!(
        promoted.memory.memory_type,
        engram_observer::finalize::memory_type_of(SignalClass::CoAccess)
    );
    assert_eq!(promoted.observation.evidence_steps, vec![2]);
    assert!(
        !promoted.memory.flags.needs_review,
        "three sessions are evidence enough to inject it unreviewed"
    );
}

#[test]
fn error_retry_records_the_fix() {
    let mut s = Session::new(SessionKind::Build);
    let failure = "Traceback (most recent call last):\n  File \"/repo/tests/test_x.py\", line 3\nImportError: cannot import name 'parse' from 'src.x'";
    s.bash(1, "python -m pytest tests/test_x.py", failure, true);
    s.edit(2, "src/x.py");
    s.bash(3, "python -m pytest tests/test_x.py", failure, true);
    s.edit(4, "src/x.py");
    s.bash(5, "python -m pytest tests/test_x.py", "1 passed", false);
    let error = s.pad.errors.values().next().expect("one error");
    assert_eq!(error.count, 2);
    assert_eq!(error.resolved_step, Some(5));
    let done = s.pad.finalize(Outcome::Success, &Prior::default());
    let memory = done
        .promoted
        .iter()
        .find(|c| c.observation.class == SignalClass::ErrorRetry)
        .expect("two occurrences promote");
    assert_eq!(memory.observation.evidence_steps, vec![1, 3, 5]);
    assert!(
        memory
            .memory
            .content
            .contains("ImportError: cannot import name 'parse'"),
        "{}",
        memory.memory.content
    );
    assert!(memory.memory.content.contains("`src/x.py`"));
    assert!(
        memory
            .memory
            .content
            .starts_with("`python -m pytest tests/test_x.py` failed with"),
        "{}",
        memory.memory.content
    );
    assert_eq!(memory.memory.related_files, vec!["src/x.py".to_owned()]);
    assert!(
        !memory.memory.flags.needs_review,
        "a fix verified by a passing run is injected unreviewed"
    );
}

#[test]
fn an_error_fix_says_what_the_edit_changed_and_an_unfixed_error_is_no_memory() {
    let mut s = Session::new(SessionKind::Build);
    s.timeout_fixed(
        "def load(raw):\n    return raw['timeout']\n",
        "def load(raw):\n    return raw.get('timeout', DEFAULT_TIMEOUT)\n",
    );
    for step in 4..7 {
        s.bash(
            step,
            "python scratch.py",
            "NameError: name 'q' is not defined",
            true,
        );
    }
    let done = s.pad.finalize(Outcome::Success, &Prior::default());
    let fixes: Vec<&str> = done
        .promoted
        .iter()
        .filter(|c| c.observation.class == SignalClass::ErrorRetry)
        .map(|c| c.memory.content.as_str())
        .collect();
    assert_eq!(
        fixes,
        vec!["`pytest tests/test_cfg.py` failed with `E   KeyError: 'timeout'`; it passed after changing `src/cfg.py` (added `DEFAULT_TIMEOUT`, `raw.get` in `load`)."]
    );
    assert!(done
        .discarded
        .iter()
        .any(|d| d.class == SignalClass::ErrorRetry && d.reason.starts_with("content")));
}

#[test]
fn template_classes_are_counted_but_never_written() {
    let mut s = Session::new(SessionKind::Build);
    for step in 1..5 {
        s.read(step, "src/big.py");
        s.call(step, "Grep", json!({ "pattern": "def resolve" }), "", false);
    }
    s.edit(5, "src/a.py").edit(6, "src/a.py");
    s.bash(7, "pytest", "ok", false);
    let prior = seasoned(&s.pad);
    let done = s.pad.finalize(Outcome::Success, &prior);
    for candidate in &done.promoted {
        assert!(
            !candidate.observation.class.retired(),
            "{:?} promoted: {}",
            candidate.observation.class,
            candidate.memory.content
        );
    }
    for key in [
        "file:src/a.py",
        "grep:def resolve",
        "read_abandon:src/big.py",
    ] {
        assert!(done.observed.iter().any(|(k, _)| k == key), "{key} counted");
        assert!(done
            .discarded
            .iter()
            .any(|d| d.key == key && d.reason.starts_with("retired")));
    }
}

#[test]
fn scratch_files_are_never_cited() {
    let mut s = Session::new(SessionKind::Build);
    s.bash(
        1,
        "cat <<'EOF' > reproduce_issue.py\nimport a\nEOF",
        "",
        false,
    );
    s.read(2, "src/a.py").read(3, "reproduce_issue.py");
    s.read(4, "build/lib/pkg/a.py").read(5, "src/a.py.bak");
    s.read(6, "src/b.py");
    s.bash(7, "python reproduce_issue.py", "AttributeError: x", true);
    s.edit(8, "src/a.py").edit(8, "build/lib/pkg/a.py");
    s.bash(9, "python reproduce_issue.py", "ok", false);
    let prior = seasoned(&s.pad);
    let done = s.pad.finalize(Outcome::Success, &prior);
    let cited: Vec<&String> = done
        .promoted
        .iter()
        .flat_map(|c| &c.memory.related_files)
        .chain(done.record.iter().flat_map(|r| &r.related_files))
        .collect();
    assert!(!cited.is_empty());
    for path in cited {
        assert!(
            path == "src/a.py" || path == "src/b.py",
            "{path} is not the project's"
        );
    }
    for hot in s.pad.hot_files(10) {
        assert!(hot.path.starts_with("src/") && !hot.path.ends_with(".bak"));
    }
    // The failing run of the session's own script is no error memory: it cannot be run
    // again.
    assert!(!done
        .promoted
        .iter()
        .any(|c| c.observation.class == SignalClass::ErrorRetry));
}

#[test]
fn a_session_record_states_task_changes_validation_fixes_and_outcome() {
    let mut s = Session::new(SessionKind::Build);
    s.pad.observe(&Event::Task {
        text: "<pr_description>\nConsider the following PR description:\nConfig loader crashes\n   when `timeout` is missing\n</pr_description>\n<instructions>do it</instructions>".into(),
    });
    s.timeout_fixed(
        "return raw['timeout']",
        "return raw.get('timeout', DEFAULT_TIMEOUT)",
    );
    let record = s.pad.session_record(Outcome::Success).expect("a record");
    assert_eq!(
        record.content,
        "Past session's task: Config loader crashes when `timeout` is missing\n\
Changed: `src/cfg.py` (added `DEFAULT_TIMEOUT`, `raw.get`).\n\
Validated with `pytest tests/test_cfg.py` (passed).\n\
Fixed on the way: `pytest tests/test_cfg.py` failed with `E   KeyError: 'timeout'`; it passed after changing `src/cfg.py`.\n\
Outcome: resolved."
    );
    assert_eq!(record.related_files, vec!["src/cfg.py".to_owned()]);
    assert!(engram_observer::finalize::is_session_record(&record.tags));
    assert!(!record.flags.needs_review);
    let failed = s.pad.session_record(Outcome::Failure).expect("a record");
    assert!(failed
        .content
        .ends_with("Outcome: not resolved (its last test run failed)."));
    // A session that neither stated a task nor changed a file leaves no record.
    let mut idle = Session::new(SessionKind::Build);
    idle.read(1, "src/a.py");
    assert!(idle.pad.session_record(Outcome::Success).is_none());
}

#[test]
fn a_reverted_edit_is_a_dead_end_with_the_agents_reason() {
    let mut s = Session::new(SessionKind::Build);
    s.read(1, "src/cfg.py");
    s.bash(
        2,
        "sed -i 's/return parse(raw)/return parse_lenient(raw)/' src/cfg.py",
        "",
        false,
    );
    s.say(
        3,
        "This approach won't work because `parse_lenient` drops unknown keys.",
    );
    s.bash(4, "git checkout -- src/cfg.py", "", false);
    let done = s.pad.finalize(Outcome::Failure, &Prior::default());
    let dead: Vec<&str> = done
        .promoted
        .iter()
        .filter(|c| c.observation.key.starts_with("reverted:"))
        .map(|c| c.memory.content.as_str())
        .collect();
    assert_eq!(
        dead,
        vec!["Changing `src/cfg.py` (`parse` → `parse_lenient`) was tried and reverted. The agent's reason: This approach won't work because `parse_lenient` drops unknown keys."]
    );
    // Reverted work is not what the session changed.
    assert!(done.record.is_none());
}

#[test]
fn grep_exit_one_and_file_utilities_are_not_error_patterns() {
    let mut s = Session::new(SessionKind::Build);
    for step in 1..=4 {
        s.bash(
            step,
            "rm missing.py",
            "rm: cannot remove 'missing.py': No such file or directory",
            true,
        );
    }
    assert!(s.keys(SignalClass::ErrorRetry).is_empty());
}

#[test]
fn backtrack_read_abandon_and_repeated_grep() {
    let mut s = Session::new(SessionKind::Build);
    s.edit(1, "src/a.py")
        .edit(3, "src/a.py")
        .edit(20, "src/a.py");
    for step in 4..8 {
        s.read(step, "src/big.py");
    }
    for step in 8..11 {
        s.call(
            step,
            "Grep",
            json!({ "pattern": "def resolve", "path": "/repo/src" }),
            "",
            false,
        );
    }
    assert_eq!(
        s.keys(SignalClass::Backtrack),
        vec!["backtrack:src/a.py".to_owned()]
    );
    assert_eq!(
        s.keys(SignalClass::ReadAbandon),
        vec!["read_abandon:src/big.py".to_owned()]
    );
    assert_eq!(
        s.keys(SignalClass::RepeatedGrep),
        vec!["grep:def resolve".to_owned()]
    );
    assert_eq!(s.pad.searches["def resolve"].misses, 3);
}

#[test]
fn self_correction_and_dead_end_from_the_agents_words() {
    let mut s = Session::new(SessionKind::Build);
    s.read(1, "src/cache.py");
    s.say(
        2,
        "I was wrong about the cache. `Loader.get` in cache.py is actually lazy, so the key is built later.",
    );
    s.say(3, "Let me run it again.");
    s.say(
        4,
        "This approach won't work because the `db` fixture is session-scoped.",
    );
    let corrections = s
        .pad
        .observations()
        .into_iter()
        .filter(|o| o.class == SignalClass::SelfCorrection)
        .collect::<Vec<_>>();
    assert_eq!(corrections.len(), 1);
    assert_eq!(corrections[0].files, vec!["src/cache.py".to_owned()]);
    assert_eq!(corrections[0].evidence_steps, vec![2]);
    assert_eq!(s.keys(SignalClass::DeadEnd).len(), 1);
}

#[test]
fn config_touch_sequences_tests_globs_and_import_chases() {
    let mut s = Session::new(SessionKind::Build);
    for round in 0..3 {
        let step = round * 3 + 1;
        s.read(step, "src/a.py").edit(step + 1, "src/b.py").bash(
            step + 2,
            "pytest tests/test_b.py",
            "ok",
            false,
        );
    }
    s.edit(10, "setup.cfg").edit(10, "src/c.py");
    s.call(11, "Glob", json!({ "pattern": "**/*.proto" }), "", false);
    s.call(
        12,
        "Grep",
        json!({ "pattern": "import engine" }),
        "src/c.py:1:import engine",
        false,
    );
    s.read(13, "src/engine.py");
    assert_eq!(
        s.keys(SignalClass::ConfigTouch),
        vec!["config:setup.cfg".to_owned()]
    );
    assert_eq!(
        s.keys(SignalClass::ToolSequence),
        vec!["seq:read>edit>test".to_owned()]
    );
    assert_eq!(
        s.keys(SignalClass::TestOrder),
        vec!["tests:pytest tests/test_b.py".to_owned()]
    );
    assert_eq!(
        s.keys(SignalClass::GlobIgnore),
        vec!["glob:**/*.proto".to_owned()]
    );
    assert_eq!(
        s.keys(SignalClass::ImportChase),
        vec!["chase:src/engine.py".to_owned()]
    );
}

#[test]
fn token_spikes_pauses_and_step_overrun() {
    let mut s = Session::new(SessionKind::Build);
    for step in 1..=4 {
        s.pad.observe(&Event::StepComplete {
            step,
            input_tokens: Some(20_000),
        });
    }
    s.read(5, "src/huge.py");
    s.pad.observe(&Event::StepComplete {
        step: 5,
        input_tokens: Some(90_000),
    });
    for (i, at) in [0u64, 1_000, 2_000, 3_000, 4_000, 5_000, 600_000]
        .iter()
        .enumerate()
    {
        s.pad.observe(&Event::ToolCall(ToolCall {
            step: 6 + i as u32,
            id: None,
            tool: "Read".into(),
            input: json!({ "file_path": "src/huge.py" }),
            at_ms: Some(*at),
        }));
    }
    assert_eq!(
        s.keys(SignalClass::ContextTokenSpike),
        vec!["spike:src".to_owned()]
    );
    assert_eq!(
        s.keys(SignalClass::TimeAnomaly),
        vec!["slow:src/huge.py".to_owned()]
    );
    // Overrun: 12 steps against a mean of 4 over three earlier sessions.
    let mut prior = Prior::default();
    prior.sessions.insert("steps:src".into(), 3);
    prior.occurrences.insert("steps:src".into(), 12);
    let done = s.pad.finalize(Outcome::Success, &prior);
    assert!(done
        .discarded
        .iter()
        .any(|d| d.class == SignalClass::StepOverrun && d.reason.starts_with("retired")));
    assert!(s.keys(SignalClass::StepOverrun) == vec!["steps:src".to_owned()]);
}

#[test]
fn trust_gate_marks_everything_after_a_web_fetch() {
    let mut s = Session::new(SessionKind::Build);
    s.read(1, "a.py").read(2, "b.py");
    s.call(
        3,
        "WebFetch",
        json!({ "url": "https://example.com", "prompt": "x" }),
        "page",
        false,
    );
    s.read(4, "c.py").read(5, "d.py");
    let prior = seasoned(&s.pad);
    let done = s.pad.finalize(Outcome::Success, &prior);
    let before = done
        .promoted
        .iter()
        .find(|c| c.observation.key == "co:a.py|b.py")
        .unwrap();
    let after = done
        .promoted
        .iter()
        .find(|c| c.observation.key == "co:c.py|d.py")
        .unwrap();
    assert!(!before.memory.flags.contaminated);
    assert!(after.memory.flags.contaminated && after.memory.flags.needs_review);
    let ratio = after.memory.confidence / before.memory.confidence;
    assert!((ratio - 0.7).abs() < 0.01, "{ratio}");
    assert!(s.keys(SignalClass::ExternalReference).len() == 1);
}

#[test]
fn caps_per_session_kind() {
    let mut s = Session::new(SessionKind::Insights);
    for i in 0..12 {
        s.read(i * 10 + 1, &format!("m/f{i}.py"))
            .read(i * 10 + 2, &format!("m/g{i}.py"));
    }
    let prior = seasoned(&s.pad);
    let done = s.pad.finalize(Outcome::Success, &prior);
    assert_eq!(done.promoted.len(), 5);
    assert!(done.discarded.iter().any(|d| d.reason.starts_with("cap")));
    let confidences: Vec<f64> = done.promoted.iter().map(|c| c.memory.confidence).collect();
    assert!(
        confidences.windows(2).all(|w| w[0] >= w[1]),
        "best first: {confidences:?}"
    );
    let changelog = Scratchpad::new("c", SessionKind::Changelog, PathNormalizer::default());
    assert!(changelog
        .finalize(Outcome::Success, &Prior::default())
        .promoted
        .is_empty());
}

#[test]
fn a_failed_session_keeps_only_dead_ends() {
    let mut s = Session::new(SessionKind::Build);
    s.read(1, "a.py").read(2, "b.py");
    s.say(
        3,
        "I need to abandon this and use the public `Session.request()` API instead.",
    );
    let prior = seasoned(&s.pad);
    for outcome in [Outcome::Failure, Outcome::Cancelled] {
        let done = s.pad.finalize(outcome, &prior);
        assert!(!done.promoted.is_empty());
        assert!(done
            .promoted
            .iter()
            .all(|c| c.observation.class == SignalClass::DeadEnd));
        assert!(done
            .discarded
            .iter()
            .any(|d| d.reason.starts_with("validation")));
    }
    // Statistics are still reported so the session counts for frequency.
    assert!(s
        .pad
        .finalize(Outcome::Failure, &prior)
        .observed
        .iter()
        .any(|(k, _)| k == "co:a.py|b.py"));
}

#[test]
fn novelty_drops_what_was_already_promoted() {
    let mut s = Session::new(SessionKind::Build);
    s.read(1, "a.py").read(2, "b.py");
    let mut prior = seasoned(&s.pad);
    prior.promoted.insert("co:a.py|b.py".into());
    let done = s.pad.finalize(Outcome::Success, &prior);
    assert!(done
        .discarded
        .iter()
        .any(|d| d.key == "co:a.py|b.py" && d.reason.starts_with("novelty")));
}

#[test]
fn checkpoint_restore_continues_the_session() {
    let run = |pad: &mut Scratchpad, from: u32, to: u32| {
        for step in from..to {
            let path = format!("/repo/src/f{}.py", step % 4);
            pad.observe(&Event::ToolCall(ToolCall {
                step,
                id: Some(format!("c{step}")),
                tool: "Read".into(),
                input: json!({ "file_path": path }),
                at_ms: None,
            }));
            pad.observe(&Event::ToolResult(ToolResult {
                step,
                id: Some(format!("c{step}")),
                output: String::new(),
                is_error: false,
            }));
        }
    };
    let normalizer = PathNormalizer::new(["/repo"]);
    let mut whole = Scratchpad::new("s", SessionKind::Build, normalizer.clone());
    run(&mut whole, 1, 20);
    let mut first = Scratchpad::new("s", SessionKind::Build, normalizer);
    run(&mut first, 1, 10);
    let state = first.checkpoint();
    drop(first);
    let mut resumed = Scratchpad::restore(&state).expect("restores");
    run(&mut resumed, 10, 20);
    assert_eq!(resumed.observations(), whole.observations());
    assert_eq!(resumed.hot_files(5), whole.hot_files(5));
    assert!(Scratchpad::restore("{not json").is_err());
    // A tampered checkpoint whose lessons point at a file that does not exist is refused.
    let mut value: serde_json::Value = serde_json::from_str(&state).unwrap();
    value["lessons"] = json!([{ "deadEnd": true, "text": "x", "step": 1, "file": 999 }]);
    assert!(Scratchpad::restore(&value.to_string()).is_err());
}

#[test]
fn secrets_in_tool_output_never_reach_the_scratchpad() {
    let mut s = Session::new(SessionKind::Build);
    let key = "AKIAIOSFODNN7EXAMPLE";
    let output = format!("botocore.exceptions.ClientError: InvalidAccessKeyId for key {key}");
    s.bash(1, "python deploy.py", &output, true);
    s.bash(2, "python deploy.py", &output, true);
    let error = s.pad.errors.values().next().unwrap();
    assert!(!error.line.contains(key), "{}", error.line);
    assert!(!s.pad.checkpoint().contains(key));
    for o in s.pad.observations() {
        assert!(!o.content.contains(key), "{}", o.content);
    }
}

#[test]
fn parallel_scratchpads_merge_with_quorum_and_conflicts() {
    let mut a = Session::new(SessionKind::Build);
    a.read(1, "x.py").read(2, "y.py").edit(3, "shared.py");
    let mut b = Session::new(SessionKind::Build);
    b.read(1, "x.py").read(2, "y.py").edit(3, "shared.py");
    let mut c = Session::new(SessionKind::Build);
    c.read(1, "z.py");
    let merged = Scratchpad::merge("m", &[a.pad, b.pad, c.pad]);
    assert_eq!(merged.quorum["co:x.py|y.py"], 2);
    assert!(merged.pairs.values().map(|p| p.count).sum::<u32>() >= 2);
    assert_eq!(merged.conflicts, vec![("shared.py".to_owned(), vec![0, 1])]);
    // Two agents agreeing passes the three-session threshold on the first session.
    let done = merged.finalize(Outcome::Success, &Prior::default());
    assert!(done
        .promoted
        .iter()
        .any(|c| c.observation.key == "co:x.py|y.py"));
    assert!(merged
        .observations()
        .iter()
        .any(|o| o.class == SignalClass::ParallelConflict));
}

#[test]
fn early_triggers_fire_once_each_when_their_condition_is_met() {
    let mut s = Session::new(SessionKind::Build);
    s.read(1, "src/a.py");
    assert!(s.pad.triggers.is_empty());
    for step in 2..5 {
        s.call(
            step,
            "Grep",
            json!({ "pattern": "def load" }),
            "src/a.py:3:def load",
            false,
        );
    }
    s.bash(5, "pytest", "E   KeyError: 'x'", true)
        .bash(6, "python run.py", "TypeError: bad", true);
    s.edit(7, "src/a.py")
        .edit(8, "src/b.py")
        .edit(9, "pyproject.toml");
    s.say(
        10,
        "I initially thought load_config was eager but it is lazy.",
    );
    s.say(
        11,
        "I initially thought cache_get was shared but it is not.",
    );
    let fired: Vec<(SignalClass, u32)> =
        s.pad.triggers.iter().map(|t| (t.signal, t.step)).collect();
    assert_eq!(
        fired,
        vec![
            (SignalClass::RepeatedGrep, 4),
            (SignalClass::ErrorRetry, 6),
            (SignalClass::ConfigTouch, 9),
            (SignalClass::SelfCorrection, 10),
        ]
    );
}
