//! The person's commands on the CLI: `list` (filters, pages, `--count`), `show`, `edit`,
//! `confirm`, `flag`, `pin`, `teach`, `purge` and `reset`, with the 8-character ids
//! `list` prints.

mod common;

use common::{engram, stdout};
use serde_json::Value;

fn json(db: &std::path::Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    serde_json::from_str(&stdout(&engram(db, &all, None))).expect("JSON")
}

#[test]
fn a_person_browses_edits_and_judges_memories() {
    let dir = std::env::temp_dir().join(format!("engram-cli-manage-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("e.db");
    for (kind, text) in [
        (
            "gotcha",
            "The staging cache must be warmed before the load test",
        ),
        ("decision", "We chose libSQL for every host"),
        ("gotcha", "Redis refuses connections over 10k clients"),
    ] {
        stdout(&engram(&db, &["remember", "--type", kind, text], None));
    }
    let page = json(&db, &["list", "--type", "gotcha", "-n", "1"]);
    assert_eq!(page["memories"].as_array().unwrap().len(), 1);
    let cursor = page["nextCursor"].as_str().expect("a second page");
    let second = json(
        &db,
        &["list", "--type", "gotcha", "-n", "1", "--cursor", cursor],
    );
    assert_eq!(second["memories"].as_array().unwrap().len(), 1);
    assert!(second.get("nextCursor").is_none());
    assert_ne!(page["memories"][0]["id"], second["memories"][0]["id"]);
    assert_eq!(json(&db, &["list", "--count"])["count"], 3);

    let listed = stdout(&engram(&db, &["list", "--text", "redis"], None));
    let short = listed.split_whitespace().next().expect("an id").to_owned();
    assert_eq!(short.len(), 8, "{listed}");
    let shown = json(&db, &["show", &short]);
    assert!(shown["memory"]["content"]
        .as_str()
        .unwrap()
        .contains("Redis"));
    assert_eq!(shown["history"][0]["action"], "created");

    let edited = json(
        &db,
        &[
            "edit",
            &short,
            "--content",
            "Redis refuses connections over 20k clients",
            "--confirm",
        ],
    );
    assert_eq!(edited["flags"]["userVerified"], true);
    assert!(edited["content"].as_str().unwrap().contains("20k"));
    assert_eq!(json(&db, &["pin", &short])["flags"]["pinned"], true);
    assert_eq!(json(&db, &["list", "--pinned", "--count"])["count"], 1);
    let flagged = json(&db, &["flag", &short, "--reason", "limit is configurable"]);
    assert_eq!(flagged["deprecated"], true);
    assert_eq!(
        json(&db, &["list", "--status", "retired", "--count"])["count"],
        1
    );
    assert_eq!(json(&db, &["list", "--count"])["count"], 2);
    let actions: Vec<String> = json(&db, &["history", &short])
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(actions, ["created", "edited", "pinned", "flagged"]);

    let taught = json(
        &db,
        &["teach", "Use pnpm, never npm", "--type", "requirement"],
    );
    let id = taught["id"].as_str().unwrap().to_owned();
    let shown = json(&db, &["show", &id[..8]]);
    assert_eq!(shown["memory"]["source"], "user_taught");
    assert_eq!(shown["memory"]["flags"]["userVerified"], true);
    assert_eq!(json(&db, &["purge", &id[..8]])["purged"], id);
    let gone = engram(&db, &["--json", "get", &id], None);
    assert!(!gone.status.success());

    // Reset asks; without a terminal it needs --yes, and nothing goes before that.
    let refused = engram(&db, &["reset"], None);
    assert!(!refused.status.success());
    assert_eq!(
        json(&db, &["list", "--status", "all", "--count"])["count"],
        3
    );
    assert_eq!(json(&db, &["reset", "--yes"])["deleted"], 3);
    assert_eq!(
        json(&db, &["list", "--status", "all", "--count"])["count"],
        0
    );
    // Backed up before the reset (it can be undone) and after (the emptied file is not
    // taken for lost data: the next command runs).
    let backups: Vec<String> = std::fs::read_dir(dir.join("e.db.backups"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(backups.iter().any(|b| b.ends_with("-n3.db")), "{backups:?}");
    assert!(backups.iter().any(|b| b.ends_with("-n0.db")), "{backups:?}");

    // An id prefix that is too short, or names nothing, is a typed error.
    let bad = engram(&db, &["--json", "confirm", "ab"], None);
    let error: Value = serde_json::from_slice(&bad.stderr).expect("a JSON error");
    assert_eq!(error["error"]["code"], "invalid_input", "{error}");
    let missing = engram(&db, &["--json", "confirm", "ffffffff"], None);
    let error: Value = serde_json::from_slice(&missing.stderr).expect("a JSON error");
    assert_eq!(error["error"]["code"], "not_found", "{error}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `engram export --into CLAUDE.md` writes engram's section and leaves every byte the
/// person wrote as it was, across edits on both sides; importing the file does not learn
/// the section back; a JSON export loads into an empty database as the same memories.
#[test]
fn an_exported_section_leaves_the_persons_text_byte_identical() {
    let dir = std::env::temp_dir().join(format!("engram-cli-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("e.db");
    let claude = dir.join("CLAUDE.md");
    let person = "# Billing service\r\n\nOur own rule: money is stored in integer cents.\n\n\t- keep this tab\n";
    std::fs::write(&claude, person).unwrap();
    let taught = json(
        &db,
        &["teach", "Use pnpm, never npm", "--type", "requirement"],
    );
    stdout(&engram(
        &db,
        &[
            "remember",
            "--type",
            "gotcha",
            "The invoice PDF job needs the fonts package",
            "--file",
            "jobs/pdf.py",
        ],
        None,
    ));
    stdout(&engram(
        &db,
        &[
            "remember",
            "--type",
            "gotcha",
            "Maybe the cache is slow",
            "--confidence",
            "0.4",
        ],
        None,
    ));
    let into = claude.to_str().unwrap();
    stdout(&engram(&db, &["export", "--into", into], None));
    let first = std::fs::read_to_string(&claude).unwrap();
    assert!(first.starts_with(person), "{first}");
    assert!(first.contains("- Use pnpm, never npm"), "{first}");
    assert!(first.contains("fonts package (`jobs/pdf.py`)"), "{first}");
    assert!(
        !first.contains("Maybe the cache"),
        "unsure memories stay out: {first}"
    );

    // The person writes after the section; a memory changes; the section is written again.
    let mine = "\n## Later notes\nwritten by hand after the section\n";
    std::fs::write(&claude, format!("{first}{mine}")).unwrap();
    let short = &taught["id"].as_str().unwrap()[..8];
    stdout(&engram(
        &db,
        &["edit", short, "--content", "Use pnpm 9, never npm or yarn"],
        None,
    ));
    stdout(&engram(&db, &["export", "--into", into], None));
    let second = std::fs::read_to_string(&claude).unwrap();
    let (before, rest) = second.split_once("<!-- engram:begin").expect("a section");
    let (_, after) = rest.split_once("<!-- engram:end -->").expect("its end");
    assert_eq!(
        before,
        person.to_owned() + "\n",
        "the text before it, byte for byte"
    );
    assert_eq!(
        after,
        format!("\n{mine}"),
        "the text after it, byte for byte"
    );
    assert!(
        second.contains("Use pnpm 9, never npm or yarn")
            && !second.contains("- Use pnpm, never npm\n")
    );
    stdout(&engram(&db, &["export", "--into", into], None));
    assert_eq!(
        std::fs::read_to_string(&claude).unwrap(),
        second,
        "nothing new: unchanged"
    );

    // Importing the file reads the person's rules, not engram's own words.
    let imported = json(&db, &["import", into, "--root", dir.to_str().unwrap()]);
    let rules = imported["report"]["files"][0]["rules"]
        .as_array()
        .expect("rules");
    let texts: Vec<&str> = rules.iter().map(|r| r["text"].as_str().unwrap()).collect();
    assert!(
        texts.iter().any(|t| t.contains("integer cents")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .all(|t| !t.contains("pnpm") && !t.contains("fonts")),
        "{texts:?}"
    );

    // JSON out, and into an empty database.
    let export = dir.join("export.json");
    stdout(&engram(
        &db,
        &["export", "--out", export.to_str().unwrap()],
        None,
    ));
    let other = dir.join("other.db");
    let loaded = json(&other, &["load-export", export.to_str().unwrap()]);
    let all = json(&db, &["list", "--status", "all", "--count"])["count"].clone();
    assert_eq!(loaded["memories"], all);
    assert_eq!(
        json(&other, &["list", "--status", "all", "--count"])["count"],
        all
    );
    let again = engram(
        &other,
        &["--json", "load-export", export.to_str().unwrap()],
        None,
    );
    let error: Value = serde_json::from_slice(&again.stderr).expect("a JSON error");
    assert_eq!(error["error"]["code"], "invalid_input", "{error}");
    assert_eq!(json(&db, &["review"]), Value::Null, "no session to review");
    assert!(stdout(&engram(&db, &["review"], None)).contains("no session to review yet"));
    let health = json(&db, &["health"]);
    let score = health["score"].as_u64().expect("a score");
    assert!(score <= 100, "{health}");
    assert_eq!(health["live"], json(&db, &["list", "--count"])["count"]);
    assert_eq!(health["byType"]["requirement"], 1, "{health}");
    assert_eq!(health["parts"][0]["name"], "reviewBacklog", "{health}");
    assert!(stdout(&engram(&db, &["health"], None)).starts_with(&format!("health {score} / 100")));
    let markdown = stdout(&engram(&db, &["export", "--format", "markdown"], None));
    assert!(
        markdown.contains("### requirement") && markdown.contains("Use pnpm 9"),
        "{markdown}"
    );

    // The trust level: the default until set; level 4 condenses the review to nothing
    // unless `--all`; a level out of range is refused and changes nothing.
    assert!(
        stdout(&engram(&db, &["trust"], None)).contains("trust level 2 (standard), the default")
    );
    let set = json(&db, &["trust", "4"]);
    assert_eq!(
        (set["level"].as_u64(), set["injectionThreshold"].as_f64()),
        (Some(4), Some(0.45))
    );
    let quiet = stdout(&engram(&db, &["review", "--session", "s1"], None));
    assert!(
        quiet.contains("nothing to show at trust level 4"),
        "{quiet}"
    );
    let all = stdout(&engram(&db, &["review", "--session", "s1", "--all"], None));
    assert!(
        all.starts_with("session s1: memory saved about 0 tokens"),
        "{all}"
    );
    assert!(!engram(&db, &["trust", "5"], None).status.success());
    assert_eq!(json(&db, &["trust"])["level"], 4);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn show_says_what_an_observer_memory_stands_on() {
    let dir = std::env::temp_dir().join(format!("engram-cli-evidence-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("e.db");
    let eval = std::env::var_os("ENGRAM_EVAL_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval")
        });
    let trajectory = eval.join("trajectories/pytest-dev__pytest-5262");
    assert!(
        trajectory.is_dir(),
        "no evaluation data (set ENGRAM_EVAL_DIR)"
    );
    stdout(&engram(
        &db,
        &["observe", "replay", trajectory.to_str().unwrap()],
        None,
    ));
    let listed = json(&db, &["list", "--source", "observer_inferred"]);
    let id = listed["memories"][0]["id"]
        .as_str()
        .expect("a learned memory");
    let shown = stdout(&engram(&db, &["show", id], None));
    let line = shown
        .lines()
        .find(|l| l.trim_start().starts_with("evidence: "))
        .unwrap_or_else(|| panic!("no evidence line in {shown}"));
    assert!(
        line.ends_with("of session pytest-dev__pytest-5262"),
        "{line}"
    );
    assert!(line.contains(" at step"), "{line}");
    let _ = std::fs::remove_dir_all(&dir);
}
