//! The keyword table's project column (schema v9): a project holding at most half the table
//! is searched through its own rows only, with the scores an unrestricted search gives; and
//! a version 8 database is migrated to it with every live memory's text and nothing else.
//! On an embedded libSQL file and on the test server over HTTP.

#[macro_use]
mod common;

use common::{nonce, open_project};
use engram::{Database, Engram, MemoryType, NewMemory, SearchMode, SearchQuery};
use engram_store::{Statement, Value};

fn keyword(text: &str) -> SearchQuery {
    SearchQuery {
        mode: SearchMode::Keyword,
        limit: 10,
        ..SearchQuery::new(text)
    }
}

/// Each keyword hit's id and BM25 score, best first.
async fn keyword_hits<D: Database>(engram: &Engram<D>, text: &str) -> Vec<(String, f64)> {
    let found = engram.search(&keyword(text)).await.expect("search");
    found
        .hits
        .iter()
        .map(|h| {
            let hit = h.breakdown.keyword.expect("a keyword hit");
            (h.memory.id.clone(), hit.metric)
        })
        .collect()
}

/// The score FTS5 gives each row for `text` over the whole table, by memory id.
async fn unrestricted_scores<D: Database>(db: D, text: &str) -> Vec<(String, f64)> {
    let expression = engram_core::query::match_expression(text).expect("expression");
    let rows = db
        .transaction(&[Statement::with_params(
            "SELECT memory_id, -bm25(memory_keywords, 0.0, 1.0, 3.0, 2.0, 0.0) \
             FROM memory_keywords WHERE memory_keywords MATCH ?1",
            vec![Value::from(expression)],
        )])
        .await
        .expect("reference");
    rows[0]
        .rows
        .iter()
        .map(|r| {
            (
                r[0].as_text("id").expect("id").to_owned(),
                r[1].as_f64("score").expect("score"),
            )
        })
        .collect()
}

async fn remember_all<D: Database>(engram: &Engram<D>, texts: &[String]) -> Vec<String> {
    let mut ids = Vec::new();
    for text in texts {
        let memory = NewMemory::new(MemoryType::Gotcha, text.clone());
        ids.push(engram.remember(memory).await.expect("remember").id);
    }
    ids
}

async fn a_small_project_searches_its_own_rows<D: Database + Copy>(db: D) {
    let big_id = format!("ks-big-{}", nonce());
    let small_id = format!("{big_id}-small");
    let big = open_project(db, &big_id).await;
    let small = open_project(db, &small_id).await;
    let big_texts: Vec<String> = (0..12)
        .map(|i| format!("release {i}: the lock wait grew past the timeout"))
        .collect();
    remember_all(&big, &big_texts).await;
    let small_texts = [
        "the database lock timeout hits when two test processes share one file",
        "a lock file is left behind after a crash",
        "timeouts in CI come from the slow runner",
        "unrelated: the dashboard uses CSS grid",
    ]
    .map(String::from);
    let small_ids = remember_all(&small, &small_texts).await;
    let query = "database lock timeout";

    // 4 of 16 rows: the small project's search is restricted, and its scores are those of
    // the whole table.
    let restricted = keyword_hits(&small, query).await;
    assert_eq!(restricted.len(), 3, "{restricted:?}");
    assert_eq!(restricted[0].0, small_ids[0]);
    let reference = unrestricted_scores(db, query).await;
    for (id, score) in &restricted {
        let (_, expected) = reference.iter().find(|(r, _)| r == id).expect("matched");
        assert!((score - expected).abs() < 1e-12, "{score} vs {expected}");
    }

    // Only the restricted search misses a row whose project term is another project's.
    db.transaction(&[Statement::with_params(
        "UPDATE memory_keywords SET project = char(57344) || hex(?1) WHERE memory_id = ?2",
        vec![
            Value::from(big_id.as_str()),
            Value::from(small_ids[0].as_str()),
        ],
    )])
    .await
    .expect("tamper");
    let missing = keyword_hits(&small, query).await;
    assert_eq!(missing.len(), 2, "{missing:?}");
    assert!(missing.iter().all(|(id, _)| id != &small_ids[0]));
    // The large project (12 of 16) searches unrestricted and still keeps only its own.
    let big_hits = keyword_hits(&big, query).await;
    assert_eq!(big_hits.len(), 10);
    assert!(big_hits.iter().all(|(id, _)| !small_ids.contains(id)));

    // Grown to more than half the table, the small project searches unrestricted: the row
    // is found again.
    let more: Vec<String> = (0..10)
        .map(|i| format!("note {i} about the sprint backlog"))
        .collect();
    let more_ids = remember_all(&small, &more).await;
    let unrestricted = keyword_hits(&small, query).await;
    assert_eq!(unrestricted[0].0, small_ids[0], "{unrestricted:?}");
    // Forgetting two brings it back to half (12 of 24 live memories).
    for id in [&small_ids[3], &more_ids[0]] {
        assert!(small.forget(id).await.expect("forget"));
    }
    let again = keyword_hits(&small, query).await;
    assert!(again.iter().all(|(id, _)| id != &small_ids[0]), "{again:?}");

    // The counts the scope reads follow every change to a memory, whoever makes it.
    assert_counts_match(db, &[&big_id, &small_id]).await;
    db.transaction(&[
        Statement::with_params(
            "UPDATE memories SET deprecated = 0 WHERE id = ?1",
            vec![Value::from(small_ids[3].as_str())],
        ),
        Statement::with_params(
            "UPDATE memories SET project_id = ?1 WHERE id = ?2",
            vec![
                Value::from(big_id.as_str()),
                Value::from(more_ids[1].as_str()),
            ],
        ),
        Statement::with_params(
            "UPDATE memories SET project_id = ?1, deprecated = 0 WHERE id = ?2",
            vec![
                Value::from(big_id.as_str()),
                Value::from(more_ids[0].as_str()),
            ],
        ),
        Statement::with_params(
            "DELETE FROM memories WHERE id = ?1",
            vec![Value::from(small_ids[1].as_str())],
        ),
    ])
    .await
    .expect("raw changes");
    assert_counts_match(db, &[&big_id, &small_id]).await;
    assert_eq!(live_count(db, &small_id).await, 11);
}

/// What `memory_counts` holds for `project`.
async fn live_count<D: Database>(db: D, project: &str) -> i64 {
    let rows = db
        .transaction(&[Statement::with_params(
            "SELECT coalesce((SELECT live FROM memory_counts WHERE project_id = ?1), 0)",
            vec![Value::from(project)],
        )])
        .await
        .expect("count");
    rows[0].rows[0][0].as_i64("live").expect("live")
}

/// `memory_counts` agrees with the memories for each of `projects`.
async fn assert_counts_match<D: Database + Copy>(db: D, projects: &[&str]) {
    for project in projects {
        let rows = db
            .transaction(&[Statement::with_params(
                "SELECT count(*) FROM memories WHERE project_id = ?1 AND deprecated = 0",
                vec![Value::from(*project)],
            )])
            .await
            .expect("count");
        let counted = rows[0].rows[0][0].as_i64("count").expect("count");
        assert_eq!(live_count(db, project).await, counted, "{project}");
    }
}

/// Rolls the database back to its version 8 form: no counts, the old keyword table, empty
/// (version 9 refills from the memories), and the ledger without version 9.
async fn roll_back_to_version_8<D: Database>(db: D) {
    db.transaction(&[
        Statement::new("DROP TRIGGER memory_counts_insert"),
        Statement::new("DROP TRIGGER memory_counts_update"),
        Statement::new("DROP TRIGGER memory_counts_delete"),
        Statement::new("DROP TABLE memory_counts"),
        Statement::new("DROP TABLE memory_keywords_vocab"),
        Statement::new("DROP TABLE memory_keywords"),
        Statement::new(
            "CREATE VIRTUAL TABLE memories_fts USING fts5(memory_id UNINDEXED, content, tags, \
             related_files, tokenize = 'porter unicode61')",
        ),
        Statement::new(
            "CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, 'row')",
        ),
        Statement::new("DELETE FROM schema_migrations WHERE version = 9"),
    ])
    .await
    .expect("roll back");
}

async fn count<D: Database>(db: D, sql: &str) -> i64 {
    let rows = db.transaction(&[Statement::new(sql)]).await.expect(sql);
    rows[0].rows[0][0].as_i64("count").expect("count")
}

async fn version_8_databases_are_migrated<D: Database + Copy>(db: D) {
    let project = format!("ks-migrate-{}", nonce());
    let first = open_project(db, &project).await;
    let second = open_project(db, &format!("{project}-second")).await;
    for (engram, shift) in [(&first, 0), (&second, 5)] {
        for i in 0..12 {
            let n = i + shift;
            let memory = NewMemory {
                tags: vec![format!("tag{}", n % 3), "shared tag".into()],
                related_files: vec![format!("src/file{}.rs", n % 4)],
                ..NewMemory::new(
                    MemoryType::Gotcha,
                    format!("entry {n}: the upload retries {} times", n % 5),
                )
            };
            engram.remember(memory).await.expect("remember");
        }
    }
    let gone = keyword_hits(&first, "entry 3").await[0].0.clone();
    assert!(first.forget(&gone).await.expect("forget"));
    let queries = ["upload retries", "tag1 file2", "shared entry 7"];
    let mut before = Vec::new();
    for query in queries {
        before.push(keyword_hits(&first, query).await);
        before.push(keyword_hits(&second, query).await);
    }

    roll_back_to_version_8(db).await;
    let reopened = open_project(db, &project).await;
    let reopened_second = open_project(db, &format!("{project}-second")).await;
    let mut after = Vec::new();
    for query in queries {
        after.push(keyword_hits(&reopened, query).await);
        after.push(keyword_hits(&reopened_second, query).await);
    }
    assert_eq!(before, after);
    assert!(before.iter().all(|hits| !hits.is_empty()));
    assert!(before.iter().flatten().all(|(id, _)| id != &gone));
    let rows = "SELECT count(*) FROM memory_keywords";
    assert_eq!(count(db, rows).await, 23);
    let second_id = format!("{project}-second");
    assert_counts_match(db, &[&project, &second_id]).await;
    assert_eq!(live_count(db, &project).await, 11);
    let old = "SELECT count(*) FROM sqlite_master WHERE name LIKE 'memories_fts%'";
    assert_eq!(count(db, old).await, 0);

    // A second process that read the ledger before the first recorded version 9 runs its
    // statements again: nothing changes.
    let version_9 = engram_core::schema::MIGRATIONS
        .iter()
        .find(|m| m.version == 9)
        .expect("version 9");
    let statements: Vec<Statement> = version_9
        .statements
        .iter()
        .map(|s| Statement::new(*s))
        .collect();
    db.transaction(&statements).await.expect("again");
    assert_eq!(count(db, rows).await, 23);
    assert_counts_match(db, &[&project, &second_id]).await;
    assert_eq!(keyword_hits(&reopened, queries[0]).await, before[0]);
}

on_a_file_and_over_http!(
    a_small_project_searches_its_own_rows,
    a_small_project_searches_its_own_rows_on_an_embedded_libsql_file,
    a_small_project_searches_its_own_rows_on_the_test_server_over_http
);
on_a_file_and_over_http!(
    version_8_databases_are_migrated,
    version_8_databases_are_migrated_on_an_embedded_libsql_file,
    version_8_databases_are_migrated_on_the_test_server_over_http
);
