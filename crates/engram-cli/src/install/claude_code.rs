//! What `engram install claude-code` adds to Claude Code's files and how it is taken out
//! again: text in, text out, no file system.
//!
//! Hooks go into a settings file's `hooks` object, one matcher group per event holding
//! one command, `<engram> hook`. The MCP server goes into an `mcpServers` object as
//! `engram`. Every edit is a splice (see [`super::json_splice`]), so the rest of a file
//! keeps its bytes, and uninstalling undoes exactly the splices installing made.

use serde_json::{json, Value};

use super::json_splice::{apply, Node, Splice, Tree};

/// The events engram handles, with the matcher each group needs (tool events match every
/// tool; the others take none). PreToolUse is left out: engram has nothing to do before a
/// tool runs, and every hook costs the agent a process start.
pub const HOOK_EVENTS: [(&str, Option<&str>); 8] = [
    ("SessionStart", None),
    ("UserPromptSubmit", None),
    ("PostToolUse", Some("*")),
    ("PostToolUseFailure", Some("*")),
    ("PreCompact", None),
    ("SubagentStop", None),
    ("Stop", None),
    ("SessionEnd", None),
];

/// Seconds Claude Code waits for a hook; engram caps itself well below this.
pub const HOOK_TIMEOUT_SECONDS: u64 = 15;

/// The name engram's MCP server is registered under.
pub const MCP_SERVER_NAME: &str = "engram";

/// The matcher group engram adds for `event`.
pub fn hook_group(event: &str, program: &str) -> Value {
    let matcher = HOOK_EVENTS
        .iter()
        .find(|(name, _)| *name == event)
        .and_then(|(_, matcher)| *matcher);
    let hook = json!({
        "type": "command",
        "command": hook_command(program),
        "timeout": HOOK_TIMEOUT_SECONDS,
    });
    match matcher {
        Some(matcher) => json!({ "matcher": matcher, "hooks": [hook] }),
        None => json!({ "hooks": [hook] }),
    }
}

/// The MCP server entry engram adds.
pub fn mcp_server(program: &str) -> Value {
    json!({ "type": "stdio", "command": program, "args": ["mcp"] })
}

/// Whether a hook command is `engram … hook` (any path to the binary, any flags).
pub fn is_engram_hook(command: &str) -> bool {
    let command = command.trim();
    let (program, rest) = match command.strip_prefix('\'') {
        Some(quoted) => match quoted.split_once('\'') {
            Some((program, rest)) => (program, rest),
            None => return false,
        },
        None => command
            .split_once(char::is_whitespace)
            .unwrap_or((command, "")),
    };
    rest.split_whitespace().last() == Some("hook") && is_engram_program(program)
}

/// Whether a settings file's text has a hook that runs `engram … hook`.
pub fn runs_engram_hook(settings: &str) -> bool {
    let Ok(settings) = serde_json::from_str::<Value>(settings) else {
        return false;
    };
    let events = settings["hooks"].as_object().into_iter().flatten();
    events
        .filter_map(|(_, groups)| groups.as_array())
        .flatten()
        .filter_map(|group| group["hooks"].as_array())
        .flatten()
        .filter_map(|hook| hook["command"].as_str())
        .any(is_engram_hook)
}

/// Whether `program` names the engram binary.
fn is_engram_program(program: &str) -> bool {
    let program = program.trim_matches(['"', '\'']);
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    name == "engram" || name == "engram.exe"
}

/// `program` as one word of a shell command line (quoted when it needs to be).
fn shell_word(program: &str) -> String {
    let plain = program
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c));
    if plain {
        program.to_owned()
    } else {
        format!("'{}'", program.replace('\'', r"'\''"))
    }
}

/// A settings or MCP file's text after installing; `None` when it needs no change.
/// `current` is `None` when the file does not exist.
pub fn install_hooks(current: Option<&str>, program: &str) -> Result<Option<String>, String> {
    edit_until_done(current, |tree| next_hook_install(tree, program))
}

/// A settings file's text after removing engram's hooks; `None` when there are none.
pub fn uninstall_hooks(current: &str, program: &str) -> Result<Option<String>, String> {
    edit_until_done(Some(current), |tree| next_hook_removal(tree, program))
}

/// An MCP file's text (`.mcp.json` or `~/.claude.json`) with engram's server added.
pub fn install_mcp(current: Option<&str>, program: &str) -> Result<Option<String>, String> {
    edit_until_done(current, |tree| {
        let root = &tree.root;
        Ok(match root.member("mcpServers") {
            None => Some(tree.insert(root, "mcpServers", &json!({}))),
            Some(servers) => {
                let servers = object(&servers.value, "mcpServers")?;
                match servers.member(MCP_SERVER_NAME) {
                    Some(_) => None,
                    None => Some(tree.insert(servers, MCP_SERVER_NAME, &mcp_server(program))),
                }
            }
        })
    })
}

/// An MCP file's text with engram's server removed (and `mcpServers`, when that leaves it
/// empty); `None` when engram's server is not there.
pub fn uninstall_mcp(current: &str, program: &str) -> Result<Option<String>, String> {
    let mut emptied = false;
    edit_until_done(Some(current), |tree| {
        let root = &tree.root;
        let Some(index) = member_index(root, "mcpServers") else {
            return Ok(None);
        };
        let servers = &root.members().unwrap_or_default()[index].value;
        let members = servers.members().unwrap_or_default();
        if members.is_empty() && emptied {
            emptied = false;
            return Ok(Some(tree.remove_member(root, index)));
        }
        let ours = members.iter().position(|m| {
            m.key == MCP_SERVER_NAME
                && m.value
                    .value(tree.text)
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|command| is_engram_program(command) || command == program)
        });
        Ok(ours.map(|i| {
            emptied = members.len() == 1;
            tree.remove_member(servers, i)
        }))
    })
}

/// Applies `next` edit after edit (re-reading the text each time) until it has nothing
/// left to do. A missing file starts as `{}` and is written with a final newline.
fn edit_until_done(
    current: Option<&str>,
    mut next: impl FnMut(&Tree) -> Result<Option<Splice>, String>,
) -> Result<Option<String>, String> {
    let created = current.is_none_or(|text| text.trim().is_empty());
    let start = if created {
        "{}".to_owned()
    } else {
        current.unwrap_or_default().to_owned()
    };
    let mut text = start.clone();
    for _ in 0..64 {
        let tree = Tree::parse(&text).map_err(|e| format!("not JSON ({e})"))?;
        object(&tree.root, "the file")?;
        match next(&tree)? {
            Some(splice) => text = apply(&text, vec![splice]),
            None if text == start => return Ok(None),
            None if created => return Ok(Some(format!("{text}\n"))),
            None => return Ok(Some(text)),
        }
    }
    Err("the edit did not settle".into())
}

/// The next splice installing engram's hooks needs, if any.
fn next_hook_install(tree: &Tree, program: &str) -> Result<Option<Splice>, String> {
    let root = &tree.root;
    let Some(hooks) = root.member("hooks") else {
        return Ok(Some(tree.insert(root, "hooks", &json!({}))));
    };
    let hooks = object(&hooks.value, "hooks")?;
    for (event, _) in HOOK_EVENTS {
        match hooks.member(event) {
            None => {
                return Ok(Some(tree.insert(
                    hooks,
                    event,
                    &json!([hook_group(event, program)]),
                )))
            }
            Some(groups) => {
                let groups = array(&groups.value, event)?;
                if !groups_hold_engram(tree, groups, program) {
                    return Ok(Some(tree.append(groups, &hook_group(event, program))));
                }
            }
        }
    }
    Ok(None)
}

/// The next splice removing engram's hooks: an engram command inside someone's group, a
/// group of engram commands only, then an event or the `hooks` object that removal left
/// empty (and only those: empty ones that were already there stay).
fn next_hook_removal(tree: &Tree, program: &str) -> Result<Option<Splice>, String> {
    let root = &tree.root;
    let Some(hooks_index) = member_index(root, "hooks") else {
        return Ok(None);
    };
    let hooks = object(
        &root.members().unwrap_or_default()[hooks_index].value,
        "hooks",
    )?;
    for (event_index, event) in hooks.members().unwrap_or_default().iter().enumerate() {
        let Some(groups) = event.value.elements() else {
            continue;
        };
        for (group_index, group) in groups.iter().enumerate() {
            let Some(commands) = group.member("hooks").and_then(|h| h.value.elements()) else {
                continue;
            };
            let ours: Vec<usize> = (0..commands.len())
                .filter(|&i| is_engram_command(tree, &commands[i], program))
                .collect();
            if ours.is_empty() {
                continue;
            }
            if ours.len() < commands.len() {
                let inner = group.member("hooks").map(|h| &h.value);
                return Ok(inner.map(|inner| tree.remove_element(inner, ours[0])));
            }
            if groups.len() > 1 {
                return Ok(Some(tree.remove_element(&event.value, group_index)));
            }
            // The event held engram's group alone: the event goes, and the hooks object
            // too when nothing else is in it.
            if hooks.members().unwrap_or_default().len() > 1 {
                return Ok(Some(tree.remove_member(hooks, event_index)));
            }
            return Ok(Some(tree.remove_member(root, hooks_index)));
        }
    }
    Ok(None)
}

fn groups_hold_engram(tree: &Tree, groups: &Node, program: &str) -> bool {
    groups.elements().unwrap_or_default().iter().any(|group| {
        group
            .member("hooks")
            .and_then(|h| h.value.elements())
            .is_some_and(|hooks| hooks.iter().any(|h| is_engram_command(tree, h, program)))
    })
}

/// Whether a hook runs engram: `engram … hook`, or the command this binary installs
/// (which names it by its own path when it is not `engram` on PATH).
fn is_engram_command(tree: &Tree, hook: &Node, program: &str) -> bool {
    let ours = hook_command(program);
    hook.member("command")
        .map(|c| c.value.value(tree.text))
        .as_ref()
        .and_then(Value::as_str)
        .is_some_and(|command| is_engram_hook(command) || command == ours)
}

fn hook_command(program: &str) -> String {
    format!("{} hook", shell_word(program))
}

fn member_index(object: &Node, key: &str) -> Option<usize> {
    object.members()?.iter().position(|m| m.key == key)
}

fn object<'n>(node: &'n Node, what: &str) -> Result<&'n Node, String> {
    node.members()
        .map(|_| node)
        .ok_or_else(|| format!("{what} is not a JSON object"))
}

fn array<'n>(node: &'n Node, what: &str) -> Result<&'n Node, String> {
    node.elements()
        .map(|_| node)
        .ok_or_else(|| format!("hooks.{what} is not a JSON array"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const THEIRS: &str = r#"{
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}
        ]
    },
    "model": "opus"
}"#;

    #[test]
    fn installing_twice_changes_nothing_and_uninstalling_gives_the_file_back() {
        let installed = install_hooks(Some(THEIRS), "engram")
            .expect("installs")
            .expect("changes the file");
        let parsed: Value = serde_json::from_str(&installed).expect("JSON");
        for (event, _) in HOOK_EVENTS {
            assert!(parsed["hooks"][event].is_array(), "{event} installed");
        }
        assert_eq!(
            parsed["hooks"]["PostToolUse"].as_array().map(Vec::len),
            Some(2)
        );
        assert_eq!(parsed["model"], "opus");
        assert_eq!(install_hooks(Some(&installed), "engram"), Ok(None));
        let removed = uninstall_hooks(&installed, "engram")
            .expect("uninstalls")
            .expect("changes");
        assert_eq!(removed, THEIRS);
        assert_eq!(uninstall_hooks(THEIRS, "engram"), Ok(None));
    }

    #[test]
    fn a_new_file_is_created_and_removed_to_nothing() {
        let created = install_hooks(None, "/opt/my tools/engram")
            .expect("installs")
            .expect("creates");
        assert!(created.ends_with("}\n"));
        assert!(created.contains(r#""command": "'/opt/my tools/engram' hook""#));
        let removed = uninstall_hooks(&created, "/opt/my tools/engram")
            .expect("uninstalls")
            .expect("changes");
        assert_eq!(removed.trim(), "{}");
    }

    #[test]
    fn a_binary_not_named_engram_is_recognised_by_its_own_command() {
        let created = install_hooks(None, "/tmp/build/engram-new").expect("installs");
        let created = created.expect("creates");
        assert_eq!(
            install_hooks(Some(&created), "/tmp/build/engram-new"),
            Ok(None)
        );
        let removed = uninstall_hooks(&created, "/tmp/build/engram-new").expect("uninstalls");
        assert_eq!(removed.as_deref().map(str::trim), Some("{}"));
        let mcp = install_mcp(None, "/tmp/build/engram-new")
            .expect("adds")
            .expect("creates");
        let removed = uninstall_mcp(&mcp, "/tmp/build/engram-new").expect("removes");
        assert_eq!(removed.as_deref().map(str::trim), Some("{}"));
    }

    #[test]
    fn an_engram_command_inside_someone_elses_group_goes_alone() {
        let text = r#"{"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "notify-send done"},
            {"type": "command", "command": "/usr/local/bin/engram --no-embed hook"}
        ]}]}}"#;
        assert_eq!(
            install_hooks(Some(text), "engram").map(|t| t.is_some()),
            Ok(true)
        );
        let removed = uninstall_hooks(text, "engram")
            .expect("uninstalls")
            .expect("changes");
        let parsed: Value = serde_json::from_str(&removed).expect("JSON");
        assert_eq!(
            parsed["hooks"]["Stop"][0]["hooks"],
            json!([{"type": "command", "command": "notify-send done"}])
        );
    }

    #[test]
    fn the_mcp_server_is_added_once_and_removed_with_what_it_emptied() {
        let claude_json = "{\n  \"numStartups\": 3,\n  \"projects\": {}\n}";
        let added = install_mcp(Some(claude_json), "engram")
            .expect("adds")
            .expect("changes");
        let parsed: Value = serde_json::from_str(&added).expect("JSON");
        assert_eq!(parsed["mcpServers"]["engram"]["args"], json!(["mcp"]));
        assert_eq!(install_mcp(Some(&added), "engram"), Ok(None));
        assert_eq!(
            uninstall_mcp(&added, "engram"),
            Ok(Some(claude_json.to_owned()))
        );
        let other = r#"{"mcpServers": {"engram": {"command": "my-own-server"}}}"#;
        assert_eq!(
            uninstall_mcp(other, "engram"),
            Ok(None),
            "someone else's server keeps the name"
        );
    }

    #[test]
    fn files_that_are_not_settings_are_refused() {
        assert!(install_hooks(Some("[1]"), "engram").is_err());
        assert!(install_hooks(Some(r#"{"hooks": []}"#), "engram").is_err());
        assert!(install_hooks(Some(r#"{"hooks": {"Stop": {}}}"#), "engram").is_err());
        assert!(install_mcp(Some("{"), "engram").is_err());
    }

    #[test]
    fn the_plugin_hooks_the_same_events_with_the_same_matchers_and_follows_the_version() {
        let hooks: Value = serde_json::from_str(include_str!(
            "../../../../integrations/claude-code/hooks/hooks.json"
        ))
        .expect("hooks.json");
        let events = hooks["hooks"].as_object().expect("hooks object");
        assert_eq!(events.len(), HOOK_EVENTS.len());
        for (event, matcher) in HOOK_EVENTS {
            let group = &events[event][0];
            assert_eq!(group["matcher"].as_str(), matcher, "{event}");
            assert_eq!(group["hooks"][0]["timeout"], HOOK_TIMEOUT_SECONDS);
        }
        let manifest: Value = serde_json::from_str(include_str!(
            "../../../../integrations/claude-code/.claude-plugin/plugin.json"
        ))
        .expect("plugin.json");
        assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn engram_hook_commands_are_recognised_by_program_and_verb() {
        assert!(is_engram_hook("engram hook"));
        assert!(is_engram_hook("'/opt/my tools/engram' hook"));
        assert!(is_engram_hook("C:\\bin\\engram.exe --url http://x hook"));
        assert!(!is_engram_hook("engram mcp"));
        assert!(!is_engram_hook("my-engram hook"));
        assert!(!is_engram_hook("hook"));
    }
}
