//! A person's changes to memories: edit (re-validated, re-redacted, re-embedded and
//! re-indexed in one transaction), confirm, correct, flag as wrong, pin, teach, purge and
//! reset. Each change appends its history entry in the same transaction.

use engram_core::{
    context, Memory, MemoryScope, MemorySource, MemoryType, NewMemory, ValidationError, Visibility,
};
use engram_lifecycle::HistoryAction;
use engram_store::{Database, Statement, Value};
use serde::{Deserialize, Serialize};

use crate::lifecycle::consolidate::{history, HistoryRecord};
use crate::{Engram, EngramError, Remembered};

/// Who the history says made a person's changes.
const PERSON: &str = "user";

/// The confidence of a memory a person taught.
const TAUGHT_CONFIDENCE: f64 = 0.95;

/// The fields of a memory a person changes; absent fields stay as they are.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryUpdate {
    /// New text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// New type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub memory_type: Option<MemoryType>,
    /// New tags (replacing the old ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// New related files (replacing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related_files: Option<Vec<String>>,
    /// New related modules (replacing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related_modules: Option<Vec<String>>,
    /// New scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<MemoryScope>,
    /// New visibility.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    /// New confidence in `[0, 1]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// New citation text (at most 40 characters; empty clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citation_text: Option<String>,
}

impl MemoryUpdate {
    /// Parses an update from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<MemoryUpdate, ValidationError> {
        engram_core::validate::from_json_checked(json, |u: &MemoryUpdate| {
            if *u == MemoryUpdate::default() {
                return Err(ValidationError::field("update", "changes nothing"));
            }
            Ok(())
        })
    }

    /// `memory` with this update applied, as the memory it would store.
    fn applied_to(&self, memory: &Memory) -> NewMemory {
        let mut new = as_new(memory);
        if let Some(content) = &self.content {
            new.content = content.clone();
        }
        if let Some(memory_type) = self.memory_type {
            new.memory_type = memory_type;
            if memory_type != memory.memory_type {
                new.decay_half_life_days = None;
            }
        }
        let lists = [
            (&self.tags, &mut new.tags),
            (&self.related_files, &mut new.related_files),
            (&self.related_modules, &mut new.related_modules),
        ];
        for (update, field) in lists {
            if let Some(list) = update {
                *field = list.clone();
            }
        }
        new.scope = self.scope.unwrap_or(new.scope);
        new.visibility = self.visibility.unwrap_or(new.visibility);
        new.confidence = self.confidence.unwrap_or(new.confidence);
        if let Some(citation) = &self.citation_text {
            new.citation_text = (!citation.is_empty()).then(|| citation.clone());
        }
        new
    }
}

/// The stored memory as the memory one would write to store it again.
fn as_new(m: &Memory) -> NewMemory {
    let mut new = NewMemory::new(m.memory_type, m.content.clone());
    new.confidence = m.confidence;
    new.tags = m.tags.clone();
    new.related_files = m.related_files.clone();
    new.related_modules = m.related_modules.clone();
    new.scope = m.scope;
    new.visibility = m.visibility;
    new.phase = m.phase;
    new.source = m.source;
    new.session_id = m.session_id.clone();
    new.commit_sha = m.commit_sha.clone();
    new.provenance_session_ids = m.provenance_session_ids.clone();
    new.work_unit_ref = m.work_unit_ref.clone();
    new.methodology = m.methodology.clone();
    new.relations = m.relations.clone();
    new.decay_half_life_days = m.decay_half_life_days;
    new.flags = m.flags;
    new.citation_text = m.citation_text.clone();
    new.chunk = m.chunk.clone();
    new.target_node_id = m.target_node_id.clone();
    new
}

/// What a person taught.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Taught {
    /// The text.
    pub content: String,
    /// Its type (default: preference).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub memory_type: Option<MemoryType>,
    /// Files it is about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related_files: Vec<String>,
    /// Tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

impl Taught {
    /// The memory a person's teaching stores: source `user_taught`, confirmed, a
    /// preference unless they say otherwise.
    pub(crate) fn into_new_memory(self) -> NewMemory {
        let mut memory = NewMemory::new(
            self.memory_type.unwrap_or(MemoryType::Preference),
            self.content,
        );
        memory.source = MemorySource::UserTaught;
        memory.confidence = TAUGHT_CONFIDENCE;
        memory.related_files = self.related_files;
        memory.tags = self.tags;
        memory.flags.user_verified = true;
        memory
    }

    /// Parses a person's memory from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<Taught, ValidationError> {
        engram_core::validate::from_json(json)
    }
}

impl<D: Database> Engram<D> {
    /// Changes a live memory's fields (`id` or a unique prefix): the result is validated
    /// and redacted as a new memory is, re-embedded when its text changed, and its keyword
    /// row, file and module links follow, with an `edited` history entry naming each
    /// changed field, in one transaction. An edit that would say exactly what another live
    /// memory of its type says is refused (`invalid_input` naming it).
    pub async fn update(&self, id: &str, update: &MemoryUpdate) -> Result<Memory, EngramError> {
        self.change(id, update, false).await
    }

    /// [`Engram::update`] that also marks the memory confirmed by a person (user-verified,
    /// review cleared): a correction.
    pub async fn correct(&self, id: &str, update: &MemoryUpdate) -> Result<Memory, EngramError> {
        self.change(id, update, true).await
    }

    async fn change(
        &self,
        id: &str,
        update: &MemoryUpdate,
        verify: bool,
    ) -> Result<Memory, EngramError> {
        let old = self.live(id).await?;
        let mut new = update.applied_to(&old);
        new.validate()?;
        let (_, skipped) = self.redact(&mut new);
        new.validate()?;
        new.flags.secret_scan_skipped |= skipped;
        let key = crate::engram::content_key(&new);
        self.refuse_duplicate(&old.id, &new, key.as_deref()).await?;
        let now = self.now_text();
        let mut statements = vec![Statement::with_params(
            UPDATE_MEMORY,
            vec![
                Value::from(old.id.as_str()),
                Value::from(self.project_id()),
                Value::from(new.memory_type.as_str()),
                Value::from(new.content.as_str()),
                json(&new.tags),
                json(&new.related_files),
                json(&new.related_modules),
                Value::from(new.scope.as_str()),
                Value::from(new.visibility.as_str()),
                Value::from(new.confidence),
                Value::from(new.citation_text.clone()),
                Value::from(key),
                Value::from(now.as_str()),
                Value::from(verify),
                Value::from(new.flags.secret_scan_skipped),
                Value::from(new.effective_half_life_days()),
            ],
        )];
        statements.extend(self.relink_statements(&old.id, &new));
        statements.extend(self.reembed_statements(&old, &new, &now).await);
        let (before, after) = changed_fields(&old, &new, verify);
        statements.push(self.person_entry(
            &old.id,
            HistoryAction::Edited,
            (Some(before), Some(after)),
            if verify {
                "corrected by a person"
            } else {
                "edited by a person"
            },
            &now,
        ));
        self.write(statements, &old.id).await?;
        self.live(&old.id).await
    }

    /// Refuses an edit whose text another live memory of its type already has.
    async fn refuse_duplicate(
        &self,
        id: &str,
        new: &NewMemory,
        key: Option<&str>,
    ) -> Result<(), EngramError> {
        let Some(key) = key else { return Ok(()) };
        let rows = self
            .single(Statement::with_params(
                "SELECT id FROM memories WHERE project_id = ?1 AND type = ?2 AND content_key = ?3 \
AND deprecated = 0 AND id != ?4 LIMIT 1",
                vec![
                    Value::from(self.project_id()),
                    Value::from(new.memory_type.as_str()),
                    Value::from(key),
                    Value::from(id),
                ],
            ))
            .await?;
        match rows.rows.first().and_then(|r| r.first()) {
            Some(other) => Err(EngramError::invalid(
                "content",
                format!(
                    "says what memory {} already says; forget one of them instead",
                    other.as_text("id").unwrap_or("?")
                ),
            )),
            None => Ok(()),
        }
    }

    /// The keyword row and the file and module links, brought up to the edited memory.
    fn relink_statements(&self, id: &str, new: &NewMemory) -> Vec<Statement> {
        let project = Value::from(self.project_id());
        let id = Value::from(id);
        vec![
            Statement::with_params(crate::lifecycle::MERGE_KEYWORD_ROW, vec![id.clone()]),
            Statement::with_params(
                "DELETE FROM memory_files WHERE memory_id = ?1",
                vec![id.clone()],
            ),
            Statement::with_params(
                crate::sql::INSERT_MEMORY_FILES,
                vec![project.clone(), id.clone(), json(&new.related_files)],
            ),
            Statement::with_params(
                "DELETE FROM memory_modules WHERE memory_id = ?1",
                vec![id.clone()],
            ),
            Statement::with_params(
                crate::sql::INSERT_MEMORY_MODULES,
                vec![project, id, json(&new.related_modules)],
            ),
        ]
    }

    /// A new vector when the embedded text changed; without one (no embedder, or it
    /// failed) the old vector goes and the memory waits for `embed_pending`.
    async fn reembed_statements(&self, old: &Memory, new: &NewMemory, now: &str) -> Vec<Statement> {
        let text = context::memory_text(new);
        if text == context::memory_text(&as_new(old)) {
            return Vec::new();
        }
        if let Some(embedding) = &self.embedding {
            if let Ok(mut vectors) = embedding
                .embed(std::slice::from_ref(&text), self.host.clock.as_ref())
                .await
            {
                if let Some(vector) = vectors.pop() {
                    return crate::engram::embedding_statements(&old.id, &vector, embedding, now);
                }
            }
        }
        vec![
            Statement::with_params(
                "DELETE FROM memory_embeddings WHERE memory_id = ?1",
                vec![Value::from(old.id.as_str())],
            ),
            Statement::with_params(
                "UPDATE memories SET embedding_model_id = NULL WHERE id = ?1",
                vec![Value::from(old.id.as_str())],
            ),
        ]
    }

    /// A person says the memory is right: user-verified, review cleared.
    pub async fn confirm(&self, id: &str) -> Result<Memory, EngramError> {
        let memory = self.live(id).await?;
        let now = self.now_text();
        let statements = vec![
            Statement::with_params(
                "UPDATE memories SET user_verified = 1, needs_review = 0, updated_at = ?3 \
WHERE id = ?1 AND project_id = ?2 AND deprecated = 0",
                vec![
                    Value::from(memory.id.as_str()),
                    Value::from(self.project_id()),
                    Value::from(now.as_str()),
                ],
            ),
            self.person_entry(
                &memory.id,
                HistoryAction::Confirmed,
                (
                    Some(serde_json::json!({
                        "userVerified": memory.flags.user_verified,
                        "needsReview": memory.flags.needs_review,
                    })),
                    Some(serde_json::json!({ "userVerified": true, "needsReview": false })),
                ),
                "confirmed by a person",
                &now,
            ),
        ];
        self.write(statements, &memory.id).await?;
        self.live(&memory.id).await
    }

    /// A person says the memory is wrong: it is retired (never injected or searched
    /// again, kept with its history) and, when the observer inferred it, counted against
    /// the signal that produced it. Returns the retired memory.
    pub async fn flag_wrong(&self, id: &str, reason: Option<&str>) -> Result<Memory, EngramError> {
        let memory = self.live(id).await?;
        self.behind.discard(&memory.id);
        let now = self.now_text();
        let why = match reason.map(str::trim).filter(|r| !r.is_empty()) {
            Some(reason) => format!("flagged wrong by a person: {reason}"),
            None => "flagged wrong by a person".to_owned(),
        };
        let mut statements: Vec<Statement> = self
            .retire_statements(&memory.id, &now, HistoryAction::Flagged, &why, PERSON)
            .into_iter()
            .collect();
        if memory.source == MemorySource::ObserverInferred {
            if let Some(signal) = memory.tags.first() {
                statements.push(Statement::with_params(
                    "INSERT INTO observer_signal_flags (project_id, signal, flagged) VALUES (?1, ?2, 1) \
ON CONFLICT (project_id, signal) DO UPDATE SET flagged = flagged + 1",
                    vec![Value::from(self.project_id()), Value::from(signal.as_str())],
                ));
            }
        }
        self.write(statements, &memory.id).await?;
        self.get_any(&memory.id)
            .await?
            .ok_or_else(|| EngramError::NotFound(format!("memory {}", memory.id)))
    }

    /// Pins (`true`) or unpins a live memory: a pinned memory never decays and is never
    /// pruned.
    pub async fn pin(&self, id: &str, pinned: bool) -> Result<Memory, EngramError> {
        let memory = self.live(id).await?;
        if memory.flags.pinned == pinned {
            return Ok(memory);
        }
        let now = self.now_text();
        let half_life = if pinned {
            None
        } else {
            memory.memory_type.default_half_life_days()
        };
        let statements = vec![
            Statement::with_params(
                "UPDATE memories SET pinned = ?3, decay_half_life_days = ?4, updated_at = ?5 \
WHERE id = ?1 AND project_id = ?2 AND deprecated = 0",
                vec![
                    Value::from(memory.id.as_str()),
                    Value::from(self.project_id()),
                    Value::from(pinned),
                    Value::from(half_life),
                    Value::from(now.as_str()),
                ],
            ),
            self.person_entry(
                &memory.id,
                HistoryAction::Pinned,
                (
                    Some(serde_json::json!({ "pinned": memory.flags.pinned })),
                    Some(serde_json::json!({ "pinned": pinned })),
                ),
                if pinned {
                    "pinned by a person"
                } else {
                    "unpinned by a person"
                },
                &now,
            ),
        ];
        self.write(statements, &memory.id).await?;
        self.live(&memory.id).await
    }

    /// A person's own memory (`/remember`): source `user_taught`, confirmed, trusted more
    /// than an agent's when the two contradict.
    pub async fn teach(&self, taught: Taught) -> Result<Remembered, EngramError> {
        self.remember(taught.into_new_memory()).await
    }

    /// Deletes a memory (live or retired) for good: its row, vector, keyword row and
    /// links go; its history stays, ending with a `deleted` entry.
    pub async fn purge(&self, id: &str) -> Result<(), EngramError> {
        let id = self.resolve_id(id).await?;
        let memory = self
            .get_any(&id)
            .await?
            .ok_or_else(|| EngramError::NotFound(format!("memory {id}")))?;
        self.behind.discard(&id);
        let now = self.now_text();
        let statements = self.purge_statements(&memory, "purged on request", &now);
        self.write(statements, &id).await
    }

    /// The statements that delete `memory` for good, keeping its history.
    fn purge_statements(&self, memory: &Memory, reason: &str, now: &str) -> Vec<Statement> {
        let id = Value::from(memory.id.as_str());
        let project = Value::from(self.project_id());
        let mut statements = vec![
            self.person_entry(
                &memory.id,
                HistoryAction::Deleted,
                (
                    Some(serde_json::json!({ "deprecated": memory.deprecated })),
                    None,
                ),
                reason,
                now,
            ),
            // The keyword row goes by its rowid, while its record still says which.
            Statement::with_params(crate::sql::DELETE_FTS, vec![id.clone()]),
        ];
        for table in crate::lifecycle::MEMORY_SIDE_TABLES {
            statements.push(Statement::with_params(
                format!("DELETE FROM {table} WHERE memory_id = ?1"),
                vec![id.clone()],
            ));
        }
        statements.push(Statement::with_params(
            "DELETE FROM memories WHERE id = ?1 AND project_id = ?2",
            vec![id, project],
        ));
        statements
    }

    /// Deletes every memory of the project for good (its history stays, each memory's
    /// ending with a `deleted` entry) and forgets its imported files. Returns how many
    /// memories went.
    pub async fn reset(&self) -> Result<u64, EngramError> {
        let mut statements = vec![
            Statement::with_params(
                "INSERT INTO memory_history (memory_id, project_id, action, before, after, reason, actor, related_id, at) \
SELECT id, project_id, 'deleted', json_object('deprecated', json(CASE deprecated WHEN 1 THEN 'true' ELSE 'false' END)), NULL, \
'the project was reset', 'user', NULL, ?2 FROM memories WHERE project_id = ?1",
                vec![Value::from(self.project_id()), Value::from(self.now_text())],
            ),
            Statement::with_params(
                "DELETE FROM memories_fts WHERE rowid IN (SELECT k.keyword_rowid FROM memory_keyword_rows k \
JOIN memories m ON m.id = k.memory_id WHERE m.project_id = ?1)",
                vec![Value::from(self.project_id())],
            ),
        ];
        for table in crate::lifecycle::MEMORY_SIDE_TABLES {
            statements.push(Statement::with_params(
                format!(
                    "DELETE FROM {table} WHERE memory_id IN (SELECT id FROM memories WHERE project_id = ?1)"
                ),
                vec![Value::from(self.project_id())],
            ));
        }
        statements.extend([
            Statement::with_params(
                "DELETE FROM imported_files WHERE project_id = ?1",
                vec![Value::from(self.project_id())],
            ),
            Statement::with_params(
                "DELETE FROM memories WHERE project_id = ?1",
                vec![Value::from(self.project_id())],
            ),
        ]);
        self.behind.discard_all();
        let results = self.transaction_with_behind(&statements).await?;
        Ok(results.last().map_or(0, |r| r.affected_row_count))
    }

    /// [`Engram::reset`] for a host that cannot ask the person (a package call, a route):
    /// `confirm` must be the project's id, as the CLI's prompt asks it typed, so a stray
    /// call cannot empty a project.
    pub async fn reset_confirmed(&self, confirm: &str) -> Result<u64, EngramError> {
        if confirm != self.project_id() {
            return Err(EngramError::invalid(
                "confirm",
                "must be the project's id: reset deletes every memory of the project for good",
            ));
        }
        self.reset().await
    }

    /// Writes a person's change to memory `id` as one durable write.
    pub(super) async fn write(
        &self,
        statements: Vec<Statement>,
        id: &str,
    ) -> Result<(), EngramError> {
        let write = crate::durable::Write {
            statements,
            key: crate::durable::receipt_key(None, || self.new_id()),
            memory_ids: vec![id.to_owned()],
        };
        self.commit(write, false).await?;
        Ok(())
    }

    /// The history entry of a person's change to memory `id` (`before`, `after`).
    pub(super) fn person_entry(
        &self,
        id: &str,
        action: HistoryAction,
        (before, after): (Option<serde_json::Value>, Option<serde_json::Value>),
        reason: &str,
        now: &str,
    ) -> Statement {
        history(
            HistoryRecord {
                memory_id: id,
                action,
                before,
                after,
                reason,
                actor: PERSON,
                related_id: None,
            },
            self.project_id(),
            now,
        )
    }

    pub(crate) fn now_text(&self) -> String {
        engram_core::time::rfc3339_from_millis(self.host.clock.now_millis())
    }
}

/// Updates an edited memory (`?1` id, `?2` project, then its fields; `?14` marks it
/// confirmed).
const UPDATE_MEMORY: &str = "UPDATE memories SET type = ?3, content = ?4, tags = ?5, \
related_files = ?6, related_modules = ?7, scope = ?8, visibility = ?9, confidence = ?10, \
citation_text = ?11, content_key = ?12, updated_at = ?13, \
user_verified = CASE WHEN ?14 THEN 1 ELSE user_verified END, \
needs_review = CASE WHEN ?14 THEN 0 ELSE needs_review END, \
secret_scan_skipped = ?15, decay_half_life_days = ?16 \
WHERE id = ?1 AND project_id = ?2 AND deprecated = 0";

/// The fields an edit changed, before and after, as JSON objects.
fn changed_fields(
    old: &Memory,
    new: &NewMemory,
    verify: bool,
) -> (serde_json::Value, serde_json::Value) {
    let mut before = serde_json::Map::new();
    let mut after = serde_json::Map::new();
    let mut note = |field: &str, was: serde_json::Value, now: serde_json::Value| {
        if was != now {
            before.insert(field.to_owned(), was);
            after.insert(field.to_owned(), now);
        }
    };
    note(
        "content",
        old.content.clone().into(),
        new.content.clone().into(),
    );
    note(
        "type",
        old.memory_type.as_str().into(),
        new.memory_type.as_str().into(),
    );
    note(
        "tags",
        serde_json::json!(old.tags),
        serde_json::json!(new.tags),
    );
    note(
        "relatedFiles",
        serde_json::json!(old.related_files),
        serde_json::json!(new.related_files),
    );
    note(
        "relatedModules",
        serde_json::json!(old.related_modules),
        serde_json::json!(new.related_modules),
    );
    note(
        "scope",
        old.scope.as_str().into(),
        new.scope.as_str().into(),
    );
    note(
        "visibility",
        old.visibility.as_str().into(),
        new.visibility.as_str().into(),
    );
    note("confidence", old.confidence.into(), new.confidence.into());
    note(
        "citationText",
        serde_json::json!(old.citation_text),
        serde_json::json!(new.citation_text),
    );
    if verify {
        note("userVerified", old.flags.user_verified.into(), true.into());
    }
    (before.into(), after.into())
}

fn json<T: Serialize>(value: &T) -> Value {
    Value::from(serde_json::to_string(value).unwrap_or_else(|_| "[]".to_owned()))
}
