//! The data a health dashboard charts, read in one round trip: the score and its parts,
//! live memories by type and by source, what was added and retired week by week, and the
//! memories about each folder of the code the project has seen.

use std::collections::BTreeMap;

use engram_lifecycle::health::{assess, Health, HealthInputs};
use engram_store::{Database, Rows, Statement, Value};
use serde::Serialize;

use crate::row::{count_at, text_at};
use crate::{Engram, EngramError};

/// Weeks of growth a report holds.
pub const GROWTH_WEEKS: u32 = 12;

/// A project's health.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthReport {
    /// The score and its parts.
    #[serde(flatten)]
    pub health: Health,
    /// Live memories.
    pub live: u64,
    /// Live memories by type.
    pub by_type: BTreeMap<String, u64>,
    /// Live memories by source.
    pub by_source: BTreeMap<String, u64>,
    /// Memories added and retired per week (`YYYY-Www`), the latest [`GROWTH_WEEKS`] with
    /// any, oldest first.
    pub growth: Vec<WeekGrowth>,
    /// The folders of the code the project has seen, each with its live memories, most
    /// first.
    pub folders: Vec<FolderCoverage>,
}

/// One week's growth.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WeekGrowth {
    /// The week, `YYYY-Www` (weeks from Monday, as SQLite's `%W` counts them).
    pub week: String,
    /// Memories stored that week.
    pub added: u64,
    /// Memories retired that week (forgotten, flagged, superseded or pruned).
    pub retired: u64,
    /// The memories stored that week by type.
    pub by_type: BTreeMap<String, u64>,
    /// The memories stored that week by source.
    pub by_source: BTreeMap<String, u64>,
}

/// One folder's coverage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FolderCoverage {
    /// The folder, ending in `/` (empty for the project root).
    pub folder: String,
    /// Live memories about a file in it.
    pub memories: u64,
}

/// A path's folder, as SQL: everything up to its last `/`.
const FOLDER_OF: &str = "rtrim(PATH, replace(PATH, '/', ''))";

/// A path's folder as [`FOLDER_OF`] computes it: everything up to its last `/`, empty at
/// the root.
pub(crate) fn folder_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(i) => &path[..=i],
        None => "",
    }
}

/// The memories of the project with the week each was stored in, as SQL.
const ADDED: &str = "SELECT strftime('%Y-W%W', created_at) AS week, type, source FROM memories \
WHERE project_id = ?1 AND chunk_type IS NULL";

/// Spreads each week's additions by type and by source (rows of week, `type` or `source`,
/// name, count) over the weeks `growth` holds; other weeks are left out.
fn add_growth_parts(growth: &mut [WeekGrowth], rows: &Rows) -> Result<(), EngramError> {
    for row in &rows.rows {
        let name = text_at(row, 0, "week")?.unwrap_or_default();
        let Some(week) = growth.iter_mut().find(|w| w.week == name) else {
            continue;
        };
        let part = if text_at(row, 1, "part")?.as_deref() == Some("type") {
            &mut week.by_type
        } else {
            &mut week.by_source
        };
        part.insert(
            text_at(row, 2, "name")?.unwrap_or_default(),
            count_at(row, 3, "count")?,
        );
    }
    Ok(())
}

impl<D: Database> Engram<D> {
    /// The project's health and the counts behind it. One round trip.
    pub async fn health(&self) -> Result<HealthReport, EngramError> {
        let project = Value::from(self.project_id());
        let folder = |column: &str| FOLDER_OF.replace("PATH", column);
        let sql = [
            "SELECT count(*), coalesce(sum(needs_review), 0), \
coalesce(sum(stale_reason IS NOT NULL), 0), \
coalesce(sum(relations LIKE '%\"conflicts_with\"%'), 0), \
coalesce(sum(EXISTS (SELECT 1 FROM memory_embeddings e WHERE e.memory_id = m.id)), 0) \
FROM memories m WHERE project_id = ?1 AND deprecated = 0 AND chunk_type IS NULL"
                .to_owned(),
            "SELECT (SELECT count(*) FROM memories WHERE project_id = ?1 AND source = 'observer_inferred'), \
(SELECT coalesce(sum(flagged), 0) FROM observer_signal_flags WHERE project_id = ?1)"
                .to_owned(),
            "SELECT type, count(*) FROM memories WHERE project_id = ?1 AND deprecated = 0 \
AND chunk_type IS NULL GROUP BY type"
                .to_owned(),
            "SELECT source, count(*) FROM memories WHERE project_id = ?1 AND deprecated = 0 \
AND chunk_type IS NULL GROUP BY source"
                .to_owned(),
            format!(
                "SELECT week, sum(added), sum(retired) FROM (\
SELECT strftime('%Y-W%W', created_at) AS week, 1 AS added, 0 AS retired FROM memories \
WHERE project_id = ?1 AND chunk_type IS NULL UNION ALL \
SELECT strftime('%Y-W%W', deprecated_at), 0, 1 FROM memories WHERE project_id = ?1 \
AND chunk_type IS NULL AND deprecated = 1 AND deprecated_at IS NOT NULL) \
GROUP BY week ORDER BY week DESC LIMIT {GROWTH_WEEKS}"
            ),
            format!(
                "SELECT folder, sum(memories) FROM (\
SELECT DISTINCT {} AS folder, 0 AS memories FROM code_files WHERE project_id = ?1 UNION ALL \
SELECT DISTINCT {}, 0 FROM observer_file_nodes WHERE project_id = ?1 UNION ALL \
SELECT {}, count(DISTINCT f.memory_id) FROM memory_files f JOIN memories m ON m.id = f.memory_id \
WHERE f.project_id = ?1 AND m.deprecated = 0 AND m.chunk_type IS NULL GROUP BY 1) \
GROUP BY folder ORDER BY sum(memories) DESC, folder",
                folder("path"),
                folder("file_path"),
                folder("f.path")
            ),
            format!(
                "SELECT week, 'type', type, count(*) FROM ({ADDED}) GROUP BY week, type UNION ALL \
SELECT week, 'source', source, count(*) FROM ({ADDED}) GROUP BY week, source"
            ),
        ];
        let statements: Vec<Statement> = sql
            .into_iter()
            .map(|sql| Statement::with_params(sql, vec![project.clone()]))
            .collect();
        let mut answers = Vec::with_capacity(statements.len());
        for answer in self.db.pipeline(&statements).await? {
            answers.push(answer.map_err(engram_store::StoreError::Sql)?);
        }
        let cell = |rows: &Rows, i: usize| -> Result<u64, EngramError> {
            match rows.rows.first().and_then(|r| r.get(i)) {
                Some(v) => Ok(u64::try_from(v.as_i64("count")?).unwrap_or(0)),
                None => Ok(0),
            }
        };
        let pairs = |rows: &Rows| -> Result<Vec<(String, u64)>, EngramError> {
            rows.rows
                .iter()
                .map(|r| {
                    let name = r
                        .first()
                        .map(|v| v.as_opt_text("name"))
                        .transpose()?
                        .flatten();
                    let n = r
                        .get(1)
                        .map(|v| v.as_i64("count"))
                        .transpose()?
                        .unwrap_or(0);
                    Ok((
                        name.unwrap_or_default().to_owned(),
                        u64::try_from(n).unwrap_or(0),
                    ))
                })
                .collect()
        };
        let counts = &answers[0];
        let live = cell(counts, 0)?;
        let embedded = cell(counts, 4)?;
        let folders = pairs(&answers[5])?;
        let inputs = HealthInputs {
            live,
            needs_review: cell(counts, 1)?,
            stale: cell(counts, 2)?,
            conflicting: cell(counts, 3)?,
            embedded: (self.embedding.is_some() || embedded > 0).then_some(embedded),
            observer: (cell(&answers[1], 0)?, cell(&answers[1], 1)?),
            folders: folders.clone(),
        };
        let mut growth: Vec<WeekGrowth> = answers[4]
            .rows
            .iter()
            .map(|r| -> Result<WeekGrowth, EngramError> {
                let number = |i: usize| -> Result<u64, EngramError> {
                    Ok(r.get(i)
                        .map(|v| v.as_i64("count"))
                        .transpose()?
                        .map_or(0, |n| u64::try_from(n).unwrap_or(0)))
                };
                Ok(WeekGrowth {
                    week: r
                        .first()
                        .map(|v| v.as_opt_text("week"))
                        .transpose()?
                        .flatten()
                        .unwrap_or_default()
                        .to_owned(),
                    added: number(1)?,
                    retired: number(2)?,
                    by_type: BTreeMap::new(),
                    by_source: BTreeMap::new(),
                })
            })
            .collect::<Result<_, _>>()?;
        growth.reverse();
        add_growth_parts(&mut growth, &answers[6])?;
        Ok(HealthReport {
            health: assess(&inputs),
            live,
            by_type: pairs(&answers[2])?.into_iter().collect(),
            by_source: pairs(&answers[3])?.into_iter().collect(),
            growth,
            folders: folders
                .into_iter()
                .map(|(folder, memories)| FolderCoverage { folder, memories })
                .collect(),
        })
    }
}
