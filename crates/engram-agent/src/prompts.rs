//! engram's prompts: a session's starting context offered to a Model Context Protocol
//! client as the prompt `session_context`, so a user (or the client on their behalf) can
//! start a conversation with what memory holds for the task, with no glue code.
//!
//! A prompt's arguments are strings (MCP's `prompts/get` takes `{name: string}` pairs), so
//! lists arrive comma- or line-separated and numbers as text; this module turns them into
//! typed arguments and refuses anything else by name.

use engram_core::{Phase, ValidationError};
use serde::Serialize;
use serde_json::Value;

/// The session-context prompt's name.
pub const SESSION_CONTEXT: &str = "session_context";

/// One prompt, described for a client's prompt picker (MCP's `prompts/list` entry).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptDefinition {
    /// The name the client asks for it by.
    pub name: &'static str,
    /// A title for a human choosing it.
    pub title: &'static str,
    /// What it gives.
    pub description: &'static str,
    /// Its arguments, all strings.
    pub arguments: Vec<PromptArgument>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptArgument {
    /// The argument's name.
    pub name: &'static str,
    /// What to put in it.
    pub description: &'static str,
    /// Whether the prompt needs it.
    pub required: bool,
}

/// engram's prompts, in the order a client should list them.
pub fn definitions() -> Vec<PromptDefinition> {
    let argument = |name, description| PromptArgument {
        name,
        description,
        required: false,
    };
    vec![PromptDefinition {
        name: SESSION_CONTEXT,
        title: "Project memory for this task",
        description: "What engram remembers that bears on a task: gotchas, decisions, error \
fixes, dead ends and recipes for the task and its files and modules, the project's standing \
preferences and requirements, and the latest work in progress, packed into a token budget \
with a citation for each memory.",
        arguments: vec![
            argument("task", "The task or the user's first message."),
            argument(
                "files",
                "Files the task is about, project-relative, separated by commas or lines.",
            ),
            argument(
                "modules",
                "Modules the task is about, separated by commas or lines.",
            ),
            argument(
                "phase",
                "The work's phase: define, implement, validate, refine, explore or reflect.",
            ),
            argument(
                "budget",
                "Tokens the context may cost (default: the phase's).",
            ),
        ],
    }]
}

/// The session-context prompt's arguments, typed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionContextArgs {
    /// The task, trimmed; `None` when absent or blank.
    pub task: Option<String>,
    /// The files named.
    pub files: Vec<String>,
    /// The modules named.
    pub modules: Vec<String>,
    /// The phase named.
    pub phase: Option<Phase>,
    /// The budget named.
    pub budget: Option<u32>,
}

/// A client's request for one of engram's prompts, parsed.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptCall {
    /// `session_context`.
    SessionContext(SessionContextArgs),
}

impl PromptCall {
    /// Parses the prompt a client asked for: its `name` and its `arguments` as the JSON text
    /// of an object of strings (`""`, `null` and `{}` mean none). An unknown prompt or
    /// argument, a value that is not a string, an unknown phase or a budget that is not a
    /// whole number is refused, naming `name` or `arguments.<argument>`.
    pub fn parse(name: &str, arguments: &str) -> Result<PromptCall, ValidationError> {
        if name != SESSION_CONTEXT {
            return Err(ValidationError::field(
                "name",
                format!("unknown prompt {name:?}; engram's prompt is {SESSION_CONTEXT}"),
            ));
        }
        let mut args = SessionContextArgs::default();
        for (key, value) in string_arguments(arguments)? {
            let field = format!("arguments.{key}");
            match key.as_str() {
                "task" => {
                    let task = value.trim();
                    args.task = (!task.is_empty()).then(|| task.to_owned());
                }
                "files" => args.files = list(&value),
                "modules" => args.modules = list(&value),
                "phase" => {
                    let phase = value.trim();
                    if !phase.is_empty() {
                        args.phase = Some(Phase::parse(phase).ok_or_else(|| {
                            ValidationError::field(
                                field,
                                format!(
                                    "unknown phase {phase:?}; one of define, implement, \
validate, refine, explore, reflect"
                                ),
                            )
                        })?);
                    }
                }
                "budget" => {
                    let budget = value.trim();
                    if !budget.is_empty() {
                        args.budget = Some(budget.parse().map_err(|_| {
                            ValidationError::field(
                                field,
                                format!("must be a whole number of tokens, got {budget:?}"),
                            )
                        })?);
                    }
                }
                _ => {
                    return Err(ValidationError::field(
                        field,
                        "unknown argument; the prompt takes task, files, modules, phase and \
budget",
                    ))
                }
            }
        }
        Ok(PromptCall::SessionContext(args))
    }
}

/// The arguments object's entries, each a string.
fn string_arguments(arguments: &str) -> Result<Vec<(String, String)>, ValidationError> {
    let text = arguments.trim();
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| ValidationError::field("arguments", format!("is not JSON: {e}")))?;
    let object = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Object(object) => object,
        _ => {
            return Err(ValidationError::field(
                "arguments",
                "must be an object of strings",
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

#[cfg(test)]
mod tests {
    use super::*;

    fn session(arguments: &str) -> SessionContextArgs {
        match PromptCall::parse(SESSION_CONTEXT, arguments) {
            Ok(PromptCall::SessionContext(args)) => args,
            Err(e) => panic!("{arguments}: {e}"),
        }
    }

    fn refused(name: &str, arguments: &str) -> String {
        match PromptCall::parse(name, arguments) {
            Ok(call) => panic!("{arguments} parsed as {call:?}"),
            Err(e) => e.violations[0].field.clone(),
        }
    }

    #[test]
    fn string_arguments_become_typed_ones() {
        let args = session(
            r#"{"task": "  fix the login redirect ", "files": "src/auth.rs, src/session.rs,\nweb/login.ts,",
                "modules": "auth", "phase": "refine", "budget": " 1200 "}"#,
        );
        assert_eq!(args.task.as_deref(), Some("fix the login redirect"));
        assert_eq!(
            args.files,
            ["src/auth.rs", "src/session.rs", "web/login.ts"]
        );
        assert_eq!(args.modules, ["auth"]);
        assert_eq!(args.phase, Some(Phase::Refine));
        assert_eq!(args.budget, Some(1200));
    }

    #[test]
    fn absent_and_blank_arguments_mean_none() {
        for none in [
            "",
            "null",
            "{}",
            r#"{"task": " ", "phase": "", "budget": ""}"#,
        ] {
            assert_eq!(session(none), SessionContextArgs::default(), "{none}");
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
    fn every_argument_the_definition_lists_is_accepted() {
        for prompt in definitions() {
            for argument in &prompt.arguments {
                let value = match argument.name {
                    "phase" => "explore",
                    "budget" => "800",
                    _ => "x",
                };
                let json = serde_json::json!({ argument.name: value }).to_string();
                assert!(PromptCall::parse(prompt.name, &json).is_ok(), "{json}");
            }
        }
    }
}
