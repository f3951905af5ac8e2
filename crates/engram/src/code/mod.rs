//! Code intelligence on the engram API: indexing a repository's files into the layer-1
//! graph with its closure, marking files stale, and the queries agents ask of it.
//!
//! Only indexing parses source (tree-sitter, the `code` feature). The questions — impact,
//! dependencies, neighbours, status — and marking files stale are SQL over the stored
//! graph, so every build answers them: a Worker without parsers answers `analyze_impact`
//! over a graph the CLI or a CI job indexed into the same database.

mod impact;
#[cfg(feature = "code")]
mod index;
mod sql;

use engram_store::{Database, Rows, Statement, StoreError, Value};

pub use self::impact::{AttachedMemory, ImpactReport, LinkedNode, Neighbour, RelatedFile};
#[cfg(feature = "code")]
pub(crate) use self::index::CodeState;
#[cfg(feature = "code")]
use self::index::{validate, Plan};
#[cfg(feature = "code")]
pub use self::index::{
    FlaggedMemory, IndexOptions, IndexProgress, IndexReport, Rename, SourceFile, MAX_FILE_BYTES,
    MAX_PATH_CHARS,
};
use crate::{Engram, EngramError};

/// The code index of a project, as stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeIndexStatus {
    /// Index calls that wrote something; 0 before the first.
    pub generation: i64,
    /// When the last one finished (Unix milliseconds).
    pub last_indexed_at: i64,
    /// Indexed files.
    pub files: i64,
    /// Graph nodes.
    pub nodes: i64,
    /// Graph edges.
    pub edges: i64,
    /// Closure rows.
    pub closure_rows: i64,
    /// Hops the closure covers.
    pub closure_depth: i64,
}

/// Runs one read statement with the project as `?1`; its rows.
async fn rows_of<D: Database>(db: &D, sql: &str, project: &str) -> Result<Rows, EngramError> {
    let results = db
        .pipeline(&[Statement::with_params(sql, vec![Value::from(project)])])
        .await?;
    Ok(results
        .into_iter()
        .next()
        .transpose()
        .map_err(StoreError::Sql)?
        .unwrap_or_default())
}

/// The stored generation of the project's code index, 0 before the first index.
#[cfg(feature = "code")]
async fn stored_generation<D: Database>(db: &D, project: &str) -> Result<i64, EngramError> {
    let rows = rows_of(db, sql::SELECT_STATE, project).await?;
    match rows.rows.first().and_then(|row| row.first()) {
        Some(v) => Ok(v.as_i64("generation")?),
        None => Ok(0),
    }
}

impl<D: Database> Engram<D> {
    /// Indexes source files into the code graph: new and changed files (by content hash)
    /// are parsed, unchanged ones skipped; the graph is rebuilt in memory from the kept
    /// outlines and only the difference — nodes, edges, closure rows of the ancestors a
    /// changed edge can affect — is written, in one transaction, together with the
    /// memories the change made stale (flagged for review with the reason: a file they
    /// cite was deleted, a symbol they target or name in a file they cite was removed or
    /// changed) and the paths of memories about renamed files. One read round trip before
    /// it finds those memories.
    ///
    /// With [`IndexOptions::complete`], indexed files absent from `files` are deleted; a
    /// deleted file whose content reappears under a new path is reported as a rename.
    /// The host reads files; the core never touches a file system.
    #[cfg(feature = "code")]
    pub async fn index_files(
        &self,
        files: &[SourceFile],
        options: &IndexOptions,
    ) -> Result<IndexReport, EngramError> {
        self.index_files_with_progress(files, options, &mut |_| {})
            .await
    }

    /// [`Engram::index_files`], calling `progress` after each file is looked at (the parse
    /// phase; the write that follows is one transaction).
    #[cfg(feature = "code")]
    pub async fn index_files_with_progress(
        &self,
        files: &[SourceFile],
        options: &IndexOptions,
        progress: &mut dyn FnMut(IndexProgress),
    ) -> Result<IndexReport, EngramError> {
        validate(files, options)?;
        let project = self.config.project_id.as_str();
        let generation = stored_generation(&self.db, project).await?;
        let cached = self.code.borrow_mut().take();
        let old = match cached {
            Some(state) if state.generation == generation => state,
            _ if generation == 0 => CodeState::default(),
            _ => {
                let rows = rows_of(&self.db, sql::SELECT_FILES, project).await?;
                CodeState::from_rows(generation, &rows)?
            }
        };
        let now = self.host.clock.now_millis();
        let mut outliner = self.outliner.borrow_mut().take().unwrap_or_default();
        let mut plan = Plan::new(old, files, options, project, now, progress, &mut outliner);
        *self.outliner.borrow_mut() = Some(outliner);
        let at = engram_core::time::rfc3339_from_millis(now);
        let (stale, marks) = self.staleness_statements(&plan.change, &at).await?;
        let mut statements = std::mem::take(&mut plan.statements);
        statements.extend(stale);
        self.db.transaction(&statements).await?;
        let (state, mut report) = plan.finish();
        report.flagged = marks
            .into_iter()
            .map(|mark| FlaggedMemory {
                id: mark.id,
                reason: mark.reason,
            })
            .collect();
        report.flagged.sort_by(|a, b| a.id.cmp(&b.id));
        *self.code.borrow_mut() = Some(state);
        Ok(report)
    }

    /// The stored state of this project's code index (zeros before the first index).
    pub async fn code_index_status(&self) -> Result<CodeIndexStatus, EngramError> {
        let rows = rows_of(&self.db, sql::SELECT_STATUS, &self.config.project_id).await?;
        let Some(row) = rows.rows.first() else {
            return Ok(CodeIndexStatus::default());
        };
        let int = |i: usize, what: &str| row.get(i).map_or(Ok(0), |v| v.as_i64(what));
        Ok(CodeIndexStatus {
            generation: int(0, "generation")?,
            last_indexed_at: int(1, "last_indexed_at")?,
            files: int(2, "file_count")?,
            nodes: int(3, "node_count")?,
            edges: int(4, "edge_count")?,
            closure_rows: int(5, "closure_count")?,
            closure_depth: int(6, "closure_depth")?,
        })
    }

    /// Marks the graph nodes of `paths`, the edges out of them and the file links from or
    /// to them stale at once — call it when a file changes on disk, before re-indexing it.
    /// Stale edges are left out of neighbourhoods and stale links out of the search boost;
    /// impact results through stale nodes say so. `index_files` (the `code` feature)
    /// clears the mark. Returns how many nodes were marked.
    pub async fn mark_stale(&self, paths: &[String]) -> Result<u64, EngramError> {
        let now = self.host.clock.now_millis();
        let params = || {
            vec![
                Value::from(self.config.project_id.as_str()),
                Value::from(serde_json::to_string(paths).unwrap_or_else(|_| "[]".into())),
                Value::Integer(now),
            ]
        };
        // Edges first: they are found through the nodes' not-yet-stale file paths.
        let results = self
            .db
            .transaction(&[
                Statement::with_params(sql::MARK_STALE_EDGES, params()),
                Statement::with_params(sql::MARK_STALE_NODES, params()),
                Statement::with_params(sql::MARK_STALE_LINKS, params()),
            ])
            .await?;
        Ok(results.get(1).map_or(0, |r| r.affected_row_count))
    }
}
