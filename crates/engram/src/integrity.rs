//! Is the database whole? The engine's page check, the keyword index's own check and the
//! agreement of the tables that must agree; and the repair that rebuilds the keyword index
//! from the memories, which are the source of truth for everything derived from them.

use engram_core::schema::{CREATE_KEYWORD_TABLE, CREATE_KEYWORD_VOCABULARY};
use engram_store::{Database, Statement, StoreError, Value};
use serde::Serialize;

use crate::{Engram, EngramError};

/// What [`Engram::check_integrity`] found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IntegrityReport {
    /// Memories stored (forgotten ones included: forgetting keeps the row).
    pub memories: u64,
    /// Memories not forgotten.
    pub live_memories: u64,
    /// Rows of the keyword index (one per live memory when whole).
    pub keyword_rows: u64,
    /// What is wrong, in words; empty when the database is whole.
    pub problems: Vec<String>,
    /// Whether the problems are in the keyword index only, which `repair` rebuilds from
    /// the memories; otherwise the database itself is damaged (restore a backup).
    pub keyword_index_only: bool,
}

impl IntegrityReport {
    /// Whether nothing is wrong.
    pub fn is_whole(&self) -> bool {
        self.problems.is_empty()
    }
}

/// What [`Engram::rebuild_keyword_index`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeywordRebuild {
    /// Live memories indexed again.
    pub indexed: u64,
}

const QUICK_CHECK: &str = "PRAGMA quick_check";
/// FTS5's own check of its index against its content (`rank` 1: compare both ways).
const KEYWORD_CHECK: &str =
    "INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)";
const COUNTS: &str = "SELECT (SELECT count(*) FROM memories), \
(SELECT count(*) FROM memories WHERE deprecated = 0), \
(SELECT count(*) FROM memory_keyword_rows)";
/// Apart from the others: a damaged keyword index fails it, not them.
const KEYWORD_COUNT: &str = "SELECT count(*) FROM memories_fts";

/// The keyword index from the memories: each project's live memories numbered from 1 in
/// its rowid range (below `projects.added`, so later writes never collide).
const REBUILD: &[&str] = &[
    "DROP TABLE IF EXISTS memories_fts_vocab",
    "DROP TABLE IF EXISTS memories_fts",
    CREATE_KEYWORD_TABLE,
    CREATE_KEYWORD_VOCABULARY,
    "DELETE FROM memory_keyword_rows",
    "INSERT INTO memory_keyword_rows (memory_id, keyword_rowid) \
SELECT m.id, p.key * 1099511627776 + row_number() OVER (PARTITION BY m.project_id ORDER BY m.rowid) \
FROM memories m JOIN projects p ON p.project_id = m.project_id WHERE m.deprecated = 0",
    "INSERT INTO memories_fts (rowid, memory_id, content, tags, related_files) \
SELECT k.keyword_rowid, m.id, m.content, \
(SELECT coalesce(group_concat(value, ' '), '') FROM json_each(m.tags)), \
(SELECT coalesce(group_concat(value, ' '), '') FROM json_each(m.related_files)) \
FROM memories m JOIN memory_keyword_rows k ON k.memory_id = m.id",
    "REINDEX",
];

impl<D: Database> Engram<D> {
    /// Checks the whole database (every project): the engine's page check, the keyword
    /// index's own check, and that the keyword index holds one row per live memory. Reads
    /// only; costs a pass over the file, so hosts run it on request (`engram doctor`), not
    /// on every open.
    pub async fn check_integrity(&self) -> Result<IntegrityReport, EngramError> {
        let results = self
            .db
            .pipeline(&[
                Statement::new(QUICK_CHECK),
                Statement::new(KEYWORD_CHECK),
                Statement::new(COUNTS),
                Statement::new(KEYWORD_COUNT),
            ])
            .await?;
        let mut report = IntegrityReport::default();
        let mut results = results.into_iter();
        // Problems outside the keyword index: those a rebuild cannot fix.
        let mut elsewhere = 0;
        match results.next() {
            Some(Ok(rows)) => {
                for row in &rows.rows {
                    if let Some(Value::Text(line)) = row.first() {
                        if line != "ok" {
                            if !line.contains("memories_fts") {
                                elsewhere += 1;
                            }
                            report.problems.push(format!("page check: {line}"));
                        }
                    }
                }
            }
            Some(Err(e)) => {
                elsewhere += 1;
                report.problems.push(format!("page check failed: {e}"));
            }
            None => return Err(StoreError::Protocol("no answer to the page check".into()).into()),
        }
        if let Some(Err(e)) = results.next() {
            report
                .problems
                .push(format!("keyword index: {}", e.message));
        }
        let counts = results.next();
        let keyword_rows = match results.next() {
            Some(Ok(rows)) => first_count(&rows.rows),
            Some(Err(e)) => {
                report
                    .problems
                    .push(format!("counting keyword rows failed: {}", e.message));
                None
            }
            None => None,
        };
        match counts {
            Some(Ok(rows)) => count_problems(&rows.rows, keyword_rows, &mut report),
            Some(Err(e)) => {
                elsewhere += 1;
                report
                    .problems
                    .push(format!("counting memories failed: {e}"));
            }
            None => {}
        }
        report.keyword_index_only = elsewhere == 0 && !report.problems.is_empty();
        Ok(report)
    }

    /// Rebuilds the keyword index (and its vocabulary and row map) from the memories, in
    /// one transaction: the repair for a damaged or disagreeing keyword index. Memories,
    /// vectors and the code graph are not touched.
    pub async fn rebuild_keyword_index(&self) -> Result<KeywordRebuild, EngramError> {
        let mut statements: Vec<Statement> = REBUILD.iter().map(|s| Statement::new(*s)).collect();
        statements.push(Statement::new("SELECT count(*) FROM memories_fts"));
        let results = self.db.transaction(&statements).await?;
        let indexed = results
            .last()
            .and_then(|rows| rows.rows.first())
            .and_then(|row| row.first())
            .map(|v| v.as_i64("indexed rows"))
            .transpose()?
            .unwrap_or(0);
        if let Some(resident) = &self.resident_keywords {
            resident.replace(crate::retrieve::ResidentKeywords::default());
        }
        Ok(KeywordRebuild {
            indexed: u64::try_from(indexed).unwrap_or(0),
        })
    }
}

/// The one count a row holds.
fn first_count(rows: &[Vec<Value>]) -> Option<u64> {
    let value = rows.first()?.first()?.as_i64("count").ok()?;
    u64::try_from(value).ok()
}

/// The counts row (memories, live memories, the keyword row map) against the keyword
/// index's own rows, when they could be counted.
fn count_problems(rows: &[Vec<Value>], keyword_rows: Option<u64>, report: &mut IntegrityReport) {
    let Some(row) = rows.first() else {
        report
            .problems
            .push("counting rows returned nothing".into());
        return;
    };
    let count = |i: usize| {
        row.get(i)
            .and_then(|v| v.as_i64("count").ok())
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(0)
    };
    report.memories = count(0);
    report.live_memories = count(1);
    let mapped = count(2);
    let Some(keyword_rows) = keyword_rows else {
        return;
    };
    report.keyword_rows = keyword_rows;
    if keyword_rows != report.live_memories || mapped != report.live_memories {
        report.problems.push(format!(
            "the keyword index has {keyword_rows} rows ({mapped} mapped) for {} live memories",
            report.live_memories
        ));
    }
}
