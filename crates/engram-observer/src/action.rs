//! Tool calls reduced to what they did to the project: reads, edits, searches, runs.

use serde_json::Value;

use crate::shell;

/// One effect of a tool call on the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A file was read (`partial` when only a range or a match of it was shown).
    Read {
        /// The file, as the agent named it.
        path: String,
        /// Only part of the file was shown.
        partial: bool,
    },
    /// A file was written or modified (`created` when the call wrote it whole from text).
    Edit {
        /// The file, as the agent named it.
        path: String,
        /// The call wrote the whole file (a new file, a heredoc, `Write`).
        created: bool,
    },
    /// A file was deleted.
    Delete {
        /// The file.
        path: String,
    },
    /// Text was searched for (`grep`, `Grep`).
    Search {
        /// The pattern.
        pattern: String,
        /// The file or folder searched, when one was named.
        scope: Option<String>,
    },
    /// Files were listed by name (`Glob`, `find`, `ls`).
    Glob {
        /// The pattern or folder.
        pattern: String,
    },
    /// A program ran (tests, a script, a build).
    Run {
        /// The program and its first argument, e.g. `pytest testing/test_x.py`.
        command: String,
        /// It ran tests.
        test: bool,
    },
    /// Something from outside the project entered the context (web fetch or search).
    External,
}

impl Action {
    /// The file the action touched, if it names one.
    pub fn path(&self) -> Option<&str> {
        match self {
            Action::Read { path, .. } | Action::Edit { path, .. } | Action::Delete { path } => {
                Some(path)
            }
            _ => None,
        }
    }
}

/// Reduces a tool call to its actions. Knows Claude Code's tools (`Read`, `Edit`,
/// `MultiEdit`, `Write`, `NotebookEdit`, `Grep`, `Glob`, `Bash`, `WebFetch`, `WebSearch`) and
/// the usual lower-case aliases; shell commands go through [`shell::actions`]. Unknown tools
/// have no actions.
pub fn actions_of(tool: &str, input: &Value) -> Vec<Action> {
    let field = |names: &[&str]| -> Option<String> {
        names
            .iter()
            .find_map(|n| input.get(*n).and_then(Value::as_str))
            .map(str::to_owned)
    };
    let path = || field(&["file_path", "path", "notebook_path", "filePath"]);
    match tool.to_ascii_lowercase().as_str() {
        "read" | "read_file" | "view" | "open" => path()
            .map(|path| Action::Read {
                partial: input.get("offset").is_some() || input.get("limit").is_some(),
                path,
            })
            .into_iter()
            .collect(),
        "edit" | "multiedit" | "str_replace" | "notebookedit" | "edit_file" | "apply_patch" => {
            path()
                .map(|path| Action::Edit {
                    path,
                    created: false,
                })
                .into_iter()
                .collect()
        }
        "write" | "write_file" | "create" | "create_file" => path()
            .map(|path| Action::Edit {
                path,
                created: true,
            })
            .into_iter()
            .collect(),
        "grep" | "search" | "rg" => field(&["pattern", "query", "regex"])
            .map(|pattern| Action::Search {
                pattern,
                scope: field(&["path", "include", "glob"]),
            })
            .into_iter()
            .collect(),
        "glob" | "find" | "list" | "ls" => field(&["pattern", "path", "glob"])
            .map(|pattern| Action::Glob { pattern })
            .into_iter()
            .collect(),
        "bash" | "shell" | "run" | "terminal" | "exec" => field(&["command", "cmd", "script"])
            .map(|command| shell::actions(&command))
            .unwrap_or_default(),
        "webfetch" | "websearch" | "web_fetch" | "web_search" | "fetch" | "browse" => {
            vec![Action::External]
        }
        _ => Vec::new(),
    }
}
