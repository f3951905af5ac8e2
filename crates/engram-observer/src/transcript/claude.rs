//! Claude Code JSONL transcripts: one JSON object per line; `assistant` lines carry `text`,
//! `thinking` and `tool_use` blocks, `user` lines carry `tool_result` blocks with `is_error`.

use std::collections::HashSet;

use serde_json::Value;

use super::{Format, Session, TranscriptError};
use crate::event::{Event, ToolCall, ToolResult};

/// Parses a Claude Code transcript. Lines that are not JSON are skipped and listed in
/// [`Session::skipped`]; a file with no readable line is an error.
pub fn parse_claude_code(text: &str) -> Result<Session, TranscriptError> {
    let mut session = Session {
        id: String::new(),
        format: Format::ClaudeCode,
        roots: Vec::new(),
        events: Vec::new(),
        outcome: None,
        skipped: Vec::new(),
    };
    let mut step: u32 = 0;
    let mut messages: HashSet<String> = HashSet::new();
    let mut read_any = false;
    let mut step_tokens: Option<u64> = None;
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                session.skipped.push(format!("line {}: {e}", number + 1));
                continue;
            }
        };
        read_any = true;
        if session.id.is_empty() {
            if let Some(id) = entry.get("sessionId").and_then(Value::as_str) {
                // A subagent's transcript carries its parent's session id and its own agent id.
                session.id = match entry.get("agentId").and_then(Value::as_str) {
                    Some(agent) => format!("{id}/agent-{agent}"),
                    None => id.to_owned(),
                };
            }
        }
        if let Some(cwd) = entry.get("cwd").and_then(Value::as_str) {
            if !session.roots.iter().any(|r| r == cwd) {
                session.roots.push(cwd.to_owned());
            }
        }
        let at_ms = entry
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(engram_core::time::millis_from_rfc3339)
            .and_then(|ms| u64::try_from(ms).ok());
        let Some(message) = entry.get("message") else {
            continue;
        };
        if entry.get("type").and_then(Value::as_str) == Some("user") {
            if let Some(prompt) = prompt_of(&entry, message) {
                session.events.push(Event::Task { text: prompt });
            }
        }
        let Some(blocks) = message.get("content").and_then(Value::as_array) else {
            continue;
        };
        match entry.get("type").and_then(Value::as_str) {
            Some("assistant") => {
                // One API message is split over several lines sharing its id: one step.
                let id = message
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                if id.is_empty() || messages.insert(id) {
                    if step > 0 {
                        session.events.push(Event::StepComplete {
                            step,
                            input_tokens: step_tokens.take(),
                        });
                    }
                    step += 1;
                    step_tokens = message.get("usage").map(|usage| {
                        [
                            "input_tokens",
                            "cache_read_input_tokens",
                            "cache_creation_input_tokens",
                        ]
                        .iter()
                        .filter_map(|k| usage.get(*k).and_then(Value::as_u64))
                        .sum()
                    });
                }
                for block in blocks {
                    match block.get("type").and_then(Value::as_str) {
                        Some("tool_use") => session.events.push(Event::ToolCall(ToolCall {
                            step,
                            id: block.get("id").and_then(Value::as_str).map(str::to_owned),
                            tool: block
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_owned(),
                            input: block.get("input").cloned().unwrap_or(Value::Null),
                            at_ms,
                        })),
                        Some("text") => push_text(&mut session, step, block.get("text")),
                        Some("thinking") => push_text(&mut session, step, block.get("thinking")),
                        _ => {}
                    }
                }
            }
            Some("user") => {
                for block in blocks {
                    if block.get("type").and_then(Value::as_str) != Some("tool_result") {
                        continue;
                    }
                    session.events.push(Event::ToolResult(ToolResult {
                        step: step.max(1),
                        id: block
                            .get("tool_use_id")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        output: result_text(block.get("content")),
                        is_error: block
                            .get("is_error")
                            .and_then(Value::as_bool)
                            .unwrap_or(false),
                    }));
                }
            }
            _ => {}
        }
    }
    if !read_any {
        return Err(TranscriptError(
            "no line of the transcript is JSON".to_owned(),
        ));
    }
    if step > 0 {
        session.events.push(Event::StepComplete {
            step,
            input_tokens: step_tokens,
        });
    }
    if session.id.is_empty() {
        // Named by its first line, which stays the same as the transcript grows, so two
        // transcripts without ids are two sessions and one read again is the same one.
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        session.id = format!("transcript-{}", crate::fingerprint::stable_hash(first));
    }
    Ok(session)
}

/// What the person typed, from a `user` line: its text (a string, or text blocks), unless
/// the line is Claude Code's own (meta lines, slash-command echoes, tool results).
fn prompt_of(entry: &Value, message: &Value) -> Option<String> {
    if entry.get("isMeta").and_then(Value::as_bool) == Some(true)
        || entry.get("isSidechain").and_then(Value::as_bool) == Some(true)
    {
        return None;
    }
    let text = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    let text = text.trim();
    let harness = [
        "<command-",
        "<local-command",
        "Caveat:",
        "<system-reminder>",
        "[Request interrupted",
    ];
    (!text.is_empty() && !harness.iter().any(|h| text.starts_with(h))).then(|| text.to_owned())
}

fn push_text(session: &mut Session, step: u32, text: Option<&Value>) {
    if let Some(text) = text
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
    {
        session.events.push(Event::Reasoning {
            step,
            text: text.to_owned(),
        });
    }
}

/// A tool result's content: a string or a list of text blocks.
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
