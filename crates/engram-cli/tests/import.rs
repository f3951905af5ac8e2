//! `engram import` on a project laid out like the real ones the eval set comes from: the
//! instruction files are found (nested ones, rule folders), a symlinked CLAUDE.md is an
//! alias, a rule file's `@.github/…` import is followed, dependency folders are skipped;
//! importing again writes nothing, an edited file supersedes and retires what changed,
//! and a binary file is refused with nothing written.

mod common;

use std::path::{Path, PathBuf};

use common::{engram, rows, stdout};
use serde_json::Value;

fn eval_file(name: &str) -> String {
    let dir = std::env::var_os("ENGRAM_EVAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval"));
    std::fs::read_to_string(dir.join("instructions").join(name))
        .unwrap_or_else(|e| panic!("no eval file {name} (set ENGRAM_EVAL_DIR): {e}"))
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn import(db: &Path, root: &Path) -> Value {
    let root = root.to_str().unwrap();
    serde_json::from_str(&stdout(&engram(
        db,
        &["--json", "import", "--root", root],
        None,
    )))
    .expect("JSON")
}

fn count(db: &Path, table: &str) -> i64 {
    rows(db, &format!("SELECT count(*) FROM {table}"), Vec::new())[0][0]
        .as_i64("count")
        .unwrap()
}

#[test]
fn a_project_is_imported_once_and_then_kept_current() {
    let dir = std::env::temp_dir().join(format!("engram-cli-import-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let root = dir.join("project");
    std::fs::create_dir_all(&root).unwrap();
    let db = dir.join("e.db");
    write(&root, "AGENTS.md", &eval_file("astral-sh__uv__AGENTS.md"));
    std::os::unix::fs::symlink("AGENTS.md", root.join("CLAUDE.md")).unwrap();
    write(
        &root,
        ".cursor/rules/review.mdc",
        &eval_file("temporalio__temporal__.cursor__rules__review.mdc"),
    );
    write(
        &root,
        ".github/copilot-instructions.md",
        &eval_file("temporalio__temporal__.github__copilot-instructions.md"),
    );
    write(
        &root,
        "apps/webapp/CLAUDE.md",
        &eval_file("triggerdotdev__trigger.dev__apps__webapp__CLAUDE.md"),
    );
    write(
        &root,
        "node_modules/pkg/AGENTS.md",
        "- NEVER read this dependency's rules\n",
    );
    write(&root, "README.md", "- Not an instruction file\n");

    let first = import(&db, &root);
    let files: Vec<&str> = first["report"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            ".cursor/rules/review.mdc",
            ".github/copilot-instructions.md",
            "AGENTS.md",
            "apps/webapp/CLAUDE.md"
        ],
        "{first}"
    );
    assert_eq!(first["aliases"]["CLAUDE.md"], "AGENTS.md");
    let review = &first["report"]["files"][0];
    assert_eq!(
        review["imports"][0]["resolved"],
        ".github/copilot-instructions.md"
    );
    assert_eq!(review["unresolved"].as_array().unwrap().len(), 0);
    let rules: usize = first["report"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rules"].as_array().unwrap().len())
        .sum();
    assert!(rules > 100, "{rules}");
    let nested = &first["report"]["files"][3]["rules"][0];
    let memory = rows(
        &db,
        "SELECT related_modules, scope, source FROM memories WHERE id = ?1",
        vec![nested["id"].as_str().unwrap().into()],
    );
    assert_eq!(
        memory[0][0].as_text("modules").unwrap(),
        r#"["apps/webapp"]"#
    );
    assert_eq!(memory[0][1].as_text("scope").unwrap(), "module");
    assert_eq!(memory[0][2].as_text("source").unwrap(), "user_taught");

    let history = count(&db, "memory_history");
    let again = import(&db, &root);
    assert!(
        again["report"]["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["unchangedFile"] == true),
        "{again}"
    );
    assert_eq!(count(&db, "memory_history"), history);

    // The person edits AGENTS.md: one rule goes, one changes its command.
    let agents = eval_file("astral-sh__uv__AGENTS.md")
        .replace(
            "- PREFER top-level imports over local imports or fully qualified names\n",
            "",
        )
        .replace("`cargo xwin clippy`", "`cargo xwin check`");
    write(&root, "AGENTS.md", &agents);
    let edited = import(&db, &root);
    let file = &edited["report"]["files"][2];
    assert_eq!(file["path"], "AGENTS.md");
    let outcomes: Vec<&str> = file["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == "revised").count(),
        1,
        "{file}"
    );
    assert_eq!(
        outcomes.iter().filter(|o| **o == "unchanged").count(),
        18,
        "{file}"
    );
    let retired = file["retired"].as_array().unwrap();
    assert_eq!(retired.len(), 1);
    assert!(retired[0]["text"]
        .as_str()
        .unwrap()
        .contains("top-level imports"));

    // A binary instruction file: a typed error naming it, and nothing written.
    std::fs::write(root.join("GEMINI.md"), b"\x00\x01\x02binary").unwrap();
    let history = count(&db, "memory_history");
    let refused = engram(
        &db,
        &["--json", "import", "--root", root.to_str().unwrap()],
        None,
    );
    assert!(!refused.status.success());
    let error: Value = serde_json::from_slice(&refused.stderr).expect("a JSON error");
    assert_eq!(error["error"]["code"], "invalid_input", "{error}");
    assert!(error["error"]["message"]
        .as_str()
        .unwrap()
        .contains("GEMINI.md"));
    assert_eq!(count(&db, "memory_history"), history);
    // Not UTF-8: the same typed error, from the CLI's read.
    std::fs::write(root.join("GEMINI.md"), b"- caf\xe9 rule\n").unwrap();
    let refused = engram(
        &db,
        &["--json", "import", "--root", root.to_str().unwrap()],
        None,
    );
    let error: Value = serde_json::from_slice(&refused.stderr).expect("a JSON error");
    assert_eq!(error["error"]["code"], "invalid_input", "{error}");
    assert_eq!(count(&db, "memory_history"), history);
    let _ = std::fs::remove_dir_all(&dir);
}
