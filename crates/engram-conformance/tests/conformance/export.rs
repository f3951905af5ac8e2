//! Export and load on libSQL: a project built from the development data — a real Claude
//! Code session replayed through the observer, real instruction files imported (the
//! PlatformPlatform Cursor and Windsurf twins merge; a trigger.dev rule file's next version
//! supersedes and retires), a changed value superseding, a memory forgotten and one
//! restored — exported to JSON and loaded into an empty database is the same, column by
//! column, with the same history and origins, and keyword search finds the same memories.
//! Loading it again, or an export naming a column engram does not know, is refused with
//! nothing written.

use std::path::PathBuf;

use crate::common::nonce;
use crate::file_db::open_db;
use engram::observer::{PathNormalizer, Scratchpad, SessionKind};
use engram::{
    Database, Engram, EngramConfig, ErrorCode, Host, ImportRequest, InstructionFile, MemoryType,
    NewMemory, ProjectExport, SearchMode, SearchQuery, MEMORY_TABLE_COLUMNS,
};
use engram_store::{Statement, Value};
use serde_json::Value as Json;

fn eval_dir() -> PathBuf {
    std::env::var_os("ENGRAM_EVAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval"))
}

fn instruction(name: &str, path: &str) -> InstructionFile {
    let text = std::fs::read_to_string(eval_dir().join("instructions").join(name))
        .expect("eval instruction file (set ENGRAM_EVAL_DIR)");
    InstructionFile {
        path: path.to_owned(),
        text,
    }
}

pub(crate) async fn open<D: Database>(db: D, project: &str) -> Engram<D> {
    let config = EngramConfig {
        project_id: project.to_owned(),
    };
    Engram::open(db, config, Host::native())
        .await
        .expect("open")
}

/// The project the way a few days of real work leave it.
pub(crate) async fn build<D: Database>(engram: &Engram<D>) {
    let transcript = eval_dir().join("transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl");
    let text = std::fs::read_to_string(transcript).expect("eval transcript");
    let session = engram::observer::transcript::parse(&text).expect("parses");
    let mut pad = Scratchpad::new(
        session.id.clone(),
        SessionKind::Build,
        PathNormalizer::new(session.roots.iter().cloned()),
    );
    for event in &session.events {
        pad.observe(event);
    }
    let learned = engram
        .finalize_session(&pad, engram::observer::Outcome::Success)
        .await
        .expect("finalized");
    assert!(
        !learned.promoted.is_empty() || learned.record.is_some(),
        "the session teaches something"
    );
    let twins = [
        instruction(
            "platformplatform__PlatformPlatform__.cursor__rules__backend__strongly-typed-ids.mdc",
            ".cursor/rules/backend/strongly-typed-ids.mdc",
        ),
        instruction(
            "platformplatform__PlatformPlatform__.windsurf__rules__backend__strongly-typed-ids.md",
            ".windsurf/rules/backend/strongly-typed-ids.md",
        ),
    ];
    engram
        .import_instructions(ImportRequest {
            files: twins.to_vec(),
        })
        .await
        .expect("imported");
    let history = eval_dir()
        .join("instructions/history/triggerdotdev__trigger.dev__.cursor__rules__webapp.mdc");
    for version in ["03_2025-03-21_49a3f72e.mdc", "04_2025-08-27_24a91513.mdc"] {
        let text = std::fs::read_to_string(history.join(version)).expect("history version");
        let file = InstructionFile {
            path: ".cursor/rules/webapp.mdc".into(),
            text,
        };
        engram
            .import_instructions(ImportRequest { files: vec![file] })
            .await
            .expect("imported");
    }
    let decision = |text: &str| NewMemory::new(MemoryType::Decision, text);
    engram
        .remember(decision("The API request timeout is 30 seconds"))
        .await
        .unwrap();
    let newer = engram
        .remember(decision("The API request timeout is 60 seconds"))
        .await
        .unwrap();
    assert!(newer.superseded.is_some(), "{newer:?}");
    let gone = engram
        .remember(decision("Nightly builds publish to the staging bucket"))
        .await
        .unwrap();
    engram.forget(&gone.id).await.unwrap();
    let back = engram
        .remember(decision("Releases are cut from the main branch only"))
        .await
        .unwrap();
    engram.forget(&back.id).await.unwrap();
    engram.restore(&back.id).await.unwrap();
}

/// Every history entry without its row number (a load numbers them anew).
fn entries(export: &ProjectExport) -> Vec<serde_json::Map<String, Json>> {
    export
        .history
        .iter()
        .map(|entry| {
            let mut entry = entry.clone();
            entry.remove("id");
            entry
        })
        .collect()
}

async fn count<D: Database>(db: D, project: &str) -> i64 {
    let rows = db
        .pipeline(&[Statement::with_params(
            "SELECT count(*) FROM memories WHERE project_id = ?1",
            vec![Value::from(project)],
        )])
        .await
        .expect("read");
    rows.into_iter().next().expect("one").expect("ok").rows[0][0]
        .as_i64("count")
        .expect("count")
}

async fn keyword_ids<D: Database>(engram: &Engram<D>, text: &str) -> Vec<String> {
    let mut query = SearchQuery::new(text);
    query.mode = SearchMode::Keyword;
    let found = engram.search(&query).await.expect("search");
    found.hits.into_iter().map(|h| h.memory.id).collect()
}

async fn round_trip<D: Database + Copy>(db: D) {
    let project = format!("export-{}", nonce());
    let source = open(db, &project).await;
    build(&source).await;
    assert_eq!(
        source.export().await.unwrap().trust_level,
        None,
        "never set"
    );
    source
        .set_trust_level(engram::TrustLevel::Confident)
        .await
        .unwrap();
    let export = source.export().await.expect("exported");
    assert_eq!(export.trust_level, Some(engram::TrustLevel::Confident));
    let retired = export
        .memories
        .iter()
        .filter(|m| m["deprecated"] == 1)
        .count();
    assert!(retired >= 3, "retired memories are exported too: {retired}");
    assert!(!export.origins.is_empty() && !export.history.is_empty());
    assert_eq!(export.redacted, 0, "the store holds no secret to find");
    // The export's columns are the table's, all of them.
    let columns = db
        .pipeline(&[Statement::new(
            "SELECT name FROM pragma_table_info('memories')",
        )])
        .await
        .expect("read");
    let mut table: Vec<String> = columns
        .into_iter()
        .next()
        .unwrap()
        .unwrap()
        .rows
        .iter()
        .map(|row| row[0].as_text("name").unwrap().to_owned())
        .collect();
    table.sort();
    let mut known: Vec<String> = MEMORY_TABLE_COLUMNS
        .iter()
        .map(|c| (*c).to_owned())
        .collect();
    known.sort();
    assert_eq!(table, known, "the export knows every column of the table");
    let mut keys: Vec<&String> = export.memories[0].keys().collect();
    keys.sort();
    assert_eq!(keys.len(), known.len());

    let (_tmp, empty) = open_db("export-target").await;
    let target = open(&empty, &project).await;
    let loaded = target.load_export(&export).await.expect("loaded");
    assert_eq!(loaded.memories as usize, export.memories.len());
    let again = target.export().await.expect("exported again");
    assert_eq!(
        again.memories, export.memories,
        "every column of every memory"
    );
    assert_eq!(entries(&again), entries(&export), "every history entry");
    assert_eq!(again.origins, export.origins, "every origin");
    assert_eq!(
        target.trust_level().await.unwrap().level,
        engram::TrustLevel::Confident,
        "the trust level"
    );
    for words in ["strongly typed", "timeout", "release main branch"] {
        assert_eq!(
            keyword_ids(&target, words).await,
            keyword_ids(&source, words).await,
            "keyword search for {words:?}"
        );
    }

    let (before, after) = (
        source.health().await.unwrap(),
        target.health().await.unwrap(),
    );
    assert_eq!(
        (after.live, &after.by_type, &after.by_source),
        (before.live, &before.by_type, &before.by_source)
    );
    assert!(
        before.by_source.contains_key("observer_inferred")
            && before.by_source.contains_key("user_taught"),
        "{before:?}"
    );
    assert!(
        before.folders.iter().any(|f| f.memories > 0),
        "the session's files have memories: {before:?}"
    );
    assert_eq!(
        before.growth.iter().map(|w| w.added).sum::<u64>() as usize,
        export.memories.len()
    );

    let twice = target.load_export(&export).await.unwrap_err();
    assert_eq!(twice.code(), ErrorCode::InvalidInput, "{twice}");
    let mut hostile = export.clone();
    hostile.memories[0].insert(
        "evil) VALUES (1); DROP TABLE memories; --".into(),
        Json::from(1),
    );
    for id in hostile.memories.iter_mut() {
        let fresh = format!("{}-copy", id["id"].as_str().unwrap());
        id.insert("id".into(), Json::from(fresh));
    }
    let other = open(&empty, "another-project").await;
    let refused = other.load_export(&hostile).await.unwrap_err();
    assert_eq!(refused.code(), ErrorCode::InvalidInput, "{refused}");
    assert!(
        refused.to_string().contains("is not a column engram knows"),
        "{refused}"
    );
    assert_eq!(count(&empty, "another-project").await, 0, "nothing written");
    assert_eq!(
        count(&empty, &project).await as usize,
        export.memories.len()
    );
}

on_a_file_and_over_http!(
    round_trip,
    round_trip_on_an_embedded_libsql_file,
    round_trip_on_the_test_server_over_http
);
