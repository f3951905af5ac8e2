//! The observer on an embedded libSQL file: evidence accumulates across sessions until a
//! co-access pattern is promoted (once), replaying a session twice counts it once, an
//! unfinished session is recovered from its checkpoint as cancelled, the statistics tables
//! are updated, and no secret from a tool result reaches a stored memory.

use crate::common::FakeWordEmbedder;
use crate::file_db::{open_db, open_engram};
use engram::observer::{
    Event, Outcome, PathNormalizer, Scratchpad, SessionKind, ToolCall, ToolResult,
};
use engram::{MemorySource, SearchQuery};
use engram_libsql::LocalDatabase;
use engram_store::{Database, Statement};
use serde_json::json;

fn session(id: &str, commands: &[(&str, &str, bool)]) -> Scratchpad {
    let mut pad = Scratchpad::new(id, SessionKind::Build, PathNormalizer::new(["/repo"]));
    for (i, (command, output, is_error)) in commands.iter().enumerate() {
        let step = i as u32 + 1;
        let id = format!("c{step}");
        pad.observe(&Event::ToolCall(ToolCall {
            step,
            id: Some(id.clone()),
            tool: "Bash".into(),
            input: json!({ "command": command }),
            at_ms: None,
        }));
        pad.observe(&Event::ToolResult(ToolResult {
            step,
            id: Some(id),
            output: (*output).into(),
            is_error: *is_error,
        }));
    }
    pad
}

/// Reads two auth files and edits one, as a typical session does.
const TYPICAL: [(&str, &str, bool); 3] = [
    ("cat /repo/src/auth/session.py", "…", false),
    ("nl -ba src/auth/tokens.py | sed -n '1,40p'", "…", false),
    (
        "sed -i 's/ttl = 60/ttl = 600/' src/auth/tokens.py",
        "",
        false,
    ),
];

fn typical(id: &str) -> Scratchpad {
    session(id, &TYPICAL)
}

async fn count(db: &LocalDatabase, sql: &str) -> i64 {
    let rows = db.transaction(&[Statement::new(sql)]).await.expect("query");
    rows[0].rows[0][0].as_i64("count").expect("integer")
}

#[tokio::test]
async fn co_access_is_promoted_on_the_third_session_and_only_once() {
    let (_file, db) = open_db("observer").await;
    let engram = open_engram(&db).await;
    let key_memory = |r: &engram::SessionReport| {
        r.promoted.iter().any(|m| {
            m.files.contains(&"src/auth/session.py".to_owned())
                && m.files.contains(&"src/auth/tokens.py".to_owned())
                && m.signal == Some(engram::observer::SignalClass::CoAccess)
        })
    };
    let first = engram
        .finalize_session(&typical("s1"), Outcome::Success)
        .await
        .expect("s1");
    assert!(!key_memory(&first));
    assert_eq!(first.hot_files[0].path, "src/auth/tokens.py");
    let again = engram
        .finalize_session(&typical("s1"), Outcome::Success)
        .await
        .expect("s1 again");
    assert!(again.already_finalized && again.promoted.is_empty());
    let second = engram
        .finalize_session(&typical("s2"), Outcome::Success)
        .await
        .expect("s2");
    assert!(!key_memory(&second));
    let third = engram
        .finalize_session(&typical("s3"), Outcome::Success)
        .await
        .expect("s3");
    assert!(key_memory(&third), "{:#?}", third.promoted);
    let fourth = engram
        .finalize_session(&typical("s4"), Outcome::Success)
        .await
        .expect("s4");
    assert!(!key_memory(&fourth));
    assert!(fourth
        .discarded
        .iter()
        .any(|d| d.key == "co:src/auth/session.py|src/auth/tokens.py"
            && d.reason.starts_with("novelty")));

    // The promoted memory is stored, observer-inferred, injected without review (three
    // sessions showed it), and searchable.
    let promoted = third
        .promoted
        .iter()
        .find(|m| {
            key_memory(&engram::SessionReport {
                promoted: vec![(*m).clone()],
                ..third.clone()
            })
        })
        .unwrap();
    let stored = engram
        .get(&promoted.id)
        .await
        .expect("get")
        .expect("stored");
    assert_eq!(stored.source, MemorySource::ObserverInferred);
    assert!(!stored.flags.needs_review);
    let found = engram
        .search(&SearchQuery::new("session tokens"))
        .await
        .expect("search");
    assert!(found.hits.iter().any(|h| h.memory.id == promoted.id));

    // Statistics: four sessions, the pair seen in each, file nodes counted per session.
    assert_eq!(
        count(&db, "SELECT count(*) FROM observer_sessions").await,
        4
    );
    assert_eq!(count(&db, "SELECT session_count FROM observer_co_access_edges WHERE file_a = 'src/auth/session.py' AND file_b = 'src/auth/tokens.py'").await, 4);
    assert_eq!(
        count(
            &db,
            "SELECT session_count FROM observer_file_nodes WHERE file_path = 'src/auth/tokens.py'"
        )
        .await,
        4
    );
    assert_eq!(
        count(
            &db,
            "SELECT count FROM observer_module_session_counts WHERE module = 'src/auth'"
        )
        .await,
        4
    );
    drop(engram);
}

#[tokio::test]
async fn an_unfinished_session_is_recovered_as_cancelled() {
    let (_file, db) = open_db("observer-recover").await;
    let engram = open_engram(&db).await;
    let mut pad = typical("crashed");
    pad.observe(&Event::Reasoning {
        step: 4,
        text: "This approach won't work: `token_cache` is per process.".into(),
    });
    engram.checkpoint_session(&pad).await.expect("checkpoint");
    drop(pad);
    let unfinished = engram.unfinished_sessions().await.expect("list");
    assert_eq!(unfinished.len(), 1);
    assert_eq!(unfinished[0].hot_files(2), typical("x").hot_files(2));
    let reports = engram.recover_sessions().await.expect("recover");
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].outcome, Outcome::Cancelled);
    // A cancelled session keeps only its dead end.
    assert_eq!(reports[0].promoted.len(), 1);
    assert_eq!(
        reports[0].promoted[0].memory_type,
        engram::MemoryType::DeadEnd
    );
    assert!(engram.unfinished_sessions().await.expect("list").is_empty());
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM observer_sessions WHERE outcome = 'cancelled'"
        )
        .await,
        1
    );
    drop(engram);
}

#[tokio::test]
async fn secrets_in_tool_results_never_reach_stored_memories() {
    let (_file, db) = open_db("observer-secrets").await;
    let engram = open_engram(&db).await;
    let secret = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB";
    let failure = format!("Error: authentication failed for token {secret}");
    let pad = session(
        "leaky",
        &[
            ("python deploy.py", &failure, true),
            ("sed -i 's/a/b/' deploy/config.py", "", false),
            ("python deploy.py", &failure, true),
            ("sed -i 's/b/c/' deploy/config.py", "", false),
            ("python deploy.py", "deployed", false),
        ],
    );
    let report = engram
        .finalize_session(&pad, Outcome::Success)
        .await
        .expect("finalize");
    let error = report
        .promoted
        .iter()
        .find(|m| m.signal == Some(engram::observer::SignalClass::ErrorRetry))
        .expect("error pattern");
    assert!(
        error.content.contains("authentication failed"),
        "{}",
        error.content
    );
    for table in [
        "memories",
        "observer_error_patterns",
        "observer_signal_counts",
        "memories_fts",
    ] {
        let sql = format!(
            "SELECT count(*) FROM {table} WHERE CAST(({}) AS TEXT) LIKE '%ghp_1234567890%'",
            match table {
                "memories" => "content || tags",
                "observer_error_patterns" => "error_message || error_fingerprint",
                "observer_signal_counts" => "key",
                _ => "content",
            }
        );
        assert_eq!(count(&db, &sql).await, 0, "{table} holds the secret");
    }
    drop(engram);
}

#[tokio::test]
async fn a_git_log_bootstraps_co_access_so_one_session_confirms_it() {
    let (_file, db) = open_db("observer-git").await;
    let engram = open_engram(&db).await;
    let sha = |c: char| c.to_string().repeat(40);
    let log = format!(
        "commit:{}\n\nsrc/auth/session.py\nsrc/auth/tokens.py\n\ncommit:{}\n\nsrc/auth/session.py\nsrc/auth/tokens.py\nREADME.md\n\ncommit:{}\n\nsrc/auth/session.py\nsrc/auth/tokens.py\n",
        sha('a'),
        sha('b'),
        sha('c')
    );
    assert_eq!(
        engram
            .bootstrap_from_git_log(&log)
            .await
            .expect("bootstrap"),
        3
    );
    assert_eq!(count(&db, "SELECT raw_count FROM observer_co_access_edges WHERE file_a = 'src/auth/session.py' AND file_b = 'src/auth/tokens.py'").await, 3);
    // Three co-commits count as two sessions (one short of the minimum of three): the first
    // agent session showing the pair promotes it.
    let report = engram
        .finalize_session(&typical("first"), Outcome::Success)
        .await
        .expect("finalize");
    assert!(
        report
            .promoted
            .iter()
            .any(|m| m.signal == Some(engram::observer::SignalClass::CoAccess)),
        "{:#?}",
        report.discarded
    );
    assert_eq!(
        engram
            .bootstrap_from_git_log("no commits here")
            .await
            .expect("empty"),
        0
    );
    drop(engram);
}

/// Fake LLM standing in for a host model: answers with a fixed text, counting calls.
struct FakeLlm {
    answer: String,
    calls: std::rc::Rc<std::cell::Cell<usize>>,
}

impl engram::Generate for FakeLlm {
    fn generate<'a>(&'a self, prompt: &'a str, _max_tokens: u32) -> engram::GenerateFuture<'a> {
        self.calls.set(self.calls.get() + 1);
        let answer = if self.answer == "ECHO" {
            // One rewritten sentence per numbered observation in the prompt.
            let lines: Vec<String> = prompt
                .lines()
                .filter(|l| {
                    l.split_once(". [")
                        .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
                })
                .map(|l| {
                    format!(
                        "Rewritten: {}",
                        l.split_once("] ").map_or("", |(_, rest)| rest)
                    )
                })
                .collect();
            serde_json::to_string(&lines).unwrap()
        } else {
            self.answer.clone()
        };
        Box::pin(async move { Ok(answer) })
    }
}

#[tokio::test]
async fn a_host_llm_rewrites_promoted_memories_in_one_call_or_not_at_all() {
    let failing_twice = || {
        session(
            "llm",
            &[
                (
                    "python -m pytest tests/test_auth.py",
                    "E   KeyError: 'ttl'",
                    true,
                ),
                ("sed -i 's/a/b/' src/auth/tokens.py", "", false),
                (
                    "python -m pytest tests/test_auth.py",
                    "E   KeyError: 'ttl'",
                    true,
                ),
                ("sed -i 's/b/c/' src/auth/tokens.py", "", false),
                ("python -m pytest tests/test_auth.py", "1 passed", false),
            ],
        )
    };
    for (answer, rewritten) in [
        ("ECHO", true),
        ("I cannot help with that.", false),
        ("[1, 2]", false),
        ("[\"\"]", false),
    ] {
        let (_file, db) = open_db("observer-llm").await;
        let calls = std::rc::Rc::new(std::cell::Cell::new(0));
        let engram = open_engram(&db).await.with_llm(Box::new(FakeLlm {
            answer: answer.into(),
            calls: calls.clone(),
        }));
        let report = engram
            .finalize_session(&failing_twice(), Outcome::Success)
            .await
            .expect("finalize");
        assert_eq!(calls.get(), 1, "one call per session");
        assert_eq!(report.synthesized_by_llm, rewritten);
        assert!(!report.promoted.is_empty());
        for memory in &report.promoted {
            assert_eq!(
                memory.content.starts_with("Rewritten: "),
                rewritten,
                "{}",
                memory.content
            );
            let stored = engram.get(&memory.id).await.expect("get").expect("stored");
            assert_eq!(stored.content, memory.content);
        }
        // A failed session makes no call.
        let failed = engram
            .finalize_session(
                &session("failed", &[("cat a.py", "", false)]),
                Outcome::Failure,
            )
            .await
            .expect("failed");
        assert!(failed.promoted.is_empty());
        assert_eq!(calls.get(), 1);
        drop(engram);
    }
}

#[tokio::test]
async fn a_near_duplicate_of_an_existing_memory_is_not_promoted() {
    let (_file, db) = open_db("observer-novelty").await;
    let engram = open_engram(&db)
        .await
        .with_embedder(Box::new(FakeWordEmbedder));
    let failing = |id: &str, command: &str| {
        session(
            id,
            &[
                (
                    command,
                    "E   KeyError: 'ttl' while loading the session token configuration",
                    true,
                ),
                ("sed -i 's/a/b/' src/auth/tokens.py", "", false),
                (
                    command,
                    "E   KeyError: 'ttl' while loading the session token configuration",
                    true,
                ),
                ("sed -i 's/b/c/' src/auth/tokens.py", "", false),
                (command, "1 passed", false),
            ],
        )
    };
    let first = engram
        .finalize_session(
            &failing("one", "python -m pytest tests/test_auth.py"),
            Outcome::Success,
        )
        .await
        .expect("first");
    let error = |r: &engram::SessionReport| {
        r.promoted
            .iter()
            .any(|m| m.signal == Some(engram::observer::SignalClass::ErrorRetry))
    };
    assert!(error(&first));
    // Another command, so another observation key, with the same lesson: not new.
    let second = engram
        .finalize_session(
            &failing("two", "pytest tests/test_auth.py"),
            Outcome::Success,
        )
        .await
        .expect("second");
    assert!(!error(&second), "{:#?}", second.promoted);
    assert!(
        second
            .discarded
            .iter()
            .any(|d| d.reason.starts_with("novelty") && d.reason.contains("cosine")),
        "{:#?}",
        second.discarded
    );
    drop(engram);
}

/// The statistics tables as finalizing left them, without their timestamps.
async fn statistics(db: &LocalDatabase) -> Vec<String> {
    let rows = db
        .pipeline(&[
            Statement::new("SELECT key, sessions, occurrences FROM observer_signal_counts ORDER BY key"),
            Statement::new("SELECT file_path, access_count, session_count FROM observer_file_nodes ORDER BY file_path"),
            Statement::new(
                "SELECT file_a, file_b, raw_count, session_count, round(weight, 6), directional \
                 FROM observer_co_access_edges ORDER BY file_a, file_b",
            ),
            Statement::new("SELECT module, count FROM observer_module_session_counts ORDER BY module"),
            Statement::new("SELECT session_id, outcome, promoted FROM observer_sessions ORDER BY session_id"),
            Statement::new("SELECT type, content FROM memories ORDER BY content"),
        ])
        .await
        .expect("statistics");
    rows.into_iter()
        .flat_map(|r| r.expect("statement").rows)
        .map(|row| format!("{row:?}"))
        .collect()
}

#[tokio::test]
async fn a_session_finalized_as_it_grows_is_counted_once_and_learns_what_came_later() {
    let (_once_file, once_db) = open_db("observer-once").await;
    let once = open_engram(&once_db).await;
    let (_grown_file, grown_db) = open_db("observer-grown").await;
    let grown = open_engram(&grown_db).await;

    once.finalize_session(&typical("s1"), Outcome::Success)
        .await
        .expect("s1 at its end");
    let first = grown
        .finalize_session(&session("s1", &TYPICAL[..2]), Outcome::Success)
        .await
        .expect("s1 after two steps");
    assert!(!first.already_finalized);
    let later = grown
        .finalize_session(&typical("s1"), Outcome::Success)
        .await
        .expect("s1 after three steps");
    assert!(later.already_finalized);
    let again = grown
        .finalize_session(&typical("s1"), Outcome::Success)
        .await
        .expect("s1 once more");
    assert!(again.promoted.is_empty());
    assert_eq!(statistics(&grown_db).await, statistics(&once_db).await);

    // Two more sessions: the pair is promoted on the third session in both, once.
    for engram in [&once, &grown] {
        for id in ["s2", "s3"] {
            engram
                .finalize_session(&typical(id), Outcome::Success)
                .await
                .expect("later sessions");
        }
    }
    let promoted = statistics(&grown_db).await;
    assert_eq!(promoted, statistics(&once_db).await);
    let coupled = promoted
        .iter()
        .filter(|row| row.contains("causal_dependency") && row.contains("are worked on together"))
        .count();
    assert_eq!(coupled, 1, "{promoted:#?}");
    assert!(
        promoted.contains(&r#"[Text("s1"), Text("success"), Integer(0)]"#.to_owned()),
        "s1 is one session however often it was finalized: {promoted:#?}"
    );
}
