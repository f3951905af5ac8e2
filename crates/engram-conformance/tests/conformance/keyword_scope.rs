//! Keyword rowid ranges (schema v9): a project's keyword search reads only its own rows,
//! with the scores a search of the whole table gives; the per-project counts follow every
//! change; and a version 8 database is migrated with every keyword row kept. On an embedded
//! libSQL file and on the test server over HTTP.

use crate::common::{nonce, open_project};
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
            "SELECT memory_id, -bm25(memories_fts, 0.0, 1.0, 3.0, 2.0) \
             FROM memories_fts WHERE memories_fts MATCH ?1",
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

/// Moves memory `id`'s keyword row to a rowid far into `project`'s range.
async fn move_keyword_row<D: Database>(db: D, id: &str, project: &str) {
    db.transaction(&[Statement::with_params(
        "UPDATE memories_fts SET rowid = \
         (SELECT key * 1099511627776 + 1000000 FROM projects WHERE project_id = ?1) \
         WHERE memory_id = ?2",
        vec![Value::from(project), Value::from(id)],
    )])
    .await
    .expect("move");
}

async fn a_project_searches_its_own_rowid_range<D: Database + Copy>(db: D) {
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

    // The small project's matches, scored as over the whole table.
    let own = keyword_hits(&small, query).await;
    assert_eq!(own.len(), 3, "{own:?}");
    assert_eq!(own[0].0, small_ids[0]);
    let reference = unrestricted_scores(db, query).await;
    for (id, score) in &own {
        let (_, expected) = reference.iter().find(|(r, _)| r == id).expect("matched");
        assert_eq!(score, expected);
    }

    // A keyword row in another project's range is not read, though its memory is this
    // project's; back in range, it is.
    move_keyword_row(db, &small_ids[0], &big_id).await;
    let missing = keyword_hits(&small, query).await;
    assert_eq!(missing.len(), 2, "{missing:?}");
    assert!(missing.iter().all(|(id, _)| id != &small_ids[0]));
    let big_hits = keyword_hits(&big, query).await;
    assert_eq!(big_hits.len(), 10);
    assert!(big_hits.iter().all(|(id, _)| !small_ids.contains(id)));
    move_keyword_row(db, &small_ids[0], &small_id).await;
    assert_eq!(keyword_hits(&small, query).await, own);

    // The counts follow every change to a memory, whoever makes it; rows written later
    // take fresh rowids.
    assert!(small.forget(&small_ids[3]).await.expect("forget"));
    let more: Vec<String> = (0..3)
        .map(|i| format!("note {i} about the database timeout"))
        .collect();
    let more_ids = remember_all(&small, &more).await;
    assert!(small.forget(&more_ids[0]).await.expect("forget"));
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
    assert_eq!(live_count(db, &small_id).await, 4);
    let fresh = remember_all(&small, &["a fresh database timeout note".to_owned()]).await;
    let hits = keyword_hits(&small, "fresh database timeout").await;
    assert_eq!(hits[0].0, fresh[0]);
}

/// The one integer `sql` selects with `params`.
async fn integer<D: Database>(db: D, sql: &str, params: Vec<Value>) -> i64 {
    let rows = db
        .transaction(&[Statement::with_params(sql, params)])
        .await
        .expect(sql);
    rows[0].rows[0][0].as_i64(sql).expect(sql)
}

/// The live memories `projects` counts for `project`.
async fn live_count<D: Database>(db: D, project: &str) -> i64 {
    let live = "SELECT coalesce((SELECT live FROM projects WHERE project_id = ?1), 0)";
    integer(db, live, vec![Value::from(project)]).await
}

/// `projects` agrees with the memories for each of `projects`.
async fn assert_counts_match<D: Database + Copy>(db: D, projects: &[&str]) {
    let live = "SELECT count(*) FROM memories WHERE project_id = ?1 AND deprecated = 0";
    for project in projects {
        let counted = integer(db, live, vec![Value::from(*project)]).await;
        assert_eq!(live_count(db, project).await, counted, "{project}");
    }
}

/// Rolls the database back to its version 8 form: no `projects`, and keyword rows renumbered
/// from 1 in rowid order, as version 8 wrote them; the ledger without versions 9 and later.
async fn roll_back_to_version_8<D: Database>(db: D) {
    db.transaction(&[
        Statement::new("DROP TRIGGER projects_insert"),
        Statement::new("DROP TRIGGER projects_update"),
        Statement::new("DROP TRIGGER projects_delete"),
        Statement::new("DROP TABLE projects"),
        Statement::new(
            "CREATE TEMP TABLE v8_rows AS SELECT memory_id, content, tags, related_files \
             FROM memories_fts ORDER BY rowid",
        ),
        Statement::new("DELETE FROM memories_fts"),
        Statement::new(
            "INSERT INTO memories_fts (memory_id, content, tags, related_files) \
             SELECT memory_id, content, tags, related_files FROM v8_rows ORDER BY rowid",
        ),
        Statement::new("DROP TABLE v8_rows"),
        Statement::new("DELETE FROM schema_migrations WHERE version >= 9"),
    ])
    .await
    .expect("roll back");
}

async fn count<D: Database>(db: D, sql: &str) -> i64 {
    integer(db, sql, Vec::new()).await
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
    // Version 9 keys the projects 1 and 2 in the order of their first memory, and version 10
    // renumbers the first 0: its 11 live rows lie below 2⁴⁰, the second's 12 in key 2's range.
    let second_id = format!("{project}-second");
    assert_eq!(project_key(db, &project).await, 0);
    assert_eq!(project_key(db, &second_id).await, 2);
    let first_rows = "SELECT count(*) FROM memories_fts WHERE rowid < 1099511627776";
    let second_rows = "SELECT count(*) FROM memories_fts \
        WHERE rowid >= 2199023255552 AND rowid < 3298534883328";
    assert_eq!(count(db, first_rows).await, 11);
    assert_eq!(count(db, second_rows).await, 12);
    assert_counts_match(db, &[&project, &second_id]).await;
    assert_eq!(live_count(db, &project).await, 11);

    // A second process that read the ledger before the first recorded versions 9 and 10
    // runs their statements again: nothing changes. (Adding a column cannot be repeated;
    // the runner skips a column that is there, which reopening above went through.)
    let statements: Vec<Statement> = engram_core::schema::MIGRATIONS
        .iter()
        .filter(|m| m.version >= 9)
        .flat_map(|m| m.statements.iter())
        .filter(|s| !s.starts_with("ALTER TABLE"))
        .map(|s| Statement::new(*s))
        .collect();
    db.transaction(&statements).await.expect("again");
    assert_eq!(project_key(db, &project).await, 0);
    assert_eq!(count(db, first_rows).await, 11);
    assert_eq!(count(db, second_rows).await, 12);
    assert_counts_match(db, &[&project, &second_id]).await;
    for (i, query) in queries.iter().enumerate() {
        assert_eq!(keyword_hits(&reopened, query).await, before[2 * i]);
        assert_eq!(
            keyword_hits(&reopened_second, query).await,
            before[2 * i + 1]
        );
    }
    // Memories written after the migration take rowids past every migrated one.
    for engram in [&reopened, &reopened_second] {
        let text = "entry 99: a zanzibar quirk".to_owned();
        let id = remember_all(engram, &[text]).await.remove(0);
        assert_eq!(keyword_hits(engram, "zanzibar").await[0].0, id);
    }
    assert_eq!(count(db, first_rows).await, 12);
    assert_eq!(count(db, second_rows).await, 13);
    // Forgetting a migrated memory and a new one deletes exactly their keyword rows, found
    // by the rowids version 11 recorded and `remember` records.
    let migrated = keyword_hits(&reopened, "upload retries").await[0].0.clone();
    let new = keyword_hits(&reopened, "zanzibar").await[0].0.clone();
    for id in [&migrated, &new] {
        assert!(reopened.forget(id).await.expect("forget"));
    }
    assert_eq!(count(db, first_rows).await, 10);
    assert_eq!(count(db, second_rows).await, 13);
    assert!(keyword_hits(&reopened, "zanzibar").await.is_empty());
    let hits = keyword_hits(&reopened, "upload retries").await;
    assert!(!hits.is_empty() && hits.iter().all(|(id, _)| id != &migrated));
    let mapped = "SELECT count(*) FROM memory_keyword_rows WHERE memory_id IN (?1, ?2)";
    let pair = vec![Value::from(migrated.as_str()), Value::from(new.as_str())];
    assert_eq!(integer(db, mapped, pair).await, 0);
}

/// The key `projects` gives `project`.
async fn project_key<D: Database>(db: D, project: &str) -> i64 {
    let key = "SELECT key FROM projects WHERE project_id = ?1";
    integer(db, key, vec![Value::from(project)]).await
}

/// Every keyword row's rowid, in order, comma-separated.
async fn keyword_rowids<D: Database>(db: D) -> String {
    let rows = "SELECT group_concat(rowid) FROM (SELECT rowid FROM memories_fts ORDER BY rowid)";
    let listed = db.transaction(&[Statement::new(rows)]).await.expect(rows);
    listed[0].rows[0][0]
        .as_text("rowids")
        .expect("rowids")
        .to_owned()
}

/// A new database keys its first project 0 and the next 1, each project's keyword rows
/// counting up from its range's start; a version 9 database keyed from 1 is renumbered
/// with the same results.
async fn the_first_project_keys_rowids_from_zero<D: Database + Copy>(db: D) {
    let project = format!("ks-zero-{}", nonce());
    let next = format!("{project}-next");
    let first = open_project(db, &project).await;
    let second = open_project(db, &next).await;
    let texts: Vec<String> = (0..6)
        .map(|n| format!("note {n}: the cache warms in {} passes", n % 3))
        .collect();
    remember_all(&first, &texts).await;
    remember_all(&second, &texts).await;
    assert_eq!(project_key(db, &project).await, 0);
    assert_eq!(project_key(db, &next).await, 1);
    // Rows 1 to 6 of project 0's range, then of the next project's.
    let expected = |next_key: i64| -> String {
        let rows = (1..=6).map(|n| n.to_string());
        let next_rows = (1..=6).map(|n| (next_key * 1099511627776 + n).to_string());
        rows.chain(next_rows).collect::<Vec<_>>().join(",")
    };
    assert_eq!(keyword_rowids(db).await, expected(1));
    let before = (
        keyword_hits(&first, "cache passes").await,
        keyword_hits(&second, "cache passes").await,
    );
    assert_eq!(before.0.len(), 6);
    assert_eq!(before.1.len(), 6);

    // Back to version 9's numbering, where the first project was key 1 (the second
    // project's rows move first, out of the way): reopening renumbers it.
    db.transaction(&[
        Statement::new(
            "UPDATE memories_fts SET rowid = rowid + 1099511627776 \
             WHERE rowid >= 1099511627776 AND rowid < 2199023255552",
        ),
        Statement::new(
            "UPDATE memories_fts SET rowid = rowid + 1099511627776 WHERE rowid < 1099511627776",
        ),
        // Through negative keys: `key + 1` in place would meet the next key.
        Statement::new("UPDATE projects SET key = -key - 1"),
        Statement::new("UPDATE projects SET key = -key"),
        Statement::new("DELETE FROM schema_migrations WHERE version = 10"),
    ])
    .await
    .expect("back to version 9");
    assert_eq!(project_key(db, &project).await, 1);
    let reopened = open_project(db, &project).await;
    let reopened_next = open_project(db, &next).await;
    assert_eq!(project_key(db, &project).await, 0);
    assert_eq!(project_key(db, &next).await, 2);
    assert_eq!(keyword_rowids(db).await, expected(2));
    assert_eq!(keyword_hits(&reopened, "cache passes").await, before.0);
    assert_eq!(keyword_hits(&reopened_next, "cache passes").await, before.1);
    let id = remember_all(&reopened, &["note 7: a quokka".to_owned()])
        .await
        .remove(0);
    assert_eq!(keyword_hits(&reopened, "quokka").await[0].0, id);
}

on_a_file_and_over_http!(
    a_project_searches_its_own_rowid_range,
    a_project_searches_its_own_rowid_range_on_an_embedded_libsql_file,
    a_project_searches_its_own_rowid_range_on_the_test_server_over_http
);
on_a_file_and_over_http!(
    the_first_project_keys_rowids_from_zero,
    the_first_project_keys_rowids_from_zero_on_an_embedded_libsql_file,
    the_first_project_keys_rowids_from_zero_on_the_test_server_over_http
);
on_a_file_and_over_http!(
    version_8_databases_are_migrated,
    version_8_databases_are_migrated_on_an_embedded_libsql_file,
    version_8_databases_are_migrated_on_the_test_server_over_http
);
