//! mini-swe-agent trajectories: a JSON object whose `messages` alternate between assistant
//! turns (a THOUGHT and one fenced bash block) and user turns carrying
//! `<returncode>N</returncode><output>…</output>`.

use serde_json::Value;

use super::{Format, Session, TranscriptError};
use crate::event::{Event, ToolCall, ToolResult};

/// Parses a trajectory. The session id is its `instance_id`; paths are resolved against
/// `/testbed` (the container's checkout) and the trajectory's own `cwd`, if given.
///
/// A non-zero return code is an error, except exit code 1 of `grep`, `rg`, `find`, `diff`
/// and `test`, which means "nothing found" or "different" rather than a failure.
pub fn parse_trajectory(value: &Value) -> Result<Session, TranscriptError> {
    let messages = value
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| TranscriptError("the trajectory has no `messages` list".to_owned()))?;
    let mut session = Session {
        id: value
            .get("instance_id")
            .and_then(Value::as_str)
            .unwrap_or("trajectory")
            .to_owned(),
        format: Format::MiniSweAgent,
        roots: vec!["/testbed".to_owned()],
        events: Vec::new(),
        outcome: None,
        skipped: Vec::new(),
    };
    let mut step = 0u32;
    let mut last_command: Option<String> = None;
    for (index, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        let text = content_text(message.get("content"));
        match role {
            "assistant" => {
                if step > 0 {
                    session.events.push(Event::StepComplete {
                        step,
                        input_tokens: None,
                    });
                }
                step += 1;
                let (thought, command) = split_turn(&text);
                if !thought.trim().is_empty() {
                    session.events.push(Event::Reasoning {
                        step,
                        text: thought.trim().to_owned(),
                    });
                }
                match command {
                    Some(command) => {
                        session.events.push(Event::ToolCall(ToolCall {
                            step,
                            id: Some(format!("call-{step}")),
                            tool: "bash".to_owned(),
                            input: serde_json::json!({ "command": command }),
                            at_ms: None,
                        }));
                        last_command = Some(command);
                    }
                    None => last_command = None,
                }
            }
            // The first user message hands the agent its task.
            "user" if step == 0 && !text.trim().is_empty() => {
                session.events.push(Event::Task { text });
            }
            "user" | "tool" if step > 0 => {
                let Some(command) = last_command.take() else {
                    continue;
                };
                let Some(code) = return_code(&text) else {
                    session
                        .skipped
                        .push(format!("message {index}: a reply without <returncode>"));
                    continue;
                };
                let output = between(&text, "<output>", "</output>")
                    .unwrap_or("")
                    .to_owned();
                session.events.push(Event::ToolResult(ToolResult {
                    step,
                    id: Some(format!("call-{step}")),
                    is_error: code != 0 && !(code == 1 && quiet_on_one(&command)),
                    output,
                }));
            }
            _ => {}
        }
    }
    if step > 0 {
        session.events.push(Event::StepComplete {
            step,
            input_tokens: None,
        });
    }
    Ok(session)
}

/// A message's text: a string or a list of `{type: text, text}` parts.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The THOUGHT text and the first fenced bash block of an assistant turn.
fn split_turn(text: &str) -> (String, Option<String>) {
    for fence in ["```bash\n", "```sh\n", "```\n"] {
        if let Some(start) = text.find(fence) {
            let body = &text[start + fence.len()..];
            let end = body.find("```").unwrap_or(body.len());
            let thought = text[..start].trim_start_matches("THOUGHT:").to_owned();
            return (thought, Some(body[..end].trim().to_owned()));
        }
    }
    (text.to_owned(), None)
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close).map_or(text.len(), |e| start + e);
    Some(text[start..end].trim_matches('\n'))
}

fn return_code(text: &str) -> Option<i64> {
    between(text, "<returncode>", "</returncode>")?
        .trim()
        .parse()
        .ok()
}

/// Commands whose exit code 1 means "nothing found" rather than failure; for a pipeline the
/// last command decides.
fn quiet_on_one(command: &str) -> bool {
    let last = command
        .rsplit(['|', '&', ';', '\n'])
        .find(|s| !s.trim().is_empty())
        .unwrap_or(command);
    let program = last.split_whitespace().next().unwrap_or("");
    matches!(
        program,
        "grep" | "egrep" | "rg" | "find" | "diff" | "test" | "[" | "cmp"
    )
}
