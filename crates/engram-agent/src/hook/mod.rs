//! Claude Code's command hooks: the payload each hook receives on stdin, what engram does
//! with each event, and the JSON it answers with.
//!
//! A hook is a process of its own per event, run in parallel with others, and must never
//! break the agent: decoding is lenient (unknown fields and events are ignored, wrong types
//! are named), and the tool output a payload carries is capped before anything reads it.

use engram_core::ValidationError;
use engram_observer::{Event, ToolCall, ToolResult};
use serde::Deserialize;
use serde_json::Value;

mod recorded;
mod subagent;

pub use recorded::{is_record_tool, recorded_entry};
pub use subagent::{calls_of_transcript, LoggedCall, MAX_AGENT_TRANSCRIPT_BYTES};

/// Longest tool output kept from a payload (a 10 MB `cat` is cut here, before the secret
/// scanner and the observer see it); the observer's signals are in the first kilobytes.
pub const MAX_TOOL_OUTPUT_BYTES: usize = 64 * 1024;

/// Longest prompt searched for auto-inject.
pub const MAX_PROMPT_BYTES: usize = 8 * 1024;

/// The events engram has a use for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// A session started, resumed, was cleared or compacted.
    SessionStart,
    /// The user sent a prompt.
    UserPromptSubmit,
    /// A tool is about to run.
    PreToolUse,
    /// A tool ran.
    PostToolUse,
    /// A tool failed.
    PostToolUseFailure,
    /// A subagent finished.
    SubagentStop,
    /// The context is about to be compacted.
    PreCompact,
    /// The agent finished a turn.
    Stop,
    /// The session ended.
    SessionEnd,
}

impl HookEvent {
    /// The event Claude Code names `name`, if engram handles it.
    pub fn parse(name: &str) -> Option<HookEvent> {
        Some(match name {
            "SessionStart" => HookEvent::SessionStart,
            "UserPromptSubmit" => HookEvent::UserPromptSubmit,
            "PreToolUse" => HookEvent::PreToolUse,
            "PostToolUse" => HookEvent::PostToolUse,
            "PostToolUseFailure" => HookEvent::PostToolUseFailure,
            "SubagentStop" => HookEvent::SubagentStop,
            "PreCompact" => HookEvent::PreCompact,
            "Stop" => HookEvent::Stop,
            "SessionEnd" => HookEvent::SessionEnd,
            _ => return None,
        })
    }

    /// The name Claude Code gives it.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::Stop => "Stop",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }

    /// Whether Claude Code reads `additionalContext` from this event's answer.
    pub fn takes_context(self) -> bool {
        matches!(
            self,
            HookEvent::SessionStart | HookEvent::UserPromptSubmit | HookEvent::PostToolUse
        )
    }
}

/// The JSON a hook receives on stdin, as far as engram reads it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct HookPayload {
    /// The event's name (`PostToolUse`, …).
    pub hook_event_name: String,
    /// The session's id.
    pub session_id: String,
    /// The session's transcript (JSON lines).
    pub transcript_path: Option<String>,
    /// The agent's working directory.
    pub cwd: Option<String>,
    /// SessionStart: `startup`, `resume`, `clear` or `compact`.
    pub source: Option<String>,
    /// UserPromptSubmit: the prompt.
    pub prompt: Option<String>,
    /// Tool events: the tool's name.
    pub tool_name: Option<String>,
    /// Tool events: its arguments.
    pub tool_input: Value,
    /// PostToolUse: what it answered (a string or an object, per tool).
    pub tool_response: Value,
    /// Tool events: the call's id.
    pub tool_use_id: Option<String>,
    /// PostToolUseFailure: why it failed.
    pub error: Option<String>,
    /// SessionEnd: why it ended.
    pub reason: Option<String>,
    /// PreCompact: `manual` or `auto`.
    pub trigger: Option<String>,
    /// Tool events inside a subagent, and SubagentStop: the subagent's id.
    pub agent_id: Option<String>,
    /// SubagentStop: the subagent's own transcript (JSON lines).
    pub agent_transcript_path: Option<String>,
    /// SubagentStop: the subagent's transcript, when the host read it (never part of the
    /// JSON: hooks do not send it).
    #[serde(skip)]
    pub agent_transcript: Option<String>,
    /// UserPromptSubmit: the end of the session's transcript, when the host read it for a
    /// short prompt (never part of the JSON: hooks do not send it).
    #[serde(skip)]
    pub transcript_tail: Option<String>,
}

impl HookPayload {
    /// Decodes a payload, naming what is missing or malformed.
    pub fn from_json(json: &str) -> Result<HookPayload, ValidationError> {
        let payload: HookPayload = serde_json::from_str(json).map_err(|e| {
            ValidationError::field("(payload)", format!("is not a hook payload: {e}"))
        })?;
        if payload.hook_event_name.trim().is_empty() {
            return Err(ValidationError::field("hook_event_name", "is required"));
        }
        if payload.session_id.trim().is_empty() {
            return Err(ValidationError::field("session_id", "is required"));
        }
        Ok(payload)
    }

    /// The event, if engram handles it.
    pub fn event(&self) -> Option<HookEvent> {
        HookEvent::parse(&self.hook_event_name)
    }

    /// What auto-inject searches for: the prompt, and for a short one ("yes", "do the same
    /// for the tests") the user's last turns before it in [`HookPayload::transcript_tail`].
    pub fn prompt_query(&self) -> Option<String> {
        let prompt = self.prompt_text()?;
        if !is_short_prompt(prompt) {
            return Some(prompt.to_owned());
        }
        let tail = self.transcript_tail.as_deref().unwrap_or("");
        let mut parts = last_user_turns(tail, prompt);
        parts.push(prompt.to_owned());
        Some(cut(&parts.join("\n"), MAX_PROMPT_BYTES).to_owned())
    }

    /// The prompt, capped at [`MAX_PROMPT_BYTES`].
    pub fn prompt_text(&self) -> Option<&str> {
        let prompt = self.prompt.as_deref()?.trim();
        (!prompt.is_empty()).then(|| cut(prompt, MAX_PROMPT_BYTES))
    }

    /// The observer's events for a finished tool call (PostToolUse, PostToolUseFailure),
    /// at `step`; none for other events.
    pub fn observer_events(&self, step: u32) -> Vec<Event> {
        let Some(event) = self.event() else {
            return Vec::new();
        };
        let (output, is_error) = match event {
            HookEvent::PostToolUse => {
                let output = response_text(&self.tool_response);
                let failed = self.tool_response.get("interrupted") == Some(&Value::Bool(true))
                    || self.tool_response.get("is_error") == Some(&Value::Bool(true));
                (output, failed)
            }
            HookEvent::PostToolUseFailure => {
                let mut output = self.error.clone().unwrap_or_default();
                let response = response_text(&self.tool_response);
                if !response.is_empty() {
                    output.push('\n');
                    output.push_str(&response);
                }
                (cut(&output, MAX_TOOL_OUTPUT_BYTES).to_owned(), true)
            }
            _ => return Vec::new(),
        };
        let Some(tool) = self.tool_name.clone().filter(|t| !t.is_empty()) else {
            return Vec::new();
        };
        vec![
            Event::ToolCall(ToolCall {
                step,
                id: self.tool_use_id.clone(),
                tool,
                input: self.tool_input.clone(),
                at_ms: None,
            }),
            Event::ToolResult(ToolResult {
                step,
                id: self.tool_use_id.clone(),
                output,
                is_error,
            }),
        ]
    }
}

/// A tool's answer as text: a string as is; Bash's `stdout` and `stderr`; Read's file
/// content; anything else as compact JSON; capped at [`MAX_TOOL_OUTPUT_BYTES`].
pub fn response_text(response: &Value) -> String {
    let text = match response {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        Value::Object(fields) => {
            let field = |name: &str| fields.get(name).and_then(Value::as_str).unwrap_or("");
            if fields.contains_key("stdout") || fields.contains_key("stderr") {
                [field("stdout"), field("stderr")]
                    .into_iter()
                    .filter(|t| !t.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n")
            } else if let Some(content) = fields
                .get("file")
                .and_then(|f| f.get("content"))
                .and_then(Value::as_str)
            {
                content.to_owned()
            } else {
                response.to_string()
            }
        }
        other => other.to_string(),
    };
    cut(&text, MAX_TOOL_OUTPUT_BYTES).to_owned()
}

/// `text` cut to at most `max` bytes on a character boundary.
/// A prompt of fewer words than this says too little to search by itself.
pub const SHORT_PROMPT_WORDS: usize = 4;
/// The user's earlier turns a short prompt is searched with.
pub const ENRICHING_TURNS: usize = 2;
/// The most of each earlier turn used.
const ENRICHING_TURN_BYTES: usize = 500;

/// Whether a prompt is too short to search by itself.
pub fn is_short_prompt(prompt: &str) -> bool {
    prompt.split_whitespace().count() < SHORT_PROMPT_WORDS
}

/// The last [`ENRICHING_TURNS`] things the user typed in a transcript's tail (Claude Code
/// JSON lines; tool results, command echoes and system reminders are not typed), oldest
/// first, without `prompt` itself.
pub fn last_user_turns(tail: &str, prompt: &str) -> Vec<String> {
    let mut turns: Vec<String> = tail
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["type"] == "user" && line["isMeta"] != Value::Bool(true))
        .filter_map(|line| typed_text(&line["message"]["content"]))
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty() && !text.starts_with('<') && text != prompt.trim())
        .collect();
    let keep = turns.len().saturating_sub(ENRICHING_TURNS);
    turns.drain(..keep);
    turns
        .into_iter()
        .map(|t| cut(&t, ENRICHING_TURN_BYTES).to_owned())
        .collect()
}

/// A user message's typed text: its string, or its text blocks (none when it carries tool
/// results).
fn typed_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(blocks) => {
            if blocks.iter().any(|b| b["type"] == "tool_result") {
                return None;
            }
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The JSON a hook prints for `event` to add `context` to the model's next request.
pub fn context_output(event: HookEvent, context: &str) -> String {
    serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": event.name(),
            "additionalContext": context,
        }
    })
    .to_string()
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_short_prompt_is_searched_with_the_users_last_turns() {
        let tail = [
            r#"{"type":"user","message":{"role":"user","content":"the dashboard cache is stale after the migration"}}"#,
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Looking."}]}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}}"#,
            r#"{"type":"user","isMeta":true,"message":{"role":"user","content":"<command-name>/clear</command-name>"}}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"only on staging"}]}}"#,
            "not json",
            r#"{"type":"user","message":{"role":"user","content":"fix it"}}"#,
        ]
        .join("\n");
        let mut payload = HookPayload {
            hook_event_name: "UserPromptSubmit".into(),
            session_id: "s".into(),
            prompt: Some("fix it".into()),
            transcript_tail: Some(tail),
            ..HookPayload::default()
        };
        assert_eq!(
            payload.prompt_query().as_deref(),
            Some("the dashboard cache is stale after the migration\nonly on staging\nfix it")
        );
        payload.prompt = Some("why is the dashboard cache stale".into());
        assert_eq!(
            payload.prompt_query().as_deref(),
            Some("why is the dashboard cache stale"),
            "a prompt that says enough is searched alone"
        );
        payload.prompt = Some("yes".into());
        payload.transcript_tail = None;
        assert_eq!(payload.prompt_query().as_deref(), Some("yes"));
    }

    use super::*;

    #[test]
    fn a_post_tool_use_payload_becomes_a_call_and_its_result() {
        let payload = HookPayload::from_json(
            r#"{"hook_event_name":"PostToolUse","session_id":"s1","cwd":"/repo",
                "tool_name":"Bash","tool_input":{"command":"pytest -x"},
                "tool_response":{"stdout":"1 failed","stderr":"E assert 1 == 2","interrupted":false},
                "tool_use_id":"toolu_1","permission_mode":"default"}"#,
        )
        .expect("payload");
        assert_eq!(payload.event(), Some(HookEvent::PostToolUse));
        let events = payload.observer_events(3);
        assert_eq!(events.len(), 2);
        match &events[1] {
            Event::ToolResult(result) => {
                assert_eq!(result.output, "1 failed\nE assert 1 == 2");
                assert_eq!(result.step, 3);
                assert!(!result.is_error);
            }
            other => panic!("expected a tool result, got {other:?}"),
        }
    }

    #[test]
    fn a_failure_carries_its_error_and_reads_carry_the_file() {
        let failed = HookPayload::from_json(
            r#"{"hook_event_name":"PostToolUseFailure","session_id":"s","tool_name":"Bash",
                "tool_input":{"command":"make"},"error":"Exit code 2"}"#,
        )
        .expect("payload");
        match &failed.observer_events(1)[1] {
            Event::ToolResult(result) => {
                assert!(result.is_error);
                assert_eq!(result.output, "Exit code 2");
            }
            other => panic!("{other:?}"),
        }
        let read = serde_json::json!({"type": "text", "file": {"filePath": "/r/a.py", "content": "x = 1"}});
        assert_eq!(response_text(&read), "x = 1");
    }

    #[test]
    fn bad_payloads_are_named_and_huge_outputs_cut() {
        assert_eq!(
            HookPayload::from_json("not json").unwrap_err().violations[0].field,
            "(payload)"
        );
        assert_eq!(
            HookPayload::from_json(r#"{"session_id":"s"}"#)
                .unwrap_err()
                .violations[0]
                .field,
            "hook_event_name"
        );
        assert_eq!(
            HookPayload::from_json(r#"{"hook_event_name":"Stop"}"#)
                .unwrap_err()
                .violations[0]
                .field,
            "session_id"
        );
        let unknown =
            HookPayload::from_json(r#"{"hook_event_name":"Notification","session_id":"s"}"#)
                .expect("an unknown event is still a payload");
        assert_eq!(unknown.event(), None);
        let huge = Value::String("é".repeat(MAX_TOOL_OUTPUT_BYTES));
        let text = response_text(&huge);
        assert!(text.len() <= MAX_TOOL_OUTPUT_BYTES);
        assert!(text.chars().all(|c| c == 'é'));
    }

    #[test]
    fn context_is_answered_in_claude_codes_shape() {
        let out: Value =
            serde_json::from_str(&context_output(HookEvent::SessionStart, "remember this"))
                .unwrap();
        assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
        assert_eq!(
            out["hookSpecificOutput"]["additionalContext"],
            "remember this"
        );
        assert!(HookEvent::PostToolUse.takes_context());
        assert!(!HookEvent::Stop.takes_context());
    }
}
