//! Stored text that would act on a terminal (escape sequences, carriage returns, bells) is
//! printed as visible escapes by every human-readable command; `--json` stays valid JSON.

mod common;

use common::{engram, stdout};

#[test]
fn escape_bytes_in_a_memory_never_reach_the_terminal() {
    let dir = std::env::temp_dir().join(format!("engram-cli-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("e.db");
    // Clear the screen, retitle the window, ring the bell, overwrite the line.
    let content = "rotate the keys monthly\u{1b}[2J\u{1b}]0;owned\u{7}\rall good";
    let added = engram(&db, &["remember", "--type", "gotcha", content], None);
    let printed = stdout(&added);
    let id = printed
        .lines()
        .find_map(|l| l.strip_prefix("remembered "))
        .expect("the new id")
        .trim()
        .to_owned();
    for args in [
        vec!["search", "rotate keys monthly"],
        vec!["get", id.as_str()],
    ] {
        let out = stdout(&engram(&db, &args, None));
        assert!(out.contains("rotate the keys monthly"), "{args:?}: {out}");
        assert!(
            !out.chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{args:?} printed a control character: {out:?}"
        );
        assert!(out.contains("\\u{1b}"), "{args:?}: {out}");
    }
    let json = stdout(&engram(&db, &["--json", "get", id.as_str()], None));
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(value["content"], content);
    let _ = std::fs::remove_dir_all(&dir);
}
