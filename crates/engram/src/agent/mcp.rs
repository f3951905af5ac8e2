//! MCP on a database: one incoming JSON-RPC message answered, whatever carries it (the
//! CLI's stdio, the Worker's streamable HTTP).

use engram_agent::mcp::{self, Incoming, PromptFailure};
use engram_store::Database;

use crate::{Engram, EngramError};

impl<D: Database> Engram<D> {
    /// Answers one MCP message (a JSON-RPC 2.0 request or notification, as text): the JSON
    /// text to send back, or `None` for a notification or a response. Every request gets
    /// an answer, malformed ones a JSON-RPC error; tool calls run [`Engram::call_tool`] and
    /// prompts [`Engram::get_prompt`].
    pub async fn answer_mcp(&self, message: &str) -> Option<String> {
        let answer = match mcp::read(message) {
            Incoming::Reply(reply) => reply,
            Incoming::Silent => return None,
            Incoming::Tool {
                id,
                name,
                arguments,
            } => {
                let outcome = self.call_tool(&name, &arguments).await;
                mcp::tool_reply(&id, outcome.map(|o| o.text).map_err(|e| e.to_string()))
            }
            Incoming::Prompt {
                id,
                name,
                arguments,
            } => {
                let outcome = self.get_prompt(&name, &arguments).await;
                mcp::prompt_reply(
                    &id,
                    outcome
                        .map(|o| (o.description, o.text))
                        .map_err(|e| match e {
                            EngramError::Invalid(_) => PromptFailure::Invalid(e.to_string()),
                            other => PromptFailure::Failed(other.to_string()),
                        }),
                )
            }
        };
        Some(answer.to_string())
    }
}
