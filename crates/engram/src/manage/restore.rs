//! Restore: a retired memory (forgotten, flagged wrong, superseded or pruned) made live
//! again, back in the keyword index and injected as before, its decay clock restarted.

use engram_core::{Memory, ValidationError};
use engram_lifecycle::HistoryAction;
use engram_store::{Database, Statement, Value};

use crate::{sql, Engram, EngramError};

impl<D: Database> Engram<D> {
    /// Makes the retired memory `id` (or a unique prefix of it) live again, in one
    /// transaction with its `restored` history entry; returns it. A live memory is
    /// `invalid_input`, and so is a memory whose words a live memory of its type says now
    /// (restoring it would make a duplicate: that one is named). Another project's id is
    /// `not_found`. A memory it had superseded stays retired.
    pub async fn restore(&self, id: &str) -> Result<Memory, EngramError> {
        let id = self.resolve_id(id).await?;
        let memory = self
            .get_any(&id)
            .await?
            .ok_or_else(|| EngramError::NotFound(format!("memory {id}")))?;
        if !memory.deprecated {
            return Err(
                ValidationError::field("id", "is live: only a retired memory is restored").into(),
            );
        }
        let twin = self
            .single(Statement::with_params(
                LIVE_TWIN,
                vec![Value::from(id.as_str()), Value::from(self.project_id())],
            ))
            .await?;
        if let Some(value) = twin.rows.first().and_then(|row| row.first()) {
            let live = value.as_text("id")?;
            return Err(ValidationError::field(
                "id",
                format!("says what live memory {live} says: forget or edit that one first"),
            )
            .into());
        }
        let now = self.now_text();
        let project = Value::from(self.project_id());
        let id_value = Value::from(id.as_str());
        let statements = vec![
            Statement::with_params(
                RESTORE_MEMORY,
                vec![id_value.clone(), project.clone(), Value::from(now.as_str())],
            ),
            // A fresh keyword rowid: the project's count of added rows moves on by one.
            Statement::with_params(
                "UPDATE projects SET added = added + 1 WHERE project_id = ?1",
                vec![project.clone()],
            ),
            Statement::with_params(
                sql::INSERT_FTS,
                vec![
                    id_value.clone(),
                    Value::from(memory.content.as_str()),
                    Value::from(memory.tags.join(" ")),
                    Value::from(memory.related_files.join(" ")),
                    project.clone(),
                ],
            ),
            Statement::with_params(sql::INSERT_KEYWORD_ROW, vec![id_value, project]),
            self.person_entry(
                &id,
                HistoryAction::Restored,
                (
                    Some(serde_json::json!({
                        "deprecated": true,
                        "supersededBy": memory.superseded_by,
                    })),
                    Some(serde_json::json!({ "deprecated": false, "supersededBy": null })),
                ),
                "restored by a person",
                &now,
            ),
        ];
        self.write(statements, &id).await?;
        self.live(&id).await
    }
}

/// Makes a retired memory live (`?1` id, `?2` project, `?3` now); its decay restarts now.
const RESTORE_MEMORY: &str = "UPDATE memories SET deprecated = 0, deprecated_at = NULL, \
superseded_by = NULL, updated_at = ?3, last_accessed_at = ?3 \
WHERE id = ?1 AND project_id = ?2 AND deprecated = 1";

/// A live memory of the same project and type saying what retired memory `?1` says.
const LIVE_TWIN: &str = "SELECT l.id FROM memories r JOIN memories l \
ON l.project_id = r.project_id AND l.type = r.type AND l.content_key = r.content_key \
WHERE r.id = ?1 AND r.project_id = ?2 AND l.deprecated = 0 AND l.id <> r.id LIMIT 1";
