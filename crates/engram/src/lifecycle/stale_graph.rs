//! Staleness from the code graph: what one index call changed does to the memories that
//! cite its files or symbols — stale ones flagged with the reason, those about renamed
//! files moved with them.

use engram_core::Memory;
use engram_lifecycle::stale::{symbol_names, Cited, CodeChange};
use engram_lifecycle::HistoryAction;
use engram_store::{Database, Statement, Value};

use super::consolidate::{history, HistoryRecord};
use super::sql;
use super::stale::mark_stale_statements;
use crate::row::memory_from_row;
use crate::{Engram, EngramError};

/// A memory a code change flagged, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StaleMark {
    pub id: String,
    pub reason: String,
}

/// The statements that move `memory`'s paths to `files` (and its target node to `target`)
/// after a rename, its file index and keyword row with them, with a history entry.
fn rename_statements(
    project: &str,
    memory: &Memory,
    files: &[String],
    target: Option<&str>,
    now: &str,
) -> Vec<Statement> {
    let id = memory.id.as_str();
    let paths = serde_json::to_string(files).unwrap_or_else(|_| "[]".to_owned());
    vec![
        Statement::with_params(
            sql::RENAME_MEMORY_FILES,
            vec![
                Value::from(id),
                Value::from(project),
                Value::from(paths.as_str()),
                Value::from(target),
                Value::from(now),
            ],
        ),
        Statement::with_params(
            sql::DELETE_MEMORY_FILES,
            vec![Value::from(project), Value::from(id)],
        ),
        Statement::with_params(
            crate::sql::INSERT_MEMORY_FILES,
            vec![
                Value::from(project),
                Value::from(id),
                Value::from(paths.as_str()),
            ],
        ),
        Statement::with_params(sql::MERGE_KEYWORD_ROW, vec![Value::from(id)]),
        history(
            HistoryRecord {
                memory_id: id,
                action: HistoryAction::Renamed,
                before: Some(serde_json::json!({
                    "relatedFiles": memory.related_files, "targetNodeId": memory.target_node_id,
                })),
                after: Some(serde_json::json!({
                    "relatedFiles": files, "targetNodeId": target,
                })),
                reason: "a file it cites was renamed",
                actor: "code",
                related_id: None,
            },
            project,
            now,
        ),
    ]
}

impl<D: Database> Engram<D> {
    /// What `change` does to the live memories that cite its files or symbols: the
    /// statements flagging the stale ones and moving the renamed ones, for the index
    /// call's transaction, and the memories flagged. One read round trip; none when
    /// nothing a memory could cite changed.
    pub(crate) async fn staleness_statements(
        &self,
        change: &CodeChange,
        now: &str,
    ) -> Result<(Vec<Statement>, Vec<StaleMark>), EngramError> {
        if change.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let files: Vec<&str> = change.affected_files().into_iter().collect();
        let rows = self
            .single(Statement::with_params(
                sql::memories_citing(),
                vec![
                    Value::from(self.project_id()),
                    Value::from(serde_json::to_string(&files).unwrap_or_else(|_| "[]".into())),
                ],
            ))
            .await?;
        let project = self.project_id();
        let mut statements = Vec::new();
        let mut marks = Vec::new();
        for row in &rows.rows {
            let memory = memory_from_row(row)?;
            let names = symbol_names(&memory.content);
            let verdict = change.judge(Cited {
                files: &memory.related_files,
                target_node: memory.target_node_id.as_deref(),
                names: &names,
            });
            if verdict.renamed_files.is_some() || verdict.renamed_target.is_some() {
                let files = verdict
                    .renamed_files
                    .clone()
                    .unwrap_or_else(|| memory.related_files.clone());
                let target = verdict
                    .renamed_target
                    .as_deref()
                    .or(memory.target_node_id.as_deref());
                statements.extend(rename_statements(project, &memory, &files, target, now));
            }
            if let Some(reason) = verdict.stale {
                if memory.stale_reason.is_none() {
                    statements.extend(mark_stale_statements(project, &memory.id, &reason, now));
                    marks.push(StaleMark {
                        id: memory.id,
                        reason,
                    });
                }
            }
        }
        Ok((statements, marks))
    }
}
