//! `engram install claude-code` and `engram uninstall claude-code`: engram's hooks and MCP
//! server in Claude Code's settings, for one project (the default) or for the user.
//!
//! | scope | hooks | MCP server |
//! |---|---|---|
//! | `--project` | `<root>/.claude/settings.json` | `<root>/.mcp.json` |
//! | `--user` | `~/.claude/settings.json` | `~/.claude.json` |
//!
//! The root is the project's (found from the current folder as `engram hook` finds it).
//! A project install also makes `<root>/.engram/` (with a `.gitignore` keeping the database
//! out of git), so every hook run anywhere under the root finds the same database.

pub mod claude_code;
pub mod json_splice;

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use crate::hook::{project_root, ENGRAM_DIR};
use crate::CliError;

/// What to install engram into.
#[derive(Subcommand, Clone, Copy)]
pub enum Integration {
    /// Claude Code: hooks for every event engram uses, and the MCP server.
    ClaudeCode(InstallArgs),
}

/// Where to install and how. `--project` (the default scope: `.claude/settings.json` and
/// `.mcp.json` at the project's root) is the global `--project` given without a name.
#[derive(Args, Clone, Copy)]
pub struct InstallArgs {
    /// For every project of this user: `~/.claude/settings.json` and `~/.claude.json`.
    #[arg(long)]
    pub user: bool,
    /// Print the change without writing anything.
    #[arg(long)]
    pub dry_run: bool,
}

/// What happens to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The file.
    pub path: PathBuf,
    /// Its text now (`None`: it does not exist).
    pub before: Option<String>,
    /// Its text after the change (`None`: it is removed).
    pub after: Option<String>,
}

impl FileChange {
    /// `create`, `update` or `remove`.
    pub fn action(&self) -> &'static str {
        match (&self.before, &self.after) {
            (None, _) => "create",
            (Some(_), None) => "remove",
            (Some(_), Some(_)) => "update",
        }
    }
}

/// The files of one scope.
struct Files {
    settings: PathBuf,
    mcp: PathBuf,
    /// Whether `mcp` is only engram's to remove when it ends empty (`.mcp.json`), rather
    /// than Claude Code's own state file (`~/.claude.json`), which is never removed.
    mcp_removable: bool,
    /// The project's root, for a project install.
    root: Option<PathBuf>,
}

fn files(args: &InstallArgs) -> Result<Files, CliError> {
    if args.user {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .ok_or_else(|| CliError::Usage("--user needs HOME to be set".into()))?;
        return Ok(Files {
            settings: home.join(".claude/settings.json"),
            mcp: home.join(".claude.json"),
            mcp_removable: false,
            root: None,
        });
    }
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::Usage(format!("cannot read the current folder: {e}")))?;
    let root = project_root(&cwd);
    Ok(Files {
        settings: root.join(".claude/settings.json"),
        mcp: root.join(".mcp.json"),
        mcp_removable: true,
        root: Some(root),
    })
}

/// Installs (or with `remove`, uninstalls) engram for Claude Code and prints what changed.
/// `project_scope` is whether `--project` was given (it cannot be given with `--user`).
pub fn run(
    integration: Integration,
    remove: bool,
    project_scope: bool,
    json: bool,
) -> Result<(), CliError> {
    let Integration::ClaudeCode(args) = integration;
    if project_scope && args.user {
        return Err(CliError::Usage(
            "--project and --user choose different scopes: give one".into(),
        ));
    }
    let files = files(&args)?;
    let program = program_name();
    let changes = if remove {
        uninstall_changes(&files, &program)?
    } else {
        install_changes(&files, &program)?
    };
    if !args.dry_run {
        if let (false, Some(root)) = (remove, &files.root) {
            prepare_engram_dir(root)?;
        }
        for change in &changes {
            write(change)?;
        }
    }
    print(&changes, remove, args.dry_run, json);
    Ok(())
}

fn install_changes(files: &Files, program: &str) -> Result<Vec<FileChange>, CliError> {
    let mut changes = Vec::new();
    let settings = read(&files.settings)?;
    let after = claude_code::install_hooks(settings.as_deref(), program)
        .map_err(|e| cannot_edit(&files.settings, &e))?;
    push(&mut changes, &files.settings, settings, after);
    let mcp = read(&files.mcp)?;
    let after = claude_code::install_mcp(mcp.as_deref(), program)
        .map_err(|e| cannot_edit(&files.mcp, &e))?;
    push(&mut changes, &files.mcp, mcp, after);
    Ok(changes)
}

fn uninstall_changes(files: &Files, program: &str) -> Result<Vec<FileChange>, CliError> {
    let mut changes = Vec::new();
    if let Some(settings) = read(&files.settings)? {
        let after = claude_code::uninstall_hooks(&settings, program)
            .map_err(|e| cannot_edit(&files.settings, &e))?;
        let after = after.map(|text| (!is_empty_object(&text)).then_some(text));
        if let Some(after) = after {
            changes.push(FileChange {
                path: files.settings.clone(),
                before: Some(settings),
                after,
            });
        }
    }
    if let Some(mcp) = read(&files.mcp)? {
        let after =
            claude_code::uninstall_mcp(&mcp, program).map_err(|e| cannot_edit(&files.mcp, &e))?;
        let after =
            after.map(|text| (!(files.mcp_removable && is_empty_object(&text))).then_some(text));
        if let Some(after) = after {
            changes.push(FileChange {
                path: files.mcp.clone(),
                before: Some(mcp),
                after,
            });
        }
    }
    Ok(changes)
}

fn push(changes: &mut Vec<FileChange>, path: &Path, before: Option<String>, after: Option<String>) {
    if let Some(after) = after {
        changes.push(FileChange {
            path: path.to_path_buf(),
            before,
            after: Some(after),
        });
    }
}

/// A file left holding `{}` has nothing of anyone's: it is removed rather than kept empty.
fn is_empty_object(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text)
        .is_ok_and(|v| v.as_object().is_some_and(|o| o.is_empty()))
}

/// How hooks call engram: `engram` when that name on PATH is this binary, else this
/// binary's full path (a build that is not installed still works).
fn program_name() -> String {
    let Ok(me) = std::env::current_exe().and_then(|p| p.canonicalize()) else {
        return "engram".into();
    };
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("engram"))
            .find(|candidate| candidate.is_file())
    });
    match on_path.and_then(|p| p.canonicalize().ok()) {
        Some(found) if found == me => "engram".into(),
        _ => me.to_string_lossy().into_owned(),
    }
}

fn read(path: &Path) -> Result<Option<String>, CliError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CliError::Usage(format!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

fn cannot_edit(path: &Path, why: &str) -> CliError {
    CliError::Usage(format!(
        "cannot edit {}: {why}; nothing was changed",
        path.display()
    ))
}

/// Writes a change through a temporary file and a rename, so a crash leaves the old file
/// or the new one, never half of one.
fn write(change: &FileChange) -> Result<(), CliError> {
    let failed =
        |e: std::io::Error| CliError::Usage(format!("cannot write {}: {e}", change.path.display()));
    let Some(text) = &change.after else {
        std::fs::remove_file(&change.path).map_err(failed)?;
        // A settings folder left empty goes too (only an empty one can be removed).
        if let Some(parent) = change.path.parent() {
            let _ = std::fs::remove_dir(parent);
        }
        return Ok(());
    };
    if let Some(parent) = change.path.parent() {
        std::fs::create_dir_all(parent).map_err(failed)?;
    }
    let mut temporary = change.path.clone().into_os_string();
    temporary.push(".engram-tmp");
    std::fs::write(&temporary, text).map_err(failed)?;
    std::fs::rename(&temporary, &change.path).map_err(failed)
}

/// `<root>/.engram/` with a `.gitignore` that keeps its contents (the database, the hook
/// log) out of the project's git.
fn prepare_engram_dir(root: &Path) -> Result<(), CliError> {
    let dir = root.join(ENGRAM_DIR);
    let failed =
        |e: std::io::Error| CliError::Usage(format!("cannot create {}: {e}", dir.display()));
    std::fs::create_dir_all(&dir).map_err(failed)?;
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(
            &ignore,
            "# engram's database and hook log stay out of git.\n*\n",
        )
        .map_err(failed)?;
    }
    Ok(())
}

fn print(changes: &[FileChange], remove: bool, dry_run: bool, json: bool) {
    if json {
        let files: Vec<serde_json::Value> = changes
            .iter()
            .map(|c| serde_json::json!({ "path": c.path, "action": c.action() }))
            .collect();
        say!(
            "{}",
            serde_json::json!({ "dryRun": dry_run, "changes": files })
        );
        return;
    }
    if changes.is_empty() {
        say!(
            "{}",
            if remove {
                "engram is not installed there: nothing to remove"
            } else {
                "engram is already installed: nothing changed"
            }
        );
        return;
    }
    for change in changes {
        let verb = match (change.action(), dry_run) {
            ("create", true) => "would create",
            ("remove", true) => "would remove",
            (_, true) => "would update",
            ("create", false) => "created",
            ("remove", false) => "removed",
            _ => "updated",
        };
        say!("{verb} {}", change.path.display());
        if dry_run {
            for line in diff(change) {
                say!("{line}");
            }
        }
    }
    if !dry_run && !remove {
        say!("Claude Code runs engram's hooks from its next session; it asks once before it starts the project's MCP server.");
    }
    if !dry_run && remove {
        say!("The memories stay in .engram/; remove that folder to forget them too.");
    }
}

/// The changed lines of a change as one hunk: the lines around the first and last
/// difference, `-` before and `+` after.
fn diff(change: &FileChange) -> Vec<String> {
    let before: Vec<&str> = change.before.as_deref().unwrap_or("").lines().collect();
    let after: Vec<&str> = change.after.as_deref().unwrap_or("").lines().collect();
    let prefix = before
        .iter()
        .zip(&after)
        .take_while(|(a, b)| a == b)
        .count();
    let suffix = before[prefix..]
        .iter()
        .rev()
        .zip(after[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mut lines = vec![format!("@@ line {} @@", prefix + 1)];
    lines.extend(
        before[prefix..before.len() - suffix]
            .iter()
            .map(|l| format!("-{l}")),
    );
    lines.extend(
        after[prefix..after.len() - suffix]
            .iter()
            .map(|l| format!("+{l}")),
    );
    lines
}
