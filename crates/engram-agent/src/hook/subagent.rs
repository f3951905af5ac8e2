//! A subagent's transcript folded into its parent session's log when it stops: the tool
//! calls the hooks saw are already logged; the ones they did not see (a client that runs
//! no tool hooks inside subagents) are read from the subagent's own transcript.

use engram_observer::{Event, ToolResult};

use super::{cut, MAX_TOOL_OUTPUT_BYTES};

/// Largest subagent transcript read; a longer one is read from its start to here (its
/// last line, cut, is skipped as unreadable).
pub const MAX_AGENT_TRANSCRIPT_BYTES: u64 = 16 * 1024 * 1024;

/// One tool call of a transcript as the hooks log it: the call and its results, at step 0
/// (a row's place in the log is its step).
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedCall {
    /// The call's id (`toolu_…`), shared with the hook payloads of the same call.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// The call, then its results, outputs capped as a hook payload's are.
    pub events: Vec<Event>,
}

/// The tool calls of a Claude Code transcript, in order, each with its results. Calls
/// without an id cannot be matched against the hooks' log and are left out, as are
/// results of calls the transcript does not hold.
pub fn calls_of_transcript(text: &str) -> Vec<LoggedCall> {
    let Ok(session) = engram_observer::transcript::parse(text) else {
        return Vec::new();
    };
    let mut calls: Vec<LoggedCall> = Vec::new();
    for event in session.events {
        match event {
            Event::ToolCall(mut call) => {
                let Some(id) = call.id.clone().filter(|id| !id.is_empty()) else {
                    continue;
                };
                if calls.iter().any(|c| c.call_id == id) {
                    continue;
                }
                call.step = 0;
                calls.push(LoggedCall {
                    call_id: id,
                    tool: call.tool.clone(),
                    events: vec![Event::ToolCall(call)],
                });
            }
            Event::ToolResult(result) => {
                let Some(id) = result.id.as_deref() else {
                    continue;
                };
                // Results follow their call closely: look from the end.
                if let Some(call) = calls.iter_mut().rev().find(|c| c.call_id == id) {
                    call.events.push(Event::ToolResult(ToolResult {
                        step: 0,
                        output: cut(&result.output, MAX_TOOL_OUTPUT_BYTES).to_owned(),
                        ..result
                    }));
                }
            }
            _ => {}
        }
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcripts_calls_come_with_their_results_in_order() {
        let text = [
            r#"{"type":"user","sessionId":"s","agentId":"a1","cwd":"/r","message":{"role":"user","content":"look around"}}"#,
            r#"{"type":"assistant","sessionId":"s","agentId":"a1","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/r/a.py"}},{"type":"tool_use","name":"Glob","input":{"pattern":"*.py"}}]}}"#,
            r#"{"type":"user","sessionId":"s","agentId":"a1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x = 1"}]}}"#,
            r#"{"type":"assistant","sessionId":"s","agentId":"a1","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"toolu_2","name":"Bash","input":{"command":"pytest"}}]}}"#,
            r#"{"type":"user","sessionId":"s","agentId":"a1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_2","content":"1 failed","is_error":true}]}}"#,
        ]
        .join("\n");
        let calls = calls_of_transcript(&text);
        let ids: Vec<&str> = calls.iter().map(|c| c.call_id.as_str()).collect();
        assert_eq!(
            ids,
            ["toolu_1", "toolu_2"],
            "the call without an id is left out"
        );
        assert_eq!(calls[1].tool, "Bash");
        match &calls[1].events[..] {
            [Event::ToolCall(call), Event::ToolResult(result)] => {
                assert_eq!(call.step, 0);
                assert!(result.is_error);
                assert_eq!(result.output, "1 failed");
            }
            other => panic!("expected a call and its result, got {other:?}"),
        }
        assert!(calls_of_transcript("not a transcript").is_empty());
    }
}
