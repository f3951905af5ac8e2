//! `engram ui` around the panel: the panel process gets the address of a libSQL server over
//! the project's file, which answers only with the token it was given, and the file (with
//! every memory) outlives the command. The panel here is a fake — a Node script in a
//! throwaway `--www` folder that queries the bridge and exits — so this test is about the
//! command, not the Next.js app (www/tests drives that in Chromium).

mod common;

use std::path::Path;

use common::{engram, stdout};

/// A folder `engram ui` takes for a built panel whose `scripts/panel.mjs` asks the bridge
/// for the memory count with and without the token, writes what it saw, and exits.
fn fake_panel(dir: &Path) {
    for folder in ["node_modules/next", ".next", "scripts"] {
        std::fs::create_dir_all(dir.join(folder)).unwrap();
    }
    std::fs::write(dir.join("package.json"), "{}").unwrap();
    std::fs::write(dir.join(".next/BUILD_ID"), "fake").unwrap();
    std::fs::write(
        dir.join("scripts/panel.mjs"),
        r#"import { writeFileSync } from "node:fs";
const url = process.env.ENGRAM_URL, token = process.env.ENGRAM_AUTH_TOKEN;
const body = JSON.stringify({ requests: [{ type: "execute", stmt: { sql: "SELECT count(*) FROM memories" } }, { type: "close" }] });
const ask = (headers) => fetch(`${url}/v3/pipeline`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
const without = await ask({});
const withToken = await ask({ authorization: `Bearer ${token}` });
const answer = await withToken.json();
writeFileSync("seen.json", JSON.stringify({
  url, mode: process.argv[2], host: process.env.HOSTNAME, port: process.env.PORT, project: process.env.ENGRAM_PROJECT,
  without: without.status, with: withToken.status,
  count: answer.results[0].response.result.rows[0][0],
}));
"#,
    )
    .unwrap();
}

#[test]
fn the_panel_gets_a_guarded_bridge_and_the_file_outlives_it() {
    let dir = std::env::temp_dir().join(format!("engram-ui-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let www = dir.join("www");
    fake_panel(&www);
    let db = dir.join("project/.engram/engram.db");
    for text in ["Deploys go through staging", "Use pnpm, not npm"] {
        stdout(&engram(&db, &["remember", text], None));
    }
    let www_arg = www.to_str().unwrap();
    stdout(&engram(
        &db,
        &["--project", "web", "ui", "--www", www_arg, "--port", "4321"],
        None,
    ));
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(www.join("seen.json")).unwrap()).unwrap();
    assert!(
        seen["url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:"),
        "{seen}"
    );
    assert_eq!(seen["mode"], "start");
    assert_eq!(seen["host"], "127.0.0.1");
    assert_eq!(seen["port"], "4321");
    assert_eq!(seen["project"], "web");
    assert_eq!(seen["without"], 401, "the bridge needs its token");
    assert_eq!(seen["with"], 200);
    assert_eq!(seen["count"]["value"], "2", "{seen}");
    // The command is over; the file and its memories are still there.
    assert_eq!(stdout(&engram(&db, &["list", "--count"], None)).trim(), "2");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_panel_folder_is_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("engram-ui-missing-{}", std::process::id()));
    let db = dir.join("e.db");
    let out = engram(&db, &["ui", "--www", "/nonexistent/www"], None);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no panel at /nonexistent/www"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
