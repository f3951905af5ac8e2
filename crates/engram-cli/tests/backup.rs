//! The local file's backups: an emptied file is refused (nothing written) while its backup
//! holds memories, `engram repair --restore` brings them back, and `engram doctor` says
//! whether the file is whole.

mod common;

use common::{engram, stdout};
use serde_json::Value;

#[test]
fn an_emptied_file_is_refused_and_its_backup_restored() {
    let dir = std::env::temp_dir().join(format!("engram-cli-backup-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("e.db");
    for i in 0..12 {
        let content = format!("heronflag {i}: the staging cache must be warmed first");
        stdout(&engram(
            &db,
            &["remember", "--type", "gotcha", &content],
            None,
        ));
    }
    // The first command made the day's backup; this one makes one of all twelve.
    let taken: Value =
        serde_json::from_str(&stdout(&engram(&db, &["--json", "backup"], None))).unwrap();
    assert_eq!(taken["memories"], 12, "{taken}");
    let doctor = engram(&db, &["doctor"], None);
    assert!(stdout(&doctor).contains("the database is whole"));

    // The file is emptied behind engram's back.
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(dir.join(format!("e.db{suffix}")));
    }
    std::fs::write(&db, b"").unwrap();
    let refused = engram(
        &db,
        &["--json", "remember", "--type", "gotcha", "new"],
        None,
    );
    assert!(!refused.status.success());
    let error: Value = serde_json::from_slice(&refused.stderr).expect("a JSON error");
    assert_eq!(error["error"]["code"], "corrupt", "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("repair --restore"), "{message}");
    assert_eq!(
        std::fs::metadata(&db).unwrap().len(),
        0,
        "something was written"
    );

    let restored = stdout(&engram(&db, &["repair", "--restore"], None));
    assert!(restored.contains("12 memories"), "{restored}");
    let found: Value = serde_json::from_str(&stdout(&engram(
        &db,
        &["--json", "search", "heronflag staging cache", "-n", "20"],
        None,
    )))
    .unwrap();
    assert_eq!(found["hits"].as_array().unwrap().len(), 12, "{found}");
    let kept = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().starts_with("e.db.damaged-"));
    assert!(kept, "the replaced file was not kept");
    let _ = std::fs::remove_dir_all(&dir);
}
