//! Recorded sessions turned into observer events.

mod claude;
mod trajectory;

use serde::Serialize;

use crate::event::{Event, Outcome};

pub use claude::parse_claude_code;
pub use trajectory::parse_trajectory;

/// One recorded session, ready to replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// The session's id (the transcript's `sessionId`, the trajectory's instance id).
    pub id: String,
    /// Which format it came from.
    pub format: Format,
    /// Absolute folders the agent worked in (for path normalization).
    pub roots: Vec<String>,
    /// The events in order.
    pub events: Vec<Event>,
    /// How it ended, when the recording says.
    pub outcome: Option<Outcome>,
    /// Lines or messages that could not be read and were skipped.
    pub skipped: Vec<String>,
}

/// A recording format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Claude Code's JSONL transcript.
    ClaudeCode,
    /// A mini-swe-agent trajectory (bash commands in fenced blocks).
    MiniSweAgent,
}

/// Why a recording could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptError(pub String);

impl std::fmt::Display for TranscriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TranscriptError {}

/// Reads a recording in whichever supported format it is in.
pub fn parse(text: &str) -> Result<Session, TranscriptError> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        // A whole-file JSON object is a trajectory; JSONL has one object per line.
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(trimmed) {
            if value.get("messages").is_some() {
                return parse_trajectory(&value);
            }
        }
        return parse_claude_code(text);
    }
    Err(TranscriptError(
        "not a recording engram reads: expected Claude Code JSONL or a mini-swe-agent trajectory (JSON with `messages`)".to_owned(),
    ))
}
