//! Between steps: whether to add one short system message, from three triggers, tried in
//! order and the first that finds something wins:
//!
//! 1. the agent read or edited files in its last tool calls, and memory holds gotchas,
//!    error patterns, dead ends or observations about them that it has not been shown;
//! 2. the agent recorded memories since the last step: they are said back, so a long
//!    session keeps its own conclusions in view;
//! 3. the agent is grepping or globbing for something memory already answers (the
//!    auto-inject rules decide: a strong match or nothing).
//!
//! The first steps are left alone: the agent is still reading its initial context.
//! [`plan`] says what to look up; the caller looks it up and builds the injection with
//! [`crate::inject::for_files`], [`reflection`] or [`known_answer`].

use engram_core::{Memory, MemoryType, Phase, ValidationError};
use engram_observer::action::{actions_of, Action};
use engram_observer::ToolCall;
use serde::{Deserialize, Serialize};

use crate::inject::{line, Injection, InjectionKind};

/// Steps before this one never get an injection.
pub const FIRST_INJECTED_STEP: u32 = 5;
/// Tool calls a request may carry (the decider reads the most recent).
pub const MAX_RECENT_CALLS: usize = 64;
/// Latest tool calls whose files trigger 1 looks at.
pub const RECENT_FILE_CALLS: usize = 5;
/// Latest searches trigger 3 looks at.
pub const RECENT_SEARCHES: usize = 3;
/// Tool calls after a recorded memory before a hook says it back: sooner, the agent
/// still has it in view.
pub const REFLECT_AFTER_CALLS: u32 = 20;
/// Most recorded entries one reflection says back.
pub const MAX_REFLECTED: usize = 5;
/// Most shown ids or recorded entries a request may carry.
pub const MAX_SESSION_ENTRIES: usize = 1024;
/// Shortest search pattern worth a lookup, in characters of words.
pub const MIN_PATTERN_CHARS: usize = 3;

/// A memory the agent recorded during the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordedEntry {
    /// Its id, when it was stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Its type.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// What it says.
    pub content: String,
}

/// What the runtime knows at a step boundary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StepRequest {
    /// The step about to run (0-based, as agent SDKs count).
    pub step: u32,
    /// The latest tool calls, oldest first.
    #[serde(default)]
    pub recent_tool_calls: Vec<ToolCall>,
    /// Memories the agent recorded since the last step.
    #[serde(default)]
    pub recorded: Vec<RecordedEntry>,
    /// Memories already shown this session: never shown again.
    #[serde(default)]
    pub shown_ids: Vec<String>,
    /// The agent's phase, for the known-answer search's weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
}

impl StepRequest {
    /// Parses a request from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<StepRequest, ValidationError> {
        engram_core::validate::from_json_checked(json, Self::validate)
    }

    /// Checks the request's lists against their limits.
    pub fn validate(&self) -> Result<(), ValidationError> {
        if self.recent_tool_calls.len() > MAX_RECENT_CALLS {
            return Err(ValidationError::field(
                "recentToolCalls",
                format!("must have at most {MAX_RECENT_CALLS} entries"),
            ));
        }
        for (field, len) in [
            ("recorded", self.recorded.len()),
            ("shownIds", self.shown_ids.len()),
        ] {
            if len > MAX_SESSION_ENTRIES {
                return Err(ValidationError::field(
                    field,
                    format!("must have at most {MAX_SESSION_ENTRIES} entries"),
                ));
            }
        }
        Ok(())
    }
}

/// What the triggers need looked up, in the order to try them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepPlan {
    /// Trigger 1: files read or edited in the latest calls, most recent first.
    pub files: Vec<String>,
    /// Trigger 2: whether there are recorded entries to say back.
    pub reflect: bool,
    /// Trigger 3: the latest search patterns, as words, most recent first.
    pub searches: Vec<String>,
}

impl StepPlan {
    /// Nothing to look up.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && !self.reflect && self.searches.is_empty()
    }
}

/// What the triggers need for `request`; empty before [`FIRST_INJECTED_STEP`].
pub fn plan(request: &StepRequest) -> StepPlan {
    if request.step < FIRST_INJECTED_STEP {
        return StepPlan::default();
    }
    let mut plan = StepPlan {
        reflect: request.recorded.iter().any(|r| !already_shown(r, request)),
        ..StepPlan::default()
    };
    let calls = &request.recent_tool_calls;
    for call in calls.iter().rev().take(RECENT_FILE_CALLS) {
        crate::inject::files_touched(&call.tool, &call.input, &mut plan.files);
    }
    for call in calls.iter().rev() {
        if plan.searches.len() >= RECENT_SEARCHES {
            break;
        }
        for action in actions_of(&call.tool, &call.input) {
            let pattern = match action {
                Action::Search { pattern, .. } | Action::Glob { pattern } => pattern,
                _ => continue,
            };
            let words = pattern_words(&pattern);
            if words.chars().filter(|c| c.is_alphanumeric()).count() >= MIN_PATTERN_CHARS
                && !plan.searches.contains(&words)
            {
                plan.searches.push(words);
            }
        }
    }
    plan.searches.truncate(RECENT_SEARCHES);
    plan
}

fn already_shown(entry: &RecordedEntry, request: &StepRequest) -> bool {
    entry
        .id
        .as_ref()
        .is_some_and(|id| request.shown_ids.contains(id))
}

/// A grep or glob pattern as the words it looks for: regex and glob syntax become spaces
/// (`fn\s+parse_config\(` → `fn parse_config`, `**/*.proto` → `proto`), so the search sees
/// what a person would type.
pub fn pattern_words(pattern: &str) -> String {
    let mut words = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            // An escape: `\s`, `\w`, `\d`, `\b` are classes; `\.` or `\(` a literal
            // punctuation mark. Either way, a separator.
            chars.next();
            words.push(' ');
        } else if c.is_alphanumeric() || c == '_' || c == '-' || c == '.' || c == '/' {
            words.push(c);
        } else {
            words.push(' ');
        }
    }
    words
        .split_whitespace()
        .map(|w| w.trim_matches(['.', '/', '-']))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Trigger 2's message: the entries of `request` not yet shown, newest last, at most
/// [`MAX_REFLECTED`].
pub fn reflection(request: &StepRequest) -> Option<Injection> {
    let entries: Vec<&RecordedEntry> = request
        .recorded
        .iter()
        .filter(|r| !already_shown(r, request))
        .collect();
    let entries = &entries[entries.len().saturating_sub(MAX_REFLECTED)..];
    if entries.is_empty() {
        return None;
    }
    let mut text = String::from("You recorded this session:\n");
    for entry in entries {
        text.push_str(&format!(
            "- {}: {}\n",
            crate::inject::label(entry.memory_type),
            engram_core::quote::for_prompt(entry.content.trim())
        ));
    }
    Some(Injection {
        kind: InjectionKind::Reflection,
        text,
        memory_ids: entries.iter().filter_map(|e| e.id.clone()).collect(),
    })
}

/// Trigger 3's message: `memory` answers the agent's search for `pattern`.
pub fn known_answer(pattern: &str, memory: &Memory) -> Injection {
    Injection {
        kind: InjectionKind::KnownAnswer,
        text: format!(
            "Memory may already answer your search for \"{pattern}\":\n{}",
            line(memory)
        ),
        memory_ids: vec![memory.id.clone()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(tool: &str, input: serde_json::Value) -> ToolCall {
        ToolCall {
            step: 1,
            id: None,
            tool: tool.into(),
            input,
            at_ms: None,
        }
    }

    fn request(step: u32, calls: Vec<ToolCall>) -> StepRequest {
        StepRequest {
            step,
            recent_tool_calls: calls,
            recorded: vec![],
            shown_ids: vec![],
            phase: None,
        }
    }

    #[test]
    fn the_first_steps_are_left_alone() {
        let calls = vec![call("Read", json!({"file_path": "src/db.rs"}))];
        assert!(plan(&request(FIRST_INJECTED_STEP - 1, calls.clone())).is_empty());
        assert_eq!(
            plan(&request(FIRST_INJECTED_STEP, calls)).files,
            ["src/db.rs"]
        );
    }

    #[test]
    fn files_come_from_the_latest_reads_and_edits_newest_first() {
        let mut calls = vec![call("Read", json!({"file_path": "old.rs"}))];
        for f in ["a.rs", "b.rs", "a.rs"] {
            calls.push(call(
                "Edit",
                json!({"file_path": f, "old_string": "x", "new_string": "y"}),
            ));
        }
        calls.push(call("Bash", json!({"command": "cat src/c.rs"})));
        calls.push(call("Grep", json!({"pattern": "parse_config"})));
        calls.push(call("Write", json!({"file_path": "d.rs", "content": ""})));
        let plan = plan(&request(9, calls));
        // The last five calls: d.rs, the grep, src/c.rs (read through the shell), a.rs, b.rs.
        assert_eq!(plan.files, ["d.rs", "src/c.rs", "a.rs", "b.rs"]);
        assert_eq!(plan.searches, ["parse_config"]);
        assert!(!plan.reflect);
    }

    #[test]
    fn search_patterns_read_as_words_and_short_ones_are_dropped() {
        assert_eq!(pattern_words(r"fn\s+parse_config\("), "fn parse_config");
        assert_eq!(pattern_words("**/*.proto"), "proto");
        assert_eq!(pattern_words("TODO|FIXME"), "TODO FIXME");
        let calls = vec![
            call("Glob", json!({"pattern": "*.rs"})),
            call("Grep", json!({"pattern": "retry.*backoff"})),
            call("Grep", json!({"pattern": "a|b"})),
        ];
        assert_eq!(plan(&request(6, calls)).searches, ["retry backoff"]);
    }

    #[test]
    fn recorded_entries_are_said_back_once() {
        let mut r = request(7, vec![]);
        r.recorded = vec![
            RecordedEntry {
                id: Some("m1".into()),
                memory_type: MemoryType::Gotcha,
                content: "cargo test needs --features code".into(),
            },
            RecordedEntry {
                id: Some("m2".into()),
                memory_type: MemoryType::DeadEnd,
                content: "mocking the clock hid the race".into(),
            },
        ];
        r.shown_ids = vec!["m1".into()];
        assert!(plan(&r).reflect);
        let injection = reflection(&r).unwrap();
        assert_eq!(
            injection.text,
            "You recorded this session:\n- Dead end: mocking the clock hid the race\n"
        );
        assert_eq!(injection.memory_ids, ["m2"]);
        r.shown_ids.push("m2".into());
        assert!(!plan(&r).reflect);
        assert_eq!(reflection(&r), None);
    }

    #[test]
    fn requests_parse_from_json_with_limits() {
        let parsed = StepRequest::from_json(
            r#"{"step":6,"recentToolCalls":[{"step":5,"tool":"Read","input":{"file_path":"x.rs"}}]}"#,
        )
        .unwrap();
        assert_eq!(plan(&parsed).files, ["x.rs"]);
        let err = StepRequest::from_json(r#"{"step":6,"recent":[]}"#).unwrap_err();
        assert!(err.to_string().contains("recent"), "{err}");
        let many = json!({"step": 6, "recentToolCalls": vec![json!({"step": 1, "tool": "Read"}); MAX_RECENT_CALLS + 1]});
        let err = StepRequest::from_json(&many.to_string()).unwrap_err();
        assert_eq!(err.first_field(), "recentToolCalls");
    }
}
