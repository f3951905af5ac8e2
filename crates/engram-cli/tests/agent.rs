//! `engram agent …`: the binary on a database file, as an agent runtime that shells out
//! would use it (tool definitions, a tool call, a tool result's memories, a step, the
//! session start, planning), with bad requests refused by name.

mod common;

use common::{engram, stdout};
use serde_json::Value;

#[test]
fn the_agent_commands_serve_a_session_from_the_command_line() {
    let dir = std::env::temp_dir().join(format!("engram-cli-agent-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("e.db");

    let tools: Value = serde_json::from_str(&stdout(&engram(
        &db,
        &["agent", "tools", "--format", "mcp"],
        None,
    )))
    .expect("tools are JSON");
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["search_memory", "record_memory", "analyze_impact"]);
    assert!(tools[0]["inputSchema"]["properties"]["query"].is_object());

    let recorded = stdout(&engram(
        &db,
        &["--json", "agent", "call", "record_memory", "-"],
        Some(
            r#"{"type":"gotcha","content":"The users table needs its migration before the seed script","files":["db/seed.rs"],"confidence":0.9}"#,
        ),
    ));
    let recorded: Value = serde_json::from_str(&recorded).expect("JSON output");
    let id = recorded["data"]["id"]
        .as_str()
        .expect("stored id")
        .to_owned();

    let found = stdout(&engram(
        &db,
        &[
            "agent",
            "call",
            "search_memory",
            r#"{"query":"seed script migration"}"#,
        ],
        None,
    ));
    assert!(
        found.starts_with("1 memory for \"seed script migration\""),
        "{found}"
    );
    assert!(found.contains(&format!("[Memory #{id}:")), "{found}");

    let read = r#"{"tool":"Read","input":{"file_path":"/work/app/db/seed.rs"}}"#;
    let augmented = stdout(&engram(&db, &["agent", "augment", read], None));
    assert!(
        augmented.contains("Memory context for /work/app/db/seed.rs:"),
        "{augmented}"
    );
    let shown =
        format!(r#"{{"tool":"Read","input":{{"file_path":"db/seed.rs"}},"shownIds":["{id}"]}}"#);
    assert_eq!(
        stdout(&engram(&db, &["agent", "augment", &shown], None)),
        ""
    );

    let step = r#"{"step":6,"recentToolCalls":[{"step":5,"tool":"Edit","input":{"file_path":"db/seed.rs"}}]}"#;
    let injected: Value = serde_json::from_str(&stdout(&engram(
        &db,
        &["--json", "agent", "step", "-"],
        Some(step),
    )))
    .expect("JSON output");
    assert_eq!(injected["kind"], "file_gotchas");
    assert_eq!(injected["memoryIds"][0], id.as_str());

    let context = stdout(&engram(
        &db,
        &[
            "agent",
            "context",
            "--task",
            "the seed script fails",
            "--budget",
            "500",
        ],
        None,
    ));
    assert!(
        context.contains("The users table needs its migration"),
        "{context}"
    );

    let bad = engram(
        &db,
        &["agent", "call", "search_memory", r#"{"q":"x"}"#],
        None,
    );
    assert!(!bad.status.success());
    let message = String::from_utf8_lossy(&bad.stderr);
    assert!(message.contains("arguments.q"), "{message}");
    let bad = engram(&db, &["agent", "step", r#"{"step":"six"}"#], None);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("step"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_planning_commands_calibrate_limit_and_plan() {
    let dir = std::env::temp_dir().join(format!("engram-cli-plan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("e.db");
    let calibrate = |planned: &str, actual: &str| {
        stdout(&engram(
            &db,
            &[
                "agent",
                "calibrate",
                "--module",
                "src/db",
                "--planned",
                planned,
                "--actual",
                actual,
            ],
            None,
        ))
    };
    calibrate("8", "12");
    calibrate("8", "14");
    let said = calibrate("8", "10");
    assert!(
        said.starts_with("Work in `src/db` takes 1.50× the planned steps"),
        "{said}"
    );

    let limited = engram(
        &db,
        &["agent", "step-limit", "--base", "20", "--module", "src/db"],
        None,
    );
    assert_eq!(stdout(&limited).trim(), "30");
    assert!(String::from_utf8_lossy(&limited.stderr).contains("1.50×"));
    let limit: Value = serde_json::from_str(&stdout(&engram(
        &db,
        &[
            "--json",
            "agent",
            "step-limit",
            "--base",
            "20",
            "--module",
            "src/db",
            "--max",
            "25",
        ],
        None,
    )))
    .expect("JSON output");
    assert_eq!(limit["maxSteps"], 25);
    assert_eq!(limit["calibration"]["samples"], 3);

    let recorded = stdout(&engram(
        &db,
        &["--json", "agent", "call", "record_memory", "-"],
        Some(
            r#"{"type":"dead_end","content":"Renaming the table inside one migration locks the users table for minutes","modules":["src/db"]}"#,
        ),
    ));
    let recorded: Value = serde_json::from_str(&recorded).expect("JSON output");
    let dead_end = recorded["data"]["id"].as_str().expect("id").to_owned();
    let plan = stdout(&engram(
        &db,
        &[
            "agent",
            "plan",
            "--task",
            "rename the users table",
            "--module",
            "src/db",
        ],
        None,
    ));
    assert!(
        plan.starts_with("## Calibration: actual against planned steps\n"),
        "{plan}"
    );
    assert!(plan.contains(&format!("[Memory #{dead_end}:")), "{plan}");

    let bad = engram(&db, &["agent", "step-limit", "--base", "0"], None);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("baseMaxSteps"));
    let _ = std::fs::remove_dir_all(&dir);
}
