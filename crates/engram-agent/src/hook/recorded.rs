//! The memories an agent recorded itself during a session, read back from the session's
//! log: its calls of engram's `record_memory` tool (through MCP, Claude Code names it
//! `mcp__<server>__record_memory`), with the id the tool answered.

use engram_core::MemoryType;
use engram_observer::{Event, ToolCall};

use crate::step::RecordedEntry;
use crate::tools::RECORD_MEMORY;

/// Whether `tool` is engram's record tool, called directly or through an MCP server.
pub fn is_record_tool(tool: &str) -> bool {
    tool == RECORD_MEMORY
        || tool
            .strip_suffix(RECORD_MEMORY)
            .is_some_and(|prefix| prefix.starts_with("mcp__") && prefix.ends_with("__"))
}

/// The entry a logged call of the record tool made: its type and content from the call,
/// its id from the tool's answer ("Recorded gotcha as memory #…"). None for another tool,
/// a failed call, or a call whose arguments or answer do not say what was stored.
pub fn recorded_entry(events: &[Event]) -> Option<RecordedEntry> {
    let call: &ToolCall = events.iter().find_map(|e| match e {
        Event::ToolCall(call) => Some(call),
        _ => None,
    })?;
    if !is_record_tool(&call.tool) {
        return None;
    }
    let output = events.iter().find_map(|e| match e {
        Event::ToolResult(result) if !result.is_error => Some(result.output.as_str()),
        _ => None,
    })?;
    let memory_type = MemoryType::parse(call.input.get("type")?.as_str()?)?;
    let content = call.input.get("content")?.as_str()?.trim();
    if content.is_empty() {
        return None;
    }
    Some(RecordedEntry {
        id: Some(answered_id(output)?),
        memory_type,
        content: content.to_owned(),
    })
}

/// The id in the record tool's answer: the word after `memory #`.
fn answered_id(output: &str) -> Option<String> {
    let (_, rest) = output.split_once("memory #")?;
    let id: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    (!id.is_empty()).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use engram_observer::ToolResult;
    use serde_json::json;

    fn logged(tool: &str, input: serde_json::Value, output: &str, is_error: bool) -> Vec<Event> {
        vec![
            Event::ToolCall(ToolCall {
                step: 0,
                id: Some("toolu_1".into()),
                tool: tool.into(),
                input,
                at_ms: None,
            }),
            Event::ToolResult(ToolResult {
                step: 0,
                id: Some("toolu_1".into()),
                output: output.into(),
                is_error,
            }),
        ]
    }

    #[test]
    fn a_record_call_through_mcp_is_read_back_with_its_id() {
        let input = json!({"type": "gotcha", "content": " The cache needs a restart. "});
        // Claude Code hands an MCP tool's answer over as its content blocks.
        let answer = r#"[{"type":"text","text":"Recorded gotcha as memory #01JD7Q-x_9.\n"}]"#;
        let entry = recorded_entry(&logged(
            "mcp__engram__record_memory",
            input.clone(),
            answer,
            false,
        ))
        .expect("an entry");
        assert_eq!(entry.id.as_deref(), Some("01JD7Q-x_9"));
        assert_eq!(entry.memory_type, MemoryType::Gotcha);
        assert_eq!(entry.content, "The cache needs a restart.");
        assert!(recorded_entry(&logged("record_memory", input.clone(), answer, false)).is_some());
    }

    #[test]
    fn other_tools_failures_and_unreadable_answers_are_no_entry() {
        let input = json!({"type": "gotcha", "content": "x"});
        let ok = "Recorded gotcha as memory #abc.";
        assert!(recorded_entry(&logged(
            "mcp__engram__search_memory",
            input.clone(),
            ok,
            false
        ))
        .is_none());
        assert!(recorded_entry(&logged("my_record_memory", input.clone(), ok, false)).is_none());
        assert!(recorded_entry(&logged("record_memory", input.clone(), ok, true)).is_none());
        assert!(recorded_entry(&logged("record_memory", input.clone(), "stored", false)).is_none());
        let bad_type = json!({"type": "rumour", "content": "x"});
        assert!(recorded_entry(&logged("record_memory", bad_type, ok, false)).is_none());
    }
}
