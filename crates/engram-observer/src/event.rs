//! What the observer ingests: the events of one agent session.

use engram_core::secrets::SecretScanner;
use serde::{Deserialize, Serialize};

/// One thing an agent did or said, in the order it happened.
///
/// Hosts send these as JSON (`{"type":"tool_call","step":3,"tool":"Read","input":{…}}`);
/// [`crate::transcript`] turns recorded sessions into them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    /// The agent called a tool.
    ToolCall(ToolCall),
    /// A tool answered.
    ToolResult(ToolResult),
    /// Text the agent wrote (reasoning or an answer).
    Reasoning {
        /// The step it belongs to.
        step: u32,
        /// The text.
        text: String,
    },
    /// The agent finished a step.
    StepComplete {
        /// The step that finished.
        step: u32,
        /// Context tokens the model read in this step, when the host knows them.
        #[serde(
            default,
            rename = "inputTokens",
            skip_serializing_if = "Option::is_none"
        )]
        input_tokens: Option<u64>,
    },
    /// The task as the person stated it (their prompt or the issue handed to the agent);
    /// the first one is the session's task.
    Task {
        /// The person's words.
        text: String,
    },
    /// The session ended.
    SessionComplete {
        /// How it ended.
        outcome: Outcome,
    },
}

/// A tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCall {
    /// The agent step (model turn) it belongs to.
    pub step: u32,
    /// The call's id, matching its [`ToolResult::id`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name: `Read`, `Edit`, `Write`, `Grep`, `Glob`, `Bash`, `WebFetch`, … or any
    /// host tool (unknown tools count toward sequences only).
    pub tool: String,
    /// The tool's arguments as the agent sent them.
    #[serde(default)]
    pub input: serde_json::Value,
    /// Host time in milliseconds, when known (used for dwell-time anomalies only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
}

/// A tool's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolResult {
    /// The step of the call it answers.
    pub step: u32,
    /// The id of the call it answers; without one it answers the latest call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What the tool printed (may be truncated by the host).
    #[serde(default)]
    pub output: String,
    /// Whether the tool failed (a non-zero exit, an exception, a refused edit).
    #[serde(default)]
    pub is_error: bool,
}

/// How a session ended; decides what of its scratchpad may be promoted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The work was validated (tests or QA passed, the user accepted it).
    Success,
    /// Validation failed: only genuine dead ends survive.
    Failure,
    /// The session stopped before validation (including a crash recovered later).
    #[default]
    Cancelled,
}

impl Outcome {
    /// The outcome's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// What kind of session it is; caps how many memories it may promote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionKind {
    /// A full build or coding session (every signal; up to 20 memories).
    #[default]
    Build,
    /// An exploration or question session (up to 5).
    Insights,
    /// Planning (up to 3).
    Roadmap,
    /// An agent terminal (up to 3).
    Terminal,
    /// Changelog writing (nothing is promoted).
    Changelog,
    /// Writing a spec (up to 3).
    SpecCreation,
    /// Reviewing a pull request (up to 8).
    PrReview,
}

impl SessionKind {
    /// The most memories one session of this kind may promote.
    pub fn promotion_cap(self) -> usize {
        match self {
            SessionKind::Build => 20,
            SessionKind::Insights => 5,
            SessionKind::Roadmap | SessionKind::Terminal | SessionKind::SpecCreation => 3,
            SessionKind::Changelog => 0,
            SessionKind::PrReview => 8,
        }
    }
}

impl Event {
    /// A copy with every secret in its text (tool input, output, reasoning) redacted, or
    /// `None` when there is none.
    pub fn redacted(&self, scanner: &SecretScanner) -> Option<Event> {
        let has = |text: &str| !scanner.scan(text).is_empty();
        let mut event = match self {
            Event::ToolCall(call) => {
                let mut input = call.input.clone();
                if scanner.redact_json(&mut input).is_empty()
                    && !call.id.as_deref().is_some_and(has)
                {
                    return None;
                }
                let mut call = call.clone();
                call.input = input;
                Event::ToolCall(call)
            }
            Event::ToolResult(result) if has(&result.output) => Event::ToolResult(result.clone()),
            Event::Reasoning { text, .. } | Event::Task { text } if has(text) => self.clone(),
            _ => return None,
        };
        match &mut event {
            Event::ToolCall(call) => {
                if let Some(id) = call.id.as_mut() {
                    scanner.redact_in_place(id);
                }
            }
            Event::ToolResult(result) => {
                scanner.redact_in_place(&mut result.output);
            }
            Event::Reasoning { text, .. } | Event::Task { text } => {
                scanner.redact_in_place(text);
            }
            _ => {}
        }
        Some(event)
    }
}
