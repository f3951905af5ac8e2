//! The module map: the files a project's memory knows, as a graph a person can read. Nodes
//! are files with their live memories and how often agents opened them; edges are the
//! observer's co-access pairs (files read or edited together, with their weight) and the
//! code graph's live file dependencies.

use engram_store::{Database, Statement, Value};
use serde::{Deserialize, Serialize};

use super::health::folder_of;
use crate::row::{count_at, text_at};
use crate::{Engram, EngramError};

/// Files a map holds unless asked otherwise.
pub const DEFAULT_MAP_FILES: u32 = 80;
/// The most files one map holds: beyond it a drawn graph stops being readable.
pub const MAX_MAP_FILES: u32 = 400;

/// Which part of the map to draw.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MapRequest {
    /// Most files (1 to [`MAX_MAP_FILES`], default [`DEFAULT_MAP_FILES`]): those with the
    /// most memories, then the most opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Only files under this folder (a path prefix such as `src/api/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
}

impl MapRequest {
    /// Parses a map request from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<MapRequest, engram_core::ValidationError> {
        engram_core::validate::from_json(json)
    }
}

/// The map.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModuleMap {
    /// Files, most memories first.
    pub files: Vec<MapFile>,
    /// Co-access pairs between two of `files`, heaviest first.
    pub co_access: Vec<CoAccessEdge>,
    /// Live code dependencies between two of `files`.
    pub dependencies: Vec<DependencyEdge>,
}

/// One file of the map.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MapFile {
    /// Its path from the project root.
    pub path: String,
    /// Its folder, ending in `/` (empty at the root): the module it belongs to.
    pub folder: String,
    /// Live memories about it.
    pub memories: u64,
    /// Times agents opened it, as the observer counted.
    pub accesses: u64,
    /// Sessions that opened it.
    pub sessions: u64,
}

/// Two files agents read or edit together.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CoAccessEdge {
    /// One file.
    pub a: String,
    /// The other.
    pub b: String,
    /// The observer's weight for the pair, in `[0, 1]`.
    pub weight: f64,
    /// Sessions that opened both.
    pub sessions: u64,
}

/// A file whose code uses another's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DependencyEdge {
    /// The file that depends.
    pub from: String,
    /// The file it depends on.
    pub to: String,
}

/// Every file the project's memory knows, with its memories, opens and sessions; files
/// only the code graph knows come last.
const MAP_FILES: &str = "SELECT path, sum(memories), sum(accesses), sum(sessions) FROM (\
SELECT f.path AS path, count(DISTINCT f.memory_id) AS memories, 0 AS accesses, 0 AS sessions \
FROM memory_files f JOIN memories m ON m.id = f.memory_id WHERE f.project_id = ?1 \
AND m.deprecated = 0 AND m.chunk_type IS NULL GROUP BY f.path UNION ALL \
SELECT file_path, 0, access_count, session_count FROM observer_file_nodes WHERE project_id = ?1 \
UNION ALL SELECT path, 0, 0, 0 FROM code_files WHERE project_id = ?1) \
WHERE substr(path, 1, length(?3)) = ?3 \
GROUP BY path ORDER BY sum(memories) DESC, sum(accesses) DESC, path LIMIT ?2";

/// The edges between the files of `?2` (a JSON array).
const MAP_EDGES: &str = "SELECT 'co_access', file_a, file_b, weight, session_count \
FROM observer_co_access_edges WHERE project_id = ?1 \
AND file_a IN (SELECT value FROM json_each(?2)) AND file_b IN (SELECT value FROM json_each(?2)) \
UNION ALL SELECT 'depends', file_a, file_b, 1.0, 0 FROM graph_file_links WHERE project_id = ?1 \
AND stale_at IS NULL \
AND file_a IN (SELECT value FROM json_each(?2)) AND file_b IN (SELECT value FROM json_each(?2))";

impl<D: Database> Engram<D> {
    /// The module map (`request`'s files and the edges between them). Two round trips.
    pub async fn module_map(&self, request: &MapRequest) -> Result<ModuleMap, EngramError> {
        let limit = request.limit.unwrap_or(DEFAULT_MAP_FILES);
        if limit == 0 || limit > MAX_MAP_FILES {
            return Err(EngramError::invalid(
                "limit",
                format!("must be 1 to {MAX_MAP_FILES}"),
            ));
        }
        let project = Value::from(self.project_id());
        let folder = request.folder.as_deref().unwrap_or("");
        let rows = self
            .single(Statement::with_params(
                MAP_FILES,
                vec![
                    project.clone(),
                    Value::from(i64::from(limit)),
                    Value::from(folder),
                ],
            ))
            .await?;
        let files = rows
            .rows
            .iter()
            .map(|row| map_file(row))
            .collect::<Result<Vec<_>, _>>()?;
        let mut map = ModuleMap {
            files,
            ..ModuleMap::default()
        };
        if map.files.len() < 2 {
            return Ok(map);
        }
        let paths: Vec<&str> = map.files.iter().map(|f| f.path.as_str()).collect();
        let paths = serde_json::Value::from(paths).to_string();
        let edges = self
            .single(Statement::with_params(
                MAP_EDGES,
                vec![project, Value::from(paths)],
            ))
            .await?;
        for row in &edges.rows {
            add_edge(&mut map, row)?;
        }
        map.co_access
            .sort_by(|x, y| y.weight.total_cmp(&x.weight).then(x.a.cmp(&y.a)));
        Ok(map)
    }
}

fn map_file(row: &[Value]) -> Result<MapFile, EngramError> {
    let path = text_at(row, 0, "path")?.unwrap_or_default();
    Ok(MapFile {
        folder: folder_of(&path).to_owned(),
        memories: count_at(row, 1, "memories")?,
        accesses: count_at(row, 2, "accesses")?,
        sessions: count_at(row, 3, "sessions")?,
        path,
    })
}

fn add_edge(map: &mut ModuleMap, row: &[Value]) -> Result<(), EngramError> {
    let a = text_at(row, 1, "file_a")?.unwrap_or_default();
    let b = text_at(row, 2, "file_b")?.unwrap_or_default();
    if text_at(row, 0, "kind")?.as_deref() == Some("depends") {
        map.dependencies.push(DependencyEdge { from: a, to: b });
    } else {
        let weight = match row.get(3) {
            Some(value) => value.as_f64("weight")?,
            None => 0.0,
        };
        map.co_access.push(CoAccessEdge {
            a,
            b,
            weight,
            sessions: count_at(row, 4, "session_count")?,
        });
    }
    Ok(())
}
