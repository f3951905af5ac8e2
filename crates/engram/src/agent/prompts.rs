//! engram's prompts, run: a client's request for `session_context` becomes the session
//! start's packed context, as the text of one user message; `remember` stores a person's
//! text as their own memory and tells the agent so.
//!
//! A prompt's arguments are strings, so lists arrive comma- or line-separated and the
//! budget as text; they are parsed straight into a [`SessionStart`], and anything else is
//! refused by name (`name`, `arguments.<argument>`).

use engram_agent::prompts::{REMEMBER, SESSION_CONTEXT};
use engram_core::{MemoryType, Phase, ValidationError};
use engram_store::Database;
use serde::Serialize;
use serde_json::Value;

use super::SessionStart;
use crate::{Engram, EngramError, Taught};

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
    /// The structured answer: the [`SessionContext`](super::SessionContext).
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
        if name == REMEMBER {
            return self.remember_prompt(arguments).await;
        }
        let start = session_start(name, arguments)?;
        let description = match &start.task {
            Some(task) => format!("engram's memory for: {}", first_line(task)),
            None => "engram's standing knowledge for this project".to_owned(),
        };
        // The start's limits are checked there, and named inside `arguments` here.
        let context = match self.session_context(&start).await {
            Err(EngramError::Invalid(e)) => return Err(e.within("arguments").into()),
            other => other?,
        };
        let text = if context.packed.text.trim().is_empty() {
            NOTHING_KNOWN.to_owned()
        } else {
            format!("{CONTEXT_HEADING}\n\n{}", context.packed.text)
        };
        let data = serde_json::to_value(&context).unwrap_or_default();
        Ok(PromptOutput {
            prompt: SESSION_CONTEXT,
            description,
            text,
            memory_ids: context.packed.memory_ids,
            data,
        })
    }
}

impl<D: Database> Engram<D> {
    /// `remember`: the person's text stored as their own memory ([`Engram::teach`]); the
    /// message tells the agent it is stored and what it says.
    async fn remember_prompt(&self, arguments: &str) -> Result<PromptOutput, EngramError> {
        let taught = taught(arguments)?;
        let stored = match self.teach(taught).await {
            Err(EngramError::Invalid(e)) => return Err(e.within("arguments").into()),
            other => other?,
        };
        let memory = self
            .get(&stored.id)
            .await?
            .ok_or_else(|| EngramError::NotFound(format!("memory {}", stored.id)))?;
        let text = format!(
            "The user asked engram to remember this, and it is stored as their own memory \
[Memory #{}: {}]: {}\nTake it into account from now on.",
            memory.id,
            engram_core::quote::chip_text(&memory.citation()),
            engram_core::quote::for_prompt(memory.content.trim()),
        );
        Ok(PromptOutput {
            prompt: REMEMBER,
            description: format!("Remembered: {}", first_line(&memory.content)),
            text,
            memory_ids: vec![memory.id.clone()],
            data: serde_json::to_value(&stored).unwrap_or_default(),
        })
    }
}

/// What a `remember` request teaches: `text` (required), `type` and `files`.
fn taught(arguments: &str) -> Result<Taught, ValidationError> {
    let mut taught = Taught {
        content: String::new(),
        memory_type: None,
        related_files: Vec::new(),
        tags: Vec::new(),
    };
    for (key, value) in string_arguments(arguments)? {
        let value = value.trim();
        match key.as_str() {
            "text" => taught.content = value.to_owned(),
            "type" if !value.is_empty() => {
                taught.memory_type = Some(MemoryType::parse(value).ok_or_else(|| {
                    ValidationError::field(
                        format!("arguments.{key}"),
                        format!("unknown memory type {value:?}"),
                    )
                })?);
            }
            "type" => {}
            "files" => taught.related_files = list(value),
            _ => {
                return Err(ValidationError::field(
                    format!("arguments.{key}"),
                    "unknown argument; the prompt takes text, type and files",
                ))
            }
        }
    }
    if taught.content.is_empty() {
        return Err(ValidationError::field("arguments.text", "is required"));
    }
    Ok(taught)
}

/// The session start a `session_context` request asks for: `arguments` is the JSON text of
/// an object of strings (`""`, `null` and `{}` mean none). An unknown prompt or argument,
/// a value that is not a string, an unknown phase or a budget that is not a whole number is
/// refused, naming `name` or `arguments.<argument>`.
fn session_start(name: &str, arguments: &str) -> Result<SessionStart, ValidationError> {
    if name != SESSION_CONTEXT {
        return Err(ValidationError::field(
            "name",
            format!(
                "unknown prompt {name:?}; engram's prompts are {SESSION_CONTEXT} and {REMEMBER}"
            ),
        ));
    }
    let mut start = SessionStart::default();
    for (key, value) in string_arguments(arguments)? {
        let field = format!("arguments.{key}");
        let value = value.trim();
        match key.as_str() {
            "task" => start.task = (!value.is_empty()).then(|| value.to_owned()),
            "files" => start.files = list(value),
            "modules" => start.modules = list(value),
            "phase" if !value.is_empty() => {
                start.phase = Some(Phase::parse(value).ok_or_else(|| {
                    ValidationError::field(
                        field,
                        format!(
                            "unknown phase {value:?}; one of define, implement, validate, \
refine, explore, reflect"
                        ),
                    )
                })?);
            }
            "budget" if !value.is_empty() => {
                start.budget = Some(value.parse().map_err(|_| {
                    ValidationError::field(
                        field,
                        format!("must be a whole number of tokens, got {value:?}"),
                    )
                })?);
            }
            "phase" | "budget" => {}
            _ => {
                return Err(ValidationError::field(
                    field,
                    "unknown argument; the prompt takes task, files, modules, phase and budget",
                ))
            }
        }
    }
    Ok(start)
}

/// The arguments object's entries, each a string.
fn string_arguments(arguments: &str) -> Result<Vec<(String, String)>, ValidationError> {
    let text = arguments.trim();
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let object = match serde_json::from_str(text) {
        Ok(Value::Null) => return Ok(Vec::new()),
        Ok(Value::Object(object)) => object,
        Ok(_) => {
            return Err(ValidationError::field(
                "arguments",
                "must be an object of strings",
            ))
        }
        Err(e) => {
            return Err(ValidationError::field(
                "arguments",
                format!("is not JSON: {e}"),
            ))
        }
    };
    object
        .into_iter()
        .map(|(key, value)| match value {
            Value::String(text) => Ok((key, text)),
            _ => Err(ValidationError::field(
                format!("arguments.{key}"),
                "must be a string (a prompt's arguments are text)",
            )),
        })
        .collect()
}

/// The entries of a comma- or line-separated list, trimmed, without blanks.
fn list(text: &str) -> Vec<String> {
    text.split([',', '\n'])
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The first line of `text`, cut to 80 characters.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(80) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(arguments: &str) -> SessionStart {
        session_start(SESSION_CONTEXT, arguments).unwrap_or_else(|e| panic!("{arguments}: {e}"))
    }

    fn refused(name: &str, arguments: &str) -> String {
        match session_start(name, arguments) {
            Ok(start) => panic!("{arguments} parsed as {start:?}"),
            Err(e) => e.violations[0].field.clone(),
        }
    }

    #[test]
    fn string_arguments_become_typed_ones() {
        let start = start(
            r#"{"task": "  fix the login redirect ", "files": "src/auth.rs, src/session.rs,\nweb/login.ts,",
                "modules": "auth", "phase": "refine", "budget": " 1200 "}"#,
        );
        assert_eq!(start.task.as_deref(), Some("fix the login redirect"));
        assert_eq!(
            start.files,
            ["src/auth.rs", "src/session.rs", "web/login.ts"]
        );
        assert_eq!(start.modules, ["auth"]);
        assert_eq!(start.phase, Some(Phase::Refine));
        assert_eq!(start.budget, Some(1200));
    }

    #[test]
    fn absent_and_blank_arguments_mean_none() {
        for none in [
            "",
            "null",
            "{}",
            r#"{"task": " ", "phase": "", "budget": ""}"#,
        ] {
            assert_eq!(start(none), SessionStart::default(), "{none}");
        }
    }

    #[test]
    fn bad_requests_name_what_is_wrong() {
        assert_eq!(refused("context", "{}"), "name");
        assert_eq!(refused(SESSION_CONTEXT, "[1]"), "arguments");
        assert_eq!(refused(SESSION_CONTEXT, "{"), "arguments");
        assert_eq!(
            refused(SESSION_CONTEXT, r#"{"query": "x"}"#),
            "arguments.query"
        );
        assert_eq!(
            refused(SESSION_CONTEXT, r#"{"budget": 500}"#),
            "arguments.budget"
        );
        assert_eq!(
            refused(SESSION_CONTEXT, r#"{"budget": "-5"}"#),
            "arguments.budget"
        );
        assert_eq!(
            refused(SESSION_CONTEXT, r#"{"phase": "ship"}"#),
            "arguments.phase"
        );
    }

    #[test]
    fn a_remember_request_needs_its_text_and_a_known_type() {
        let request =
            taught(r#"{"text": " Use pnpm ", "type": "requirement", "files": "a.ts, b.ts"}"#)
                .expect("taught");
        assert_eq!(request.content, "Use pnpm");
        assert_eq!(request.memory_type, Some(MemoryType::Requirement));
        assert_eq!(request.related_files, ["a.ts", "b.ts"]);
        let field = |json: &str| taught(json).unwrap_err().violations[0].field.clone();
        assert_eq!(field("{}"), "arguments.text");
        assert_eq!(
            field(r#"{"text": "x", "type": "rumour"}"#),
            "arguments.type"
        );
        assert_eq!(field(r#"{"text": "x", "tags": "a"}"#), "arguments.tags");
    }

    #[test]
    fn every_argument_the_definition_lists_is_accepted() {
        for prompt in engram_agent::prompts::definitions() {
            for argument in &prompt.arguments {
                let value = match argument.name {
                    "phase" => "explore",
                    "budget" => "800",
                    _ => "x",
                };
                let json = serde_json::json!({ argument.name: value }).to_string();
                if prompt.name == REMEMBER {
                    let with_text = serde_json::json!({ "text": "x", argument.name: value });
                    let with_text = with_text
                        .to_string()
                        .replace("\"type\":\"x\"", "\"type\":\"gotcha\"");
                    assert!(taught(&with_text).is_ok(), "{with_text}");
                } else {
                    assert!(session_start(prompt.name, &json).is_ok(), "{json}");
                }
            }
        }
    }
}
