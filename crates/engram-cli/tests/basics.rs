//! The command line as a new user meets it: shell completions, help with the global
//! options under their own heading, the project's `.engram/config.toml` (under the
//! environment and the flags), the database found from any folder of the project, and
//! lookups of unknown targets failing.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `engram args…` run in `cwd`, with no database flag and none of the environment's
/// engram settings.
fn engram_in(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_engram"));
    command.current_dir(cwd).args(args).arg("--no-embed");
    for var in [
        "ENGRAM_DB",
        "ENGRAM_PROJECT",
        "LIBSQL_URL",
        "ENGRAM_MODEL_DIR",
    ] {
        command.env_remove(var);
    }
    command.envs(env.iter().copied());
    command.output().expect("engram runs")
}

fn text(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn count(cwd: &Path, extra: &[&str], env: &[(&str, &str)]) -> u64 {
    let mut args = vec!["--json", "list", "--count"];
    args.extend_from_slice(extra);
    let answer: serde_json::Value =
        serde_json::from_str(&text(&engram_in(cwd, &args, env))).expect("JSON");
    answer["count"].as_u64().expect("a count")
}

fn project(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("engram-basics-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    root
}

#[test]
fn completions_and_help_are_there_for_each_shell() {
    let here = std::env::temp_dir();
    // Completions need no project and no flag beyond the shell.
    let run = |shell: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_engram"))
            .args(["completions", shell])
            .output()
            .expect("engram runs");
        text(&output)
    };
    let bash = run("bash");
    assert!(
        bash.contains("_engram()") && bash.contains("complete -F"),
        "{bash}"
    );
    assert!(bash.contains("remember") && bash.contains("--project"));
    assert!(run("zsh").starts_with("#compdef engram"));
    assert!(run("fish").contains("complete -c engram"));
    assert!(!engram_in(&here, &["completions", "tcsh"], &[])
        .status
        .success());

    let help = text(&engram_in(&here, &["--help"], &[]));
    let (commands, global) = help.split_once("Global options:").expect("a heading");
    assert!(
        commands.contains("remember") && !commands.contains("--db"),
        "{help}"
    );
    assert!(global.contains("--db") && global.contains("--project") && global.contains("--json"));
}

#[test]
fn the_project_config_sits_under_env_and_flags_and_any_folder_finds_the_database() {
    let root = project("config");
    std::fs::create_dir_all(root.join(".engram")).unwrap();
    std::fs::write(
        root.join(".engram/config.toml"),
        "project = \"billing\"\ntrust_level = 3\n",
    )
    .unwrap();
    let deep = root.join("src/deep");
    text(&engram_in(
        &deep,
        &[
            "remember",
            "--type",
            "gotcha",
            "Invoices round half to even",
        ],
        &[],
    ));
    // One database at the project's root, whatever folder engram ran in.
    assert!(root.join(".engram/engram.db").is_file());
    assert!(!deep.join(".engram").exists() && !root.join("src/.engram").exists());
    assert_eq!(count(&root, &[], &[]), 1, "the config's project");
    assert_eq!(
        count(&deep, &[], &[("ENGRAM_PROJECT", "other")]),
        0,
        "env beats the file"
    );
    assert_eq!(
        count(
            &deep,
            &["--project", "billing"],
            &[("ENGRAM_PROJECT", "other")]
        ),
        1,
        "a flag beats the environment"
    );

    // The file's trust level is the project's, and is changed in the file only.
    let trust: serde_json::Value =
        serde_json::from_str(&text(&engram_in(&root, &["--json", "trust"], &[]))).unwrap();
    assert_eq!(
        (trust["level"].as_u64(), trust["set"].as_bool()),
        (Some(3), Some(true))
    );
    let refused = engram_in(&root, &["trust", "1"], &[]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("config.toml"));

    // A file engram cannot read is an error naming it, and nothing runs.
    std::fs::write(root.join(".engram/config.toml"), "projet = \"typo\"\n").unwrap();
    let broken = engram_in(&root, &["list"], &[]);
    assert!(!broken.status.success());
    let message = String::from_utf8_lossy(&broken.stderr);
    assert!(
        message.contains("config.toml") && message.contains("projet"),
        "{message}"
    );
    // Except for a hook, which never fails the agent's step: it runs and logs why.
    let hook = engram_in(&deep, &["hook"], &[]);
    assert!(hook.status.success() && hook.stdout.is_empty());
    let log = std::fs::read_to_string(root.join(".engram/hooks.log")).unwrap_or_default();
    assert!(log.contains("(config)") && log.contains("projet"), "{log}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn lookups_of_unknown_targets_fail() {
    let root = project("unknown");
    for args in [["impact", "nope.py"], ["deps", "nope.py"]] {
        let output = engram_in(&root, &args, &[]);
        assert!(!output.status.success(), "{args:?} succeeded");
        let message = String::from_utf8_lossy(&output.stderr);
        assert!(message.contains("not in the code graph"), "{message}");
    }
    let _ = std::fs::remove_dir_all(&root);
}
