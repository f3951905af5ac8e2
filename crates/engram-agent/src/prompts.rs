//! engram's prompts: a session's starting context offered to a Model Context Protocol
//! client as the prompt `session_context`, so a user (or the client on their behalf) can
//! start a conversation with what memory holds for the task, with no glue code; and
//! `remember`, a person's way to teach engram from inside the agent (Claude Code lists it
//! as `/mcp__engram__remember`).
//!
//! A prompt's arguments are strings (MCP's `prompts/get` takes `{name: string}` pairs), so
//! lists arrive comma- or line-separated and numbers as text; `engram` parses them straight
//! into the request the prompt runs (`Engram::get_prompt`).

use serde::Serialize;

/// The session-context prompt's name.
pub const SESSION_CONTEXT: &str = "session_context";
/// The teach prompt's name: a person says "remember that …" and it is stored as theirs.
pub const REMEMBER: &str = "remember";

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
    let required = |name, description| PromptArgument {
        name,
        description,
        required: true,
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
    },
    PromptDefinition {
        name: REMEMBER,
        title: "Remember this (your own memory)",
        description: "Stores what you say as your own confirmed memory of this project (trusted above what agents record or engram infers), and tells the agent it is stored.",
        arguments: vec![
            required("text", "What engram should remember, in a sentence or two."),
            argument(
                "type",
                "Its kind: preference (default), requirement, decision, gotcha, workflow_recipe…",
            ),
            argument(
                "files",
                "Files it is about, project-relative, separated by commas or lines.",
            ),
        ],
    }]
}
