//! `engram install claude-code` and `engram uninstall claude-code` on real settings files:
//! a person's other settings and hooks keep their bytes, a second install changes nothing,
//! an uninstall gives the files back as they were.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A project (a git work tree with a subfolder) and a home folder, removed on drop.
struct Sandbox(PathBuf);

impl Sandbox {
    fn new(name: &str) -> Sandbox {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let root = std::env::temp_dir().join(format!(
            "engram-install-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(root.join("project/.git")).expect("project");
        std::fs::create_dir_all(root.join("project/src/deep")).expect("subfolder");
        std::fs::create_dir_all(root.join("home")).expect("home");
        Sandbox(root)
    }

    fn project(&self) -> PathBuf {
        self.0.join("project")
    }

    fn home(&self) -> PathBuf {
        self.0.join("home")
    }

    /// Runs `engram ARGS` in the project's subfolder with this sandbox's home.
    fn engram(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_engram"))
            .args(args)
            .current_dir(self.project().join("src/deep"))
            .env("HOME", self.home())
            .env_remove("ENGRAM_DB")
            .output()
            .expect("engram runs")
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn ok(output: &Output) -> String {
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&read(path)).expect("the file stays JSON")
}

/// A person's settings, formatted their way (four spaces, a tab, keys out of order).
const THEIR_SETTINGS: &str = "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"Stop\": [\n            { \"hooks\": [ { \"type\": \"command\", \"command\": \"notify-send 'done'\" } ] }\n        ],\n\t\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"./guard.sh\"}]}]\n    },\n    \"permissions\": { \"allow\": [\"Bash(cargo test:*)\"] }\n}\n";

#[test]
fn a_project_install_keeps_every_other_byte_and_an_uninstall_gives_the_files_back() {
    let sandbox = Sandbox::new("project");
    let settings = sandbox.project().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("folder")).expect("folder");
    std::fs::write(&settings, THEIR_SETTINGS).expect("settings");

    let said = ok(&sandbox.engram(&["install", "claude-code"]));
    assert!(
        said.contains("updated") && said.contains("created"),
        "{said}"
    );
    let installed = read(&settings);
    let parsed = json(&settings);
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ] {
        let commands: Vec<&str> = parsed["hooks"][event]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|group| group["hooks"].as_array().into_iter().flatten())
            .filter_map(|hook| hook["command"].as_str())
            .collect();
        assert!(
            commands.iter().any(|c| c.ends_with(" hook")),
            "{event}: {commands:?}"
        );
    }
    assert_eq!(parsed["hooks"]["Stop"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        parsed["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "./guard.sh"
    );
    assert_eq!(parsed["model"], "opus");
    // Their lines are all still there, in order, untouched.
    let mut rest = installed.as_str();
    for line in THEIR_SETTINGS.lines() {
        let at = rest.find(line).unwrap_or_else(|| panic!("{line:?} kept"));
        rest = &rest[at + line.len()..];
    }
    let mcp = sandbox.project().join(".mcp.json");
    assert_eq!(json(&mcp)["mcpServers"]["engram"]["args"][0], "mcp");
    assert!(sandbox.project().join(".engram/.gitignore").is_file());
    assert!(!sandbox.project().join("src/deep/.engram").exists());

    let again = ok(&sandbox.engram(&["install", "claude-code", "--project"]));
    assert!(again.contains("nothing changed"), "{again}");
    assert_eq!(read(&settings), installed);

    let status: Value =
        serde_json::from_str(&ok(&sandbox.engram(&["--json", "--no-embed", "status"])))
            .expect("status JSON");
    let installed_in = status["hooks"]["installedIn"].to_string();
    assert!(installed_in.contains(".claude/settings.json"), "{status}");

    ok(&sandbox.engram(&["uninstall", "claude-code"]));
    assert_eq!(read(&settings), THEIR_SETTINGS);
    assert!(!mcp.exists(), "the .mcp.json engram made is gone");
    let nothing = ok(&sandbox.engram(&["uninstall", "claude-code"]));
    assert!(nothing.contains("nothing to remove"), "{nothing}");
}

#[test]
fn a_user_install_edits_the_home_files_and_a_dry_run_writes_nothing() {
    let sandbox = Sandbox::new("user");
    let state = sandbox.home().join(".claude.json");
    let claude_state =
        "{\n  \"numStartups\": 4,\n  \"projects\": {\n    \"/w\": {\"allowedTools\": []}\n  }\n}";
    std::fs::write(&state, claude_state).expect("state");

    let dry = ok(&sandbox.engram(&["install", "claude-code", "--user", "--dry-run"]));
    assert!(dry.contains("would create") && dry.contains("+"), "{dry}");
    assert!(!sandbox.home().join(".claude/settings.json").exists());
    assert_eq!(read(&state), claude_state);

    ok(&sandbox.engram(&["install", "claude-code", "--user"]));
    let settings = json(&sandbox.home().join(".claude/settings.json"));
    assert!(settings["hooks"]["PostToolUseFailure"].is_array());
    let state_after = json(&state);
    assert_eq!(state_after["numStartups"], 4);
    assert!(state_after["mcpServers"]["engram"]["command"].is_string());
    assert!(
        !sandbox.project().join(".claude").exists(),
        "the project is untouched"
    );

    ok(&sandbox.engram(&["uninstall", "claude-code", "--user"]));
    assert_eq!(
        read(&state),
        claude_state,
        "Claude Code's own file is given back"
    );
    assert!(!sandbox.home().join(".claude/settings.json").exists());
}

#[test]
fn a_settings_file_that_is_not_json_is_refused_and_left_alone() {
    let sandbox = Sandbox::new("broken");
    let settings = sandbox.project().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().expect("folder")).expect("folder");
    std::fs::write(&settings, "{ \"hooks\": ").expect("settings");
    let output = sandbox.engram(&["install", "claude-code"]);
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("settings.json") && error.contains("nothing was changed"),
        "{error}"
    );
    assert_eq!(read(&settings), "{ \"hooks\": ");
    assert!(!sandbox.project().join(".mcp.json").exists());
    let both = sandbox.engram(&["install", "claude-code", "--user", "--project"]);
    assert!(!both.status.success());
}
