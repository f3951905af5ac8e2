//! engram's prompts, run: a client's request for `session_context` becomes the session
//! start's packed context, as the text of one user message.

use engram_agent::prompts::{PromptCall, SessionContextArgs};
use engram_store::Database;
use serde::Serialize;

use super::{SessionContext, SessionStart};
use crate::{Engram, EngramError};

/// The message's first line, saying what follows and how to cite it.
const CONTEXT_HEADING: &str = "What engram, this project's long-term memory, holds for this \
task (cite a memory by its [Memory #id] when you rely on it):";

/// The message when memory holds nothing for the task.
const NOTHING_KNOWN: &str = "engram, this project's long-term memory, holds nothing for this \
task yet. Record what you learn with record_memory so the next session knows it.";

/// What a prompt returned.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptOutput {
    /// The prompt that ran.
    pub prompt: &'static str,
    /// A line describing this answer (MCP's `description` of a `prompts/get` result).
    pub description: String,
    /// The user message's text.
    pub text: String,
    /// The memories in it: the session's first shown ids.
    pub memory_ids: Vec<String>,
    /// The structured answer: the [`SessionContext`].
    pub data: serde_json::Value,
}

impl<D: Database> Engram<D> {
    /// Runs the prompt `name` with `arguments` (the JSON text of an object of strings; see
    /// [`engram_agent::prompts::definitions`]). A request the prompt cannot take is a
    /// validation error naming `name` or the argument.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &str,
    ) -> Result<PromptOutput, EngramError> {
        match PromptCall::parse(name, arguments)? {
            PromptCall::SessionContext(args) => self.session_context_prompt(args).await,
        }
    }

    async fn session_context_prompt(
        &self,
        args: SessionContextArgs,
    ) -> Result<PromptOutput, EngramError> {
        let description = match &args.task {
            Some(task) => format!("engram's memory for: {}", first_line(task)),
            None => "engram's standing knowledge for this project".to_owned(),
        };
        let start = SessionStart {
            task: args.task,
            files: args.files,
            modules: args.modules,
            phase: args.phase,
            budget: args.budget,
        };
        // Limits are checked with the start's own field names, inside `arguments`.
        start.validate().map_err(|e| e.within("arguments"))?;
        let context: SessionContext = self.session_context(&start).await?;
        let text = if context.packed.text.trim().is_empty() {
            NOTHING_KNOWN.to_owned()
        } else {
            format!("{CONTEXT_HEADING}\n\n{}", context.packed.text)
        };
        Ok(PromptOutput {
            prompt: engram_agent::prompts::SESSION_CONTEXT,
            description,
            text,
            memory_ids: context.packed.memory_ids.clone(),
            data: serde_json::to_value(&context).unwrap_or_default(),
        })
    }
}

/// The first line of `text`, cut to 80 characters.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(80) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_owned(),
    }
}
