//! Consolidation on write: before new memories are stored, the live memories they could
//! repeat or contradict are read in one round trip and judged
//! ([`engram_lifecycle::judge`]); each new memory is then stored as new, merged into the
//! memory it repeats, or stored as the replacement of the one it contradicts.

use engram_core::{Memory, MemoryRelation, MemorySource, NewMemory, RelationType};
use engram_lifecycle::judge::{judge, supersedable, Change, Judgement, Stated};
use engram_lifecycle::{merged_confidence, HistoryAction};
use engram_store::{Database, Statement, StoreError, Value};

use super::sql;
use crate::row::{memory_from_row, MEMORY_COLUMN_COUNT};
use crate::{Engram, EngramError};

/// Live memories read per new memory to judge it against.
const CANDIDATES: i64 = 5;
/// Keyword terms of a new memory used to find candidates without vectors.
const CANDIDATE_TERMS: usize = 16;

/// Where a new memory goes.
#[derive(Debug, Clone)]
pub(crate) enum Placement {
    /// Stored as a new memory.
    New,
    /// Merged into a live memory that says the same thing.
    Merge {
        /// The memory it merges into.
        id: String,
        /// That memory's confidence and occurrences as read.
        confidence: f64,
        occurrences: u32,
        /// Why they are the same.
        reason: String,
        /// The new memory says more: the merged memory takes its wording.
        adopt_wording: bool,
    },
    /// Stored, retiring the live memory it replaces.
    Supersede { old: Box<Memory>, change: Change },
    /// Stored beside a live memory it contradicts that is trusted more (a person's, or
    /// pinned): flagged for review, the conflict recorded as a relation.
    Conflict { old: Box<Memory>, change: Change },
}

/// How far a memory's word is trusted when two contradict: a person's word (taught,
/// verified or pinned) over an agent's, an agent's over the observer's inference.
fn trust_rank(source: MemorySource, verified: bool, pinned: bool) -> u8 {
    if verified || pinned || source == MemorySource::UserTaught {
        return 3;
    }
    if source == MemorySource::ObserverInferred {
        return 1;
    }
    2
}

impl<D: Database> Engram<D> {
    /// `new_id`, stored by `source`, replaces the live memory `old`, as whoever recorded it
    /// said: `old` is retired with `superseded_by`, leaves the keyword index, and both
    /// histories say why, in one transaction. A memory trusted more than `source` (a
    /// person's, verified or pinned) is not replaced: `false`.
    pub(crate) async fn supersede_declared(
        &self,
        old: &Memory,
        new_id: &str,
        source: MemorySource,
    ) -> Result<bool, EngramError> {
        if trust_rank(source, false, false)
            < trust_rank(old.source, old.flags.user_verified, old.flags.pinned)
        {
            return Ok(false);
        }
        let now = engram_core::time::rfc3339_from_millis(self.host.clock.now_millis());
        let statements = supersede_statements(
            self.project_id(),
            old,
            &Change::Declared,
            new_id,
            source.as_str(),
            &now,
        );
        self.transaction_with_behind(&statements).await?;
        Ok(true)
    }

    /// Judges each of `memories` (with its vector, when it has one) against the live
    /// memories it could repeat or contradict, read in one round trip, and against the
    /// memories before it in the batch.
    pub(crate) async fn place(
        &self,
        memories: &[NewMemory],
        vectors: &[Option<Vec<f32>>],
        ids: &[String],
    ) -> Result<Vec<Placement>, EngramError> {
        let keys: Vec<Option<String>> = memories.iter().map(crate::engram::content_key).collect();
        let mut statements = Vec::new();
        let mut reads = Vec::with_capacity(memories.len());
        for ((memory, vector), key) in memories.iter().zip(vectors).zip(&keys) {
            let Some(key) = key else {
                reads.push(None);
                continue;
            };
            let first = statements.len();
            statements.push(self.by_key(memory, key));
            statements.push(self.nearest(memory, vector.as_deref()));
            reads.push(Some(first));
        }
        let mut results = Vec::new();
        // While the database is out of reach the write goes to the buffer unjudged: the
        // content key still keeps an identical text from being stored twice.
        let reachable = self.durability.pending() == 0;
        if !statements.is_empty() && reachable {
            match self.db.pipeline(&statements).await {
                Ok(answers) => {
                    for answer in answers {
                        results.push(answer.map_err(StoreError::Sql)?);
                    }
                }
                Err(error) if crate::durable::is_passing(&error) => {
                    return Ok(vec![Placement::New; memories.len()])
                }
                Err(error) => return Err(error.into()),
            }
        } else if !reachable {
            return Ok(vec![Placement::New; memories.len()]);
        }
        let mut placements: Vec<Placement> = Vec::with_capacity(memories.len());
        for (i, (memory, read)) in memories.iter().zip(&reads).enumerate() {
            let Some(first) = *read else {
                placements.push(Placement::New);
                continue;
            };
            if let Some(merge) = earlier_in_batch(memories, &keys, &placements, ids, i) {
                placements.push(merge);
                continue;
            }
            let by_key = results.get(first).map(|r| r.rows.as_slice()).unwrap_or(&[]);
            let nearest = results
                .get(first + 1)
                .map(|r| r.rows.as_slice())
                .unwrap_or(&[]);
            placements.push(place_one(memory, by_key, nearest, vectors[i].is_some())?);
        }
        Ok(placements)
    }

    fn by_key(&self, memory: &NewMemory, key: &str) -> Statement {
        Statement::with_params(
            sql::candidate_by_key(),
            vec![
                Value::from(self.project_id()),
                Value::from(memory.memory_type.as_str()),
                Value::from(key),
            ],
        )
    }

    /// The statement reading the live memories nearest `memory`: by cosine with a vector,
    /// by keywords without one.
    fn nearest(&self, memory: &NewMemory, vector: Option<&[f32]>) -> Statement {
        let common = [
            Value::from(self.project_id()),
            Value::from(memory.memory_type.as_str()),
            Value::from(memory.visibility.as_str()),
        ];
        match (vector, &self.embedding) {
            (Some(v), Some(embedding)) => {
                let mut params = common.to_vec();
                params.extend([
                    Value::Blob(engram_core::vector::to_blob(v)),
                    Value::from(embedding.model_id()),
                    Value::Integer(embedding.dims() as i64),
                    Value::Integer(CANDIDATES),
                ]);
                Statement::with_params(sql::nearest_candidates(), params)
            }
            _ => {
                let mut terms: Vec<String> = Vec::new();
                engram_core::fts_terms::for_each_term(&memory.content, |t| {
                    if !terms.iter().any(|known| known == t) {
                        terms.push(t.to_owned());
                    }
                });
                terms.truncate(CANDIDATE_TERMS);
                let query = terms
                    .iter()
                    .map(|t| format!("\"{t}\""))
                    .collect::<Vec<_>>()
                    .join(" OR ");
                let mut params = common.to_vec();
                // An empty query matches nothing; `""` is a valid FTS5 string.
                params.push(Value::from(if query.is_empty() {
                    "\"\"".to_owned()
                } else {
                    format!("content : ({query})")
                }));
                params.push(Value::Integer(CANDIDATES));
                Statement::with_params(sql::keyword_candidates(), params)
            }
        }
    }
}

/// A merge into an earlier memory of the same batch with the same content key.
fn earlier_in_batch(
    memories: &[NewMemory],
    keys: &[Option<String>],
    placements: &[Placement],
    ids: &[String],
    i: usize,
) -> Option<Placement> {
    let key = keys[i].as_ref()?;
    (0..i).find_map(|j| {
        let same =
            memories[j].memory_type == memories[i].memory_type && keys[j].as_ref() == Some(key);
        let stored = !matches!(placements.get(j), Some(Placement::Merge { .. }));
        (same && stored).then(|| Placement::Merge {
            id: ids[j].clone(),
            confidence: memories[j].confidence,
            occurrences: 1,
            reason: "same text, earlier in the same write".into(),
            adopt_wording: false,
        })
    })
}

/// Judges one new memory against its candidates: the live memory with its key, then the
/// nearest ones, most similar first.
fn place_one(
    memory: &NewMemory,
    by_key: &[Vec<Value>],
    nearest: &[Vec<Value>],
    has_vector: bool,
) -> Result<Placement, EngramError> {
    if let Some(row) = by_key.first() {
        let existing = memory_from_row(row)?;
        return Ok(Placement::Merge {
            id: existing.id,
            confidence: existing.confidence,
            occurrences: existing.occurrences,
            reason: "same text".into(),
            adopt_wording: false,
        });
    }
    let new = Stated {
        content: &memory.content,
        files: &memory.related_files,
        target: memory.target_node_id.as_deref(),
    };
    for row in nearest {
        let old = memory_from_row(row)?;
        let cosine = if has_vector {
            row.get(MEMORY_COLUMN_COUNT)
                .and_then(|v| v.as_f64("similarity").ok())
        } else {
            None
        };
        let stated = Stated {
            content: &old.content,
            files: &old.related_files,
            target: old.target_node_id.as_deref(),
        };
        match judge(new, stated, cosine) {
            Judgement::Duplicate {
                reason,
                adopt_wording,
            } => {
                return Ok(Placement::Merge {
                    id: old.id,
                    confidence: old.confidence,
                    occurrences: old.occurrences,
                    reason,
                    adopt_wording,
                })
            }
            Judgement::Supersedes { change } if supersedable(memory.memory_type) => {
                let new_rank = trust_rank(
                    memory.source,
                    memory.flags.user_verified,
                    memory.flags.pinned,
                );
                let old_rank = trust_rank(old.source, old.flags.user_verified, old.flags.pinned);
                let old = Box::new(old);
                return Ok(if new_rank >= old_rank {
                    Placement::Supersede { old, change }
                } else {
                    Placement::Conflict { old, change }
                });
            }
            _ => {}
        }
    }
    Ok(Placement::New)
}

/// Sets what a placement changes on the new memory itself before it is stored: the
/// relation to the memory it supersedes or contradicts, and review for a conflict.
pub(crate) fn mark_new(memory: &mut NewMemory, placement: &Placement) {
    let (old, relation_type) = match placement {
        Placement::Supersede { old, .. } => (old, RelationType::Supersedes),
        Placement::Conflict { old, .. } => (old, RelationType::ConflictsWith),
        _ => return,
    };
    if matches!(placement, Placement::Conflict { .. }) {
        memory.flags.needs_review = true;
    }
    if !memory
        .relations
        .iter()
        .any(|r| r.target_memory_id.as_deref() == Some(old.id.as_str()))
    {
        memory.relations.push(MemoryRelation {
            target_memory_id: Some(old.id.clone()),
            target_file_path: None,
            relation_type,
            confidence: 1.0,
            auto_extracted: true,
        });
    }
}

/// The statements that merge `memory` into the live memory `id`, with its history entry.
pub(crate) fn merge_statements(
    project: &str,
    memory: &NewMemory,
    placement: (&str, f64, u32, &str),
    adopt_wording: bool,
    now: &str,
) -> Vec<Statement> {
    let (id, confidence, occurrences, reason) = placement;
    let raised = merged_confidence(confidence, memory.confidence);
    let mut provenance = memory.provenance_session_ids.clone();
    provenance.extend(memory.session_id.iter().cloned());
    let mut statements = Vec::new();
    if adopt_wording {
        statements.push(Statement::with_params(
            sql::ADOPT_WORDING,
            vec![
                Value::from(id),
                Value::from(project),
                Value::from(memory.content.as_str()),
                Value::from(crate::engram::content_key(memory)),
            ],
        ));
    }
    statements.extend([
        Statement::with_params(
            sql::MERGE_MEMORY,
            vec![
                Value::from(id),
                Value::from(project),
                Value::from(raised),
                json(&memory.tags),
                json(&memory.related_files),
                json(&memory.related_modules),
                json(&provenance),
                Value::from(now),
            ],
        ),
        Statement::with_params(sql::MERGE_KEYWORD_ROW, vec![Value::from(id)]),
        Statement::with_params(
            crate::sql::INSERT_MEMORY_FILES,
            vec![
                Value::from(project),
                Value::from(id),
                json(&memory.related_files),
            ],
        ),
        Statement::with_params(
            crate::sql::INSERT_MEMORY_MODULES,
            vec![
                Value::from(project),
                Value::from(id),
                json(&memory.related_modules),
            ],
        ),
        history(
            HistoryRecord {
                memory_id: id,
                action: HistoryAction::Merged,
                before: Some(serde_json::json!({
                    "occurrences": occurrences, "confidence": confidence,
                })),
                after: Some(serde_json::json!({
                    "occurrences": occurrences.saturating_add(1),
                    "confidence": raised.max(confidence),
                    "content": memory.content,
                    "sessionId": memory.session_id,
                })),
                reason: &if adopt_wording {
                    format!("said again, with more ({reason}); its wording is the newer one")
                } else {
                    format!("said again ({reason})")
                },
                actor: memory.source.as_str(),
                related_id: None,
            },
            project,
            now,
        ),
    ]);
    statements
}

/// The statements that retire `old`, which the new memory `new_id` replaces, with both
/// memories' history entries (the new memory's `created` entry is written with it).
pub(crate) fn supersede_statements(
    project: &str,
    old: &Memory,
    change: &Change,
    new_id: &str,
    actor: &str,
    now: &str,
) -> Vec<Statement> {
    let why = change.describe();
    vec![
        Statement::with_params(
            sql::SUPERSEDE_MEMORY,
            vec![
                Value::from(old.id.as_str()),
                Value::from(project),
                Value::from(now),
                Value::from(new_id),
            ],
        ),
        Statement::with_params(
            format!("{} AND changes() = 1", crate::sql::DELETE_FTS),
            vec![Value::from(old.id.as_str())],
        ),
        Statement::with_params(
            crate::sql::DELETE_KEYWORD_ROW,
            vec![Value::from(old.id.as_str())],
        ),
        history(
            HistoryRecord {
                memory_id: &old.id,
                action: HistoryAction::Superseded,
                before: Some(serde_json::json!({ "deprecated": false })),
                after: Some(serde_json::json!({ "deprecated": true, "supersededBy": new_id })),
                reason: &format!("replaced by a newer memory: {why}"),
                actor,
                related_id: Some(new_id),
            },
            project,
            now,
        ),
        history(
            HistoryRecord {
                memory_id: new_id,
                action: HistoryAction::Supersedes,
                before: Some(serde_json::json!({ "content": old.content })),
                after: None,
                reason: &why,
                actor,
                related_id: Some(&old.id),
            },
            project,
            now,
        ),
    ]
}

/// One history entry to append.
pub(crate) struct HistoryRecord<'a> {
    pub memory_id: &'a str,
    pub action: HistoryAction,
    pub before: Option<serde_json::Value>,
    pub after: Option<serde_json::Value>,
    pub reason: &'a str,
    pub actor: &'a str,
    pub related_id: Option<&'a str>,
}

/// The statement that appends `record` to its memory's history.
pub(crate) fn history(record: HistoryRecord<'_>, project: &str, now: &str) -> Statement {
    let text = |v: Option<serde_json::Value>| Value::from(v.map(|v| v.to_string()));
    Statement::with_params(
        sql::INSERT_HISTORY,
        vec![
            Value::from(record.memory_id),
            Value::from(project),
            Value::from(record.action.as_str()),
            text(record.before),
            text(record.after),
            Value::from(record.reason),
            Value::from(record.actor),
            Value::from(record.related_id),
            Value::from(now),
        ],
    )
}

fn json<T: serde::Serialize>(value: &T) -> Value {
    Value::from(serde_json::to_string(value).unwrap_or_else(|_| "[]".to_owned()))
}
