//! Importing real agent instruction files (the eval set's `instructions/`, from 19
//! repositories) on libSQL, on a file and over HTTP: every rule becomes a memory with its
//! file and line, the same rule in two formats is one memory with two origins, importing
//! an unchanged file writes nothing, a new version keeps its unchanged rules, supersedes a
//! changed value and retires a removed rule (kept while another file still says it), a
//! forgotten rule stays forgotten, and bad input is a typed error that writes nothing.

use std::path::PathBuf;

use crate::common::nonce;
use engram::{
    Database, Engram, ErrorCode, HistoryAction, ImportRequest, InstructionFile, RuleOutcome,
};
use engram_store::Statement;

fn instructions_dir() -> PathBuf {
    let dir = std::env::var_os("ENGRAM_EVAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval"))
        .join("instructions");
    assert!(
        dir.join("manifest.tsv").is_file(),
        "no instruction files at {} (set ENGRAM_EVAL_DIR)",
        dir.display()
    );
    dir
}

/// A file of the eval set (`name`) as the file at `path` in its project.
fn file(name: &str, path: &str) -> InstructionFile {
    let text = std::fs::read_to_string(instructions_dir().join(name)).expect("eval file");
    InstructionFile {
        path: path.to_owned(),
        text,
    }
}

fn request(files: Vec<InstructionFile>) -> ImportRequest {
    ImportRequest { files }
}

/// Rows of every table an import writes.
async fn rows<D: Database>(engram: &Engram<D>) -> Vec<i64> {
    let tables = [
        "memories",
        "memory_history",
        "memory_origins",
        "imported_files",
        "memory_files",
    ];
    let statements: Vec<Statement> = tables
        .iter()
        .map(|t| Statement::new(format!("SELECT count(*) FROM {t}")))
        .collect();
    let answers = engram
        .database()
        .pipeline(&statements)
        .await
        .expect("count");
    answers
        .into_iter()
        .map(|a| {
            a.expect("count").rows[0][0]
                .as_i64("count")
                .expect("a number")
        })
        .collect()
}

async fn formats_duplicates_and_reimport<D: Database + Copy>(db: D) {
    let engram = crate::common::open_project(db, &format!("imp-{}", nonce())).await;
    let cursor = ".cursor/rules/backend/strongly-typed-ids.mdc";
    let windsurf = ".windsurf/rules/backend/strongly-typed-ids.md";
    let files = vec![
        file(
            "platformplatform__PlatformPlatform__.cursor__rules__backend__strongly-typed-ids.mdc",
            cursor,
        ),
        file(
            "platformplatform__PlatformPlatform__.windsurf__rules__backend__strongly-typed-ids.md",
            windsurf,
        ),
        file("astral-sh__uv__AGENTS.md", "AGENTS.md"),
        file("astral-sh__uv__CLAUDE.md", "CLAUDE.md"),
        file("PostHog__posthog__.cursorrules", ".cursorrules"),
    ];
    let report = engram
        .import_instructions(request(files.clone()))
        .await
        .expect("imports");
    let [cursor_rules, windsurf_rules, agents, claude, posthog] = &report.files[..] else {
        panic!("one report per file: {report:?}");
    };
    // The same rule in Cursor and Windsurf form is one memory.
    assert!(!cursor_rules.rules.is_empty());
    assert_eq!(
        cursor_rules.count(RuleOutcome::Added),
        cursor_rules.rules.len()
    );
    assert_eq!(windsurf_rules.rules.len(), cursor_rules.rules.len());
    assert_eq!(
        windsurf_rules.count(RuleOutcome::Merged),
        windsurf_rules.rules.len()
    );
    for (a, b) in cursor_rules.rules.iter().zip(&windsurf_rules.rules) {
        assert_eq!(a.id, b.id);
    }
    // CLAUDE.md is only `@AGENTS.md`: no rules of its own, and the import resolves.
    assert!(claude.rules.is_empty());
    assert_eq!(claude.imports[0].resolved.as_deref(), Some("AGENTS.md"));
    assert!(claude.unresolved.is_empty());
    // uv's AGENTS.md: one memory per bullet, wrapped bullets whole, typed by their words.
    assert_eq!(agents.rules.len(), 20);
    let lockfile = agents
        .rules
        .iter()
        .find(|r| r.text.contains("cargo update --precise"))
        .expect("the lockfile rule");
    assert_eq!((lockfile.line, lockfile.end_line), (14, 15));
    assert_eq!(lockfile.memory_type.as_str(), "requirement");
    let stored = engram.get(&lockfile.id).await.unwrap().expect("live");
    assert_eq!(stored.source.as_str(), "user_taught");
    assert_eq!(stored.citation_text.as_deref(), Some("AGENTS.md:14"));
    assert!(stored.tags.contains(&"imported".to_owned()));
    assert!(
        stored.content.ends_with("to make lockfile changes"),
        "{stored:?}"
    );
    // A personal response-style file is preferences, mostly.
    let preferences = posthog
        .rules
        .iter()
        .filter(|r| r.memory_type.as_str() == "preference")
        .count();
    assert!(preferences * 2 > posthog.rules.len(), "{posthog:?}");

    // Importing the same files again writes nothing.
    let before = rows(&engram).await;
    let again = engram
        .import_instructions(request(files))
        .await
        .expect("imports again");
    assert!(again.files.iter().all(|f| f.unchanged_file), "{again:?}");
    assert_eq!(rows(&engram).await, before);
    for (first, second) in report.files.iter().zip(&again.files) {
        let ids = |f: &engram::FileImport| f.rules.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(first), ids(second));
    }
}

/// uv's AGENTS.md at two commits of its history (02 → 03): one rule removed, one widened,
/// one moved up the list; and its CLAUDE.md turning into `@AGENTS.md` in the commit that
/// moved the rules there.
async fn new_versions<D: Database + Copy>(db: D) {
    let engram = crate::common::open_project(db, &format!("ver-{}", nonce())).await;
    let history =
        |folder: &str, name: &str, path: &str| file(&format!("history/{folder}/{name}"), path);
    let claude_03 = history(
        "astral-sh__uv__CLAUDE.md",
        "03_2026-03-24_dd8bc028.md",
        "CLAUDE.md",
    );
    let first = engram
        .import_instructions(request(vec![claude_03]))
        .await
        .expect("CLAUDE.md 03");
    assert_eq!(first.files[0].rules.len(), 17);
    // The commit that moved every rule to AGENTS.md: CLAUDE.md is `@AGENTS.md`, and the
    // rules live on as AGENTS.md's, retired from nothing.
    let moved = engram
        .import_instructions(request(vec![
            history(
                "astral-sh__uv__CLAUDE.md",
                "04_2026-04-07_27dc5627.md",
                "CLAUDE.md",
            ),
            history(
                "astral-sh__uv__AGENTS.md",
                "01_2026-04-07_27dc5627.md",
                "AGENTS.md",
            ),
        ]))
        .await
        .expect("the move");
    assert!(moved.files[0].retired.is_empty(), "{moved:?}");
    assert_eq!(moved.files[1].count(RuleOutcome::Merged), 17);
    for rule in &first.files[0].rules {
        assert!(engram.get(&rule.id).await.unwrap().is_some(), "{rule:?}");
    }

    let v02 = engram
        .import_instructions(request(vec![history(
            "astral-sh__uv__AGENTS.md",
            "02_2026-04-07_01893f1e.md",
            "AGENTS.md",
        )]))
        .await
        .expect("02");
    assert_eq!(v02.files[0].count(RuleOutcome::Added), 1);
    let id_of = |report: &engram::ImportReport, needle: &str| {
        report.files[0]
            .rules
            .iter()
            .find(|r| r.text.contains(needle))
            .map(|r| r.id.clone())
            .unwrap_or_else(|| panic!("no rule with {needle:?}"))
    };
    let specific = id_of(&v02, "PREFER running specific tests");
    let attempt = id_of(&v02, "ALWAYS attempt to add a test case");
    let clippy = id_of(&v02, "NEVER assume clippy warnings are pre-existing");
    let v03 = engram
        .import_instructions(request(vec![history(
            "astral-sh__uv__AGENTS.md",
            "03_2026-07-29_4893645b.md",
            "AGENTS.md",
        )]))
        .await
        .expect("03");
    let report = &v03.files[0];
    // Moved up the list, same text: the same memory, untouched.
    assert_eq!(id_of(&v03, "PREFER running specific tests"), specific);
    // Removed: retired, with a history entry saying from where.
    assert!(report.retired.iter().any(|r| r.id == attempt), "{report:?}");
    assert!(engram.get(&attempt).await.unwrap().is_none());
    let retired = engram.history(&attempt).await.unwrap();
    let last = retired.last().expect("history");
    assert_eq!(last.action, HistoryAction::Retired);
    assert!(last.reason.contains("removed from AGENTS.md"), "{last:?}");
    // Widened ("clippy warnings" → "clippy warnings or test failures"): the new form
    // supersedes the old.
    let widened = id_of(&v03, "clippy warnings or test failures");
    assert_ne!(widened, clippy);
    let old = engram.get_any(&clippy).await.unwrap().expect("kept");
    assert_eq!(old.superseded_by.as_deref(), Some(widened.as_str()));
    assert!(engram.get(&clippy).await.unwrap().is_none());

    // A rule a person forgot stays forgotten when a later version still has it.
    let forgotten = id_of(&v03, "PREFER `insta` snapshots");
    assert!(engram.forget(&forgotten).await.unwrap());
    let v04 = engram
        .import_instructions(request(vec![history(
            "astral-sh__uv__AGENTS.md",
            "04_2026-08-05_4fbbc410.md",
            "AGENTS.md",
        )]))
        .await
        .expect("04");
    let insta = v04.files[0]
        .rules
        .iter()
        .find(|r| r.id == forgotten)
        .expect("the forgotten rule is still known");
    assert_eq!(insta.outcome, RuleOutcome::Forgotten);
    assert!(engram.get(&forgotten).await.unwrap().is_none());
    assert_eq!(v04.files[0].count(RuleOutcome::Added), 2);
}

/// Bad input of every kind is a typed error, and nothing of the request is written.
async fn bad_input<D: Database + Copy>(db: D) {
    let engram = crate::common::open_project(db, &format!("bad-{}", nonce())).await;
    let good = file("astral-sh__uv__AGENTS.md", "AGENTS.md");
    let before = rows(&engram).await;
    let with = |path: &str, text: String| {
        request(vec![
            good.clone(),
            InstructionFile {
                path: path.to_owned(),
                text,
            },
        ])
    };
    let cases = [
        ("binary", with("CLAUDE.md", "- rule\u{0}\u{1}".into())),
        (
            "50 MB",
            with("CLAUDE.md", "- a rule\n".repeat(50 * 1024 * 1024 / 9)),
        ),
        ("unknown format", with("src/main.rs", "fn main() {}".into())),
        (
            "outside the project",
            with("../CLAUDE.md", "- a rule".into()),
        ),
        (
            "malformed front matter",
            with(".cursor/rules/a.mdc", "---\nglobs: x\n".into()),
        ),
        ("given twice", with("AGENTS.md", "- a rule".into())),
        ("empty", request(Vec::new())),
    ];
    for (what, bad) in cases {
        let error = engram.import_instructions(bad).await.expect_err(what);
        assert_eq!(error.code(), ErrorCode::InvalidInput, "{what}: {error}");
        assert_eq!(rows(&engram).await, before, "{what} wrote something");
    }
    let error = engram
        .import_instructions_json(r#"{"files":[{"path":"CLAUDE.md"}]}"#)
        .await
        .expect_err("no text");
    assert_eq!(error.code(), ErrorCode::InvalidInput);
    assert_eq!(rows(&engram).await, before);
}

on_a_file_and_over_http!(
    formats_duplicates_and_reimport,
    formats_duplicates_and_reimport_on_an_embedded_libsql_file,
    formats_duplicates_and_reimport_on_the_test_server_over_http
);
on_a_file_and_over_http!(
    new_versions,
    new_versions_on_an_embedded_libsql_file,
    new_versions_on_the_test_server_over_http
);
on_a_file_and_over_http!(
    bad_input,
    bad_input_on_an_embedded_libsql_file,
    bad_input_on_the_test_server_over_http
);
