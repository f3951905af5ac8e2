//! The observer on a database: a session's scratchpad is finalized against persisted
//! cross-session statistics read in one round trip, and the promoted memories, the updated
//! statistics and the session record are written in one transaction.

mod contribution;
mod sql;

use std::collections::HashMap;

use engram_core::time::rfc3339_from_millis;
use engram_core::{MemoryType, NewMemory};
use engram_observer::finalize::{observer_tag, Discarded};
use engram_observer::{HotFile, Outcome, Prior, Scratchpad, SignalClass};
use engram_store::{Database, Rows, Statement, StoreError, Value};
use serde::Serialize;

use crate::{Engram, EngramError};

/// A candidate this close (cosine) to a live memory of its type is not new.
pub const NOVELTY_MAX_SIMILARITY: f64 = 0.88;
/// Hot files reported per session.
pub const REPORTED_HOT_FILES: usize = 10;

/// A memory the observer stored, with why.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromotedMemory {
    /// The stored memory's id.
    pub id: String,
    /// The signal that produced it (`None` for a threshold synthesis).
    pub signal: Option<SignalClass>,
    /// Its type.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// Its confidence after scoring and the trust gate.
    pub confidence: f64,
    /// Its content as stored (secrets redacted).
    pub content: String,
    /// The steps of the session that show it.
    pub evidence_steps: Vec<u32>,
    /// Sessions or occurrences counted for the frequency filter.
    pub evidence: u32,
    /// Files it is about.
    pub files: Vec<String>,
    /// It was derived after web content entered the session (needs review, confidence × 0.7).
    pub contaminated: bool,
    /// It repeated a live memory and was merged into it (`id` is that memory's).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub merged: bool,
    /// The live memory it replaced, when it contradicted one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded: Option<String>,
}

/// What [`Engram::finalize_session`] did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionReport {
    /// The session.
    pub session_id: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Events ingested.
    pub events: u64,
    /// The session's hottest files.
    pub hot_files: Vec<HotFile>,
    /// Memories stored, best first.
    pub promoted: Vec<PromotedMemory>,
    /// Observations not promoted, with the filter that dropped them.
    pub discarded: Vec<Discarded>,
    /// The session had been finalized before: only what it did since is learned from
    /// (nothing at all for a session finalized before engram kept its contribution).
    pub already_finalized: bool,
    /// The host LLM rewrote the memories' content (one call).
    pub synthesized_by_llm: bool,
    /// Early triggers that fired during the session.
    pub triggers: Vec<engram_observer::Trigger>,
    /// The session's record as stored (new, or brought up to date), when it left one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<PromotedMemory>,
}

impl<D: Database> Engram<D> {
    /// Saves `pad` so the session survives a crash; [`Engram::recover_sessions`] finalizes
    /// what was never finalized.
    pub async fn checkpoint_session(&self, pad: &Scratchpad) -> Result<(), EngramError> {
        let now = rfc3339_from_millis(self.host.clock.now_millis());
        self.db
            .transaction(&[Statement::with_params(
                sql::SAVE_CHECKPOINT,
                vec![
                    Value::from(pad.session_id.as_str()),
                    Value::from(self.project_id()),
                    Value::from(pad.checkpoint()),
                    Value::Integer(i64::from(pad.step)),
                    Value::from(now),
                ],
            )])
            .await?;
        Ok(())
    }

    /// The scratchpads of sessions that were checkpointed and never finalized. A checkpoint
    /// that cannot be read is reported as an error naming the session (it is kept).
    pub async fn unfinished_sessions(&self) -> Result<Vec<Scratchpad>, EngramError> {
        let rows = self
            .db
            .transaction(&[Statement::with_params(
                sql::LIST_CHECKPOINTS,
                vec![Value::from(self.project_id())],
            )])
            .await?;
        let mut pads = Vec::new();
        for row in rows.first().map(|r| r.rows.as_slice()).unwrap_or_default() {
            let session = row
                .first()
                .map(|v| v.as_text("session_id"))
                .transpose()?
                .unwrap_or("");
            let state = row
                .get(1)
                .map(|v| v.as_text("state"))
                .transpose()?
                .unwrap_or("");
            let pad = Scratchpad::restore(state).map_err(|e| {
                StoreError::Decode(format!(
                    "checkpoint of session {session} is unreadable: {e}"
                ))
            })?;
            pads.push(pad);
        }
        Ok(pads)
    }

    /// Finalizes every unfinished session as cancelled (call on start): their statistics are
    /// kept, their memories discarded except dead ends.
    pub async fn recover_sessions(&self) -> Result<Vec<SessionReport>, EngramError> {
        let mut reports = Vec::new();
        for pad in self.unfinished_sessions().await? {
            reports.push(self.finalize_session(&pad, Outcome::Cancelled).await?);
        }
        Ok(reports)
    }

    /// Seeds the co-access statistics from a git log the host supplies (`git log
    /// --name-only --format=commit:%H`): files changed in the same commits get co-access
    /// edges, and each pair's commits count toward the co-access frequency filter, at most
    /// one session short of its minimum so that a real agent session still has to confirm
    /// it. Returns the number of pairs recorded. Run it once, on an empty history.
    pub async fn bootstrap_from_git_log(&self, log: &str) -> Result<usize, EngramError> {
        let pairs = engram_observer::git::co_commits(log);
        if pairs.is_empty() {
            return Ok(0);
        }
        let cap = SignalClass::CoAccess
            .profile()
            .min_sessions
            .saturating_sub(1);
        let now = Value::from(rfc3339_from_millis(self.host.clock.now_millis()));
        let project = Value::from(self.project_id());
        let edges: Vec<(&str, &str, u32)> = pairs
            .iter()
            .map(|(a, b, n)| (a.as_str(), b.as_str(), *n))
            .collect();
        let counts: Vec<(String, u32)> = pairs
            .iter()
            .map(|(a, b, n)| (format!("co:{a}|{b}"), (*n).min(cap)))
            .collect();
        self.db
            .transaction(&[
                Statement::with_params(
                    sql::SEED_CO_ACCESS,
                    vec![project.clone(), json(&edges), now.clone()],
                ),
                Statement::with_params(
                    sql::SEED_SIGNAL_COUNTS,
                    vec![project, json(&counts), Value::from("git-log"), now],
                ),
            ])
            .await?;
        Ok(pairs.len())
    }

    /// Ends a session, or brings a finalized one up to date: looks up what earlier
    /// sessions showed, runs the promotion filters, lets the host LLM (if any, one call)
    /// rewrite the surviving memories, and stores them with the updated cross-session
    /// statistics in one transaction. Finalizing a session again learns only from what it
    /// did since (its earlier share of the statistics is kept with it): the same session
    /// twice writes no memory and counts nothing twice.
    pub async fn finalize_session(
        &self,
        pad: &Scratchpad,
        outcome: Outcome,
    ) -> Result<SessionReport, EngramError> {
        let mut attempt = 0;
        loop {
            match self.finalize_session_once(pad, outcome).await {
                // A parallel finalize stored one of these memories first: read again, and
                // this one merges into it.
                Err(error)
                    if crate::engram::is_content_key_conflict(&error)
                        && attempt < crate::engram::CONFLICT_RETRIES =>
                {
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    async fn finalize_session_once(
        &self,
        pad: &Scratchpad,
        outcome: Outcome,
    ) -> Result<SessionReport, EngramError> {
        let project = self.project_id();
        let pad = &*self.with_file_presence(pad);
        let observations = pad.observations();
        let keys: Vec<&str> = observations.iter().map(|o| o.key.as_str()).collect();
        let tags: Vec<String> = keys.iter().map(|k| observer_tag(k)).collect();
        let modules = pad.modules();
        let reads = self
            .db
            .pipeline(&[
                Statement::with_params(
                    sql::SESSION_SEEN,
                    vec![Value::from(project), Value::from(pad.session_id.as_str())],
                ),
                Statement::with_params(sql::SIGNAL_COUNTS, vec![Value::from(project), json(&keys)]),
                Statement::with_params(sql::PROMOTED_TAGS, vec![Value::from(project), json(&tags)]),
                Statement::with_params(
                    sql::MODULE_COUNTS,
                    vec![Value::from(project), json(&modules)],
                ),
                Statement::with_params(sql::CLASS_REJECTIONS, vec![Value::from(project)]),
                Statement::with_params(
                    sql::SESSION_RECORD,
                    vec![Value::from(project), Value::from(pad.session_id.as_str())],
                ),
            ])
            .await?;
        let mut results = Vec::with_capacity(reads.len());
        for read in reads {
            results.push(read.map_err(StoreError::Sql)?);
        }
        let [seen, counts, promoted_tags, module_counts, rejections, record_row] = &results[..]
        else {
            return Err(StoreError::Decode(
                "the observer's statistics read returned too few results".into(),
            )
            .into());
        };
        let mut report = SessionReport {
            session_id: pad.session_id.clone(),
            outcome,
            events: pad.events,
            hot_files: pad.hot_files(REPORTED_HOT_FILES),
            promoted: Vec::new(),
            discarded: Vec::new(),
            already_finalized: !seen.rows.is_empty(),
            synthesized_by_llm: false,
            triggers: pad.triggers.clone(),
            record: None,
        };
        let previous = match seen.rows.first().and_then(|row| row.first()) {
            Some(value) => contribution::Contribution::decode(value.as_opt_text("contribution")?),
            None => None,
        };
        // A session finalized before its contribution was kept cannot be finalized again
        // without counting it twice.
        if report.already_finalized && previous.is_none() {
            self.db
                .transaction(&[Statement::with_params(
                    sql::DELETE_CHECKPOINT,
                    vec![Value::from(pad.session_id.as_str()), Value::from(project)],
                )])
                .await?;
            return Ok(report);
        }
        let mut prior = prior_from(
            counts,
            promoted_tags,
            module_counts,
            rejections,
            &keys,
            &tags,
        )?;
        if let Some(previous) = &previous {
            previous.remove_from(&mut prior);
        }
        let finalized = pad.finalize_observations(observations, outcome, &prior);
        let mut candidates = finalized.promoted;
        report.discarded = finalized.discarded;

        self.drop_near_duplicates(&mut candidates, &mut report.discarded)
            .await?;
        let mut memories: Vec<NewMemory> = candidates.iter().map(|c| c.memory.clone()).collect();
        if outcome == Outcome::Success && !memories.is_empty() {
            if let Some(llm) = &self.llm {
                report.synthesized_by_llm = rewrite_with_llm(llm.as_ref(), &mut memories).await;
            }
        }
        let now_ms = self.host.clock.now_millis();
        let existing_record = match record_row.rows.first().and_then(|row| row.first()) {
            Some(value) => Some(value.as_text("id")?.to_owned()),
            None => None,
        };
        // A new record goes through consolidation like any memory: the same work recorded
        // word for word by another session merges into its record.
        let mut record_update = None;
        match (finalized.record, existing_record) {
            (Some(record), Some(id)) => record_update = Some((id, record)),
            (Some(record), None) => memories.push(record),
            (None, _) => {}
        }
        let record_index = (memories.len() > candidates.len()).then_some(candidates.len());

        let (mut statements, mut remembered, mut stored) = self.prepare_memories(memories).await?;
        let record_remembered = record_index.map(|i| (remembered.remove(i), stored.remove(i)));
        statements.extend(evidence_statements(
            project,
            &pad.session_id,
            &remembered,
            &candidates,
        ));
        // A new record stands on the session's edits (or its last step).
        if let Some((record, _)) = record_remembered.as_ref().filter(|(r, _)| !r.merged) {
            statements.push(evidence_statement(
                &record.id,
                project,
                serde_json::json!({
                    "signal": engram_observer::finalize::RECORD_TAG,
                    "session": pad.session_id,
                    "steps": pad.record_steps(),
                    "evidence": 1,
                }),
            ));
        }
        statements.extend(
            contribution::Statistics {
                project,
                pad,
                outcome,
                observed: &finalized.observed,
                modules: &finalized.modules,
                promoted: remembered.len(),
                now: rfc3339_from_millis(now_ms),
                previous: previous.as_ref(),
            }
            .statements(),
        );
        let updated_record = match record_update {
            Some((id, record)) => {
                let (update, stored) = self.record_update(&id, record, now_ms).await;
                statements.extend(update);
                Some((id, stored))
            }
            None => None,
        };
        // Counts are incremented here, so a retry must not apply it twice: the receipt
        // makes it once-only.
        let write = crate::durable::Write {
            statements,
            key: crate::durable::receipt_key(None, || self.new_id()),
            memory_ids: remembered
                .iter()
                .map(|r| r.id.clone())
                .chain(record_remembered.iter().map(|(r, _)| r.id.clone()))
                .collect(),
        };
        self.commit(write, false).await?;
        report.record = match (record_remembered, updated_record) {
            (Some((r, m)), _) => Some(record_report(r.id, m)),
            (None, Some((id, Some(m)))) => Some(record_report(id, m)),
            _ => None,
        };

        let evidence = candidates.drain(..).map(|c| {
            (
                Some(c.observation.class),
                c.evidence,
                c.observation.evidence_steps,
            )
        });
        report.promoted = remembered
            .into_iter()
            .zip(stored)
            .zip(evidence)
            .map(
                |((r, m), (signal, evidence, evidence_steps))| PromotedMemory {
                    merged: r.merged,
                    superseded: r.superseded,
                    id: r.id,
                    signal,
                    memory_type: m.memory_type,
                    confidence: m.confidence,
                    content: m.content,
                    evidence_steps,
                    evidence,
                    files: m.related_files,
                    contaminated: m.flags.contaminated,
                },
            )
            .collect();
        Ok(report)
    }

    /// `pad` with what the host's file probe says of its files: a file the session created
    /// is cited only if it is still there, and none that is gone.
    fn with_file_presence<'a>(&self, pad: &'a Scratchpad) -> std::borrow::Cow<'a, Scratchpad> {
        let Some(probe) = &self.host.files else {
            return std::borrow::Cow::Borrowed(pad);
        };
        let presence = pad
            .files
            .iter()
            .filter_map(|f| {
                probe
                    .exists(&f.path)
                    .map(|present| (f.path.clone(), present))
            })
            .collect();
        let mut pad = pad.clone();
        pad.set_file_presence(presence);
        std::borrow::Cow::Owned(pad)
    }

    /// The statements that bring the session's record `id` up to `record` (redacted,
    /// re-embedded when an embedder is there), and the record as stored.
    async fn record_update(
        &self,
        id: &str,
        mut record: NewMemory,
        now_ms: i64,
    ) -> (Vec<Statement>, Option<NewMemory>) {
        self.redact(&mut record);
        if record.validate().is_err() {
            return (Vec::new(), None);
        }
        let now = rfc3339_from_millis(now_ms);
        let project = self.project_id();
        let mut statements = vec![
            Statement::with_params(
                sql::UPDATE_RECORD,
                vec![
                    Value::from(id),
                    Value::from(project),
                    Value::from(record.content.as_str()),
                    Value::from(crate::engram::content_key(&record)),
                    json(&record.related_files),
                    json(&record.related_modules),
                    Value::from(record.confidence),
                    Value::from(now.as_str()),
                ],
            ),
            Statement::with_params(
                crate::lifecycle::sql::MERGE_KEYWORD_ROW,
                vec![Value::from(id)],
            ),
            Statement::with_params(
                crate::sql::INSERT_MEMORY_FILES,
                vec![
                    Value::from(project),
                    Value::from(id),
                    json(&record.related_files),
                ],
            ),
            Statement::with_params(
                crate::sql::INSERT_MEMORY_MODULES,
                vec![
                    Value::from(project),
                    Value::from(id),
                    json(&record.related_modules),
                ],
            ),
        ];
        if let Some(embedding) = &self.embedding {
            let text = engram_core::context::memory_text(&record);
            if let Ok(vectors) = embedding.embed(&[text], self.host.clock.as_ref()).await {
                if let Some(vector) = vectors.first() {
                    statements.extend(crate::engram::embedding_statements(
                        id, vector, embedding, &now,
                    ));
                }
            }
        }
        (statements, Some(record))
    }

    /// With an embedder, drops candidates whose content is within
    /// [`NOVELTY_MAX_SIMILARITY`] of a live memory of the same type (one read, one cosine
    /// query per candidate). Without one, or when embedding fails, the key-based novelty
    /// check of the pure pipeline is all there is.
    async fn drop_near_duplicates(
        &self,
        candidates: &mut Vec<engram_observer::Candidate>,
        discarded: &mut Vec<Discarded>,
    ) -> Result<(), EngramError> {
        let Some(embedding) = &self.embedding else {
            return Ok(());
        };
        if candidates.is_empty() {
            return Ok(());
        }
        let texts: Vec<String> = candidates
            .iter()
            .map(|c| engram_core::context::memory_text(&c.memory))
            .collect();
        // The vectors are cached, so storing the survivors does not embed them again.
        let Ok(vectors) = embedding.embed(&texts, self.host.clock.as_ref()).await else {
            return Ok(());
        };
        let statements: Vec<Statement> = candidates
            .iter()
            .zip(&vectors)
            .map(|(c, v)| {
                Statement::with_params(
                    sql::NEAREST_OF_TYPE,
                    vec![
                        Value::Blob(engram_core::vector::to_blob(v)),
                        Value::from(self.project_id()),
                        Value::from(c.memory.memory_type.as_str()),
                        Value::from(embedding.model_id()),
                        Value::Integer(embedding.dims() as i64),
                    ],
                )
            })
            .collect();
        let results = self.db.pipeline(&statements).await?;
        let mut kept = Vec::with_capacity(candidates.len());
        for (candidate, result) in candidates.drain(..).zip(results) {
            let rows = result.map_err(StoreError::Sql)?;
            let nearest = rows
                .rows
                .first()
                .and_then(|r| r.first())
                .and_then(|v| v.as_f64("similarity").ok());
            match nearest {
                Some(similarity) if similarity >= NOVELTY_MAX_SIMILARITY => {
                    discarded.push(Discarded {
                        class: candidate.observation.class,
                        key: candidate.observation.key,
                        reason: format!("novelty: {similarity:.2} cosine to an existing memory"),
                    })
                }
                _ => kept.push(candidate),
            }
        }
        *candidates = kept;
        Ok(())
    }
}

/// The report of a stored session record.
fn record_report(id: String, memory: NewMemory) -> PromotedMemory {
    PromotedMemory {
        id,
        signal: None,
        memory_type: memory.memory_type,
        confidence: memory.confidence,
        content: memory.content,
        evidence_steps: Vec::new(),
        evidence: 1,
        files: memory.related_files,
        contaminated: memory.flags.contaminated,
        merged: false,
        superseded: None,
    }
}

fn json<T: Serialize + ?Sized>(value: &T) -> Value {
    Value::from(serde_json::to_string(value).unwrap_or_else(|_| "[]".to_owned()))
}

fn prior_from(
    counts: &Rows,
    promoted_tags: &Rows,
    module_counts: &Rows,
    rejections: &Rows,
    keys: &[&str],
    tags: &[String],
) -> Result<Prior, EngramError> {
    let mut prior = Prior::default();
    for row in &counts.rows {
        let key = cell(row, 0)?.as_text("key")?.to_owned();
        prior
            .sessions
            .insert(key.clone(), count(cell(row, 1)?.as_i64("sessions")?));
        prior
            .occurrences
            .insert(key, count(cell(row, 2)?.as_i64("occurrences")?));
    }
    let by_tag: HashMap<&str, &str> = tags
        .iter()
        .map(String::as_str)
        .zip(keys.iter().copied())
        .collect();
    for row in &promoted_tags.rows {
        if let Some(key) = by_tag.get(cell(row, 0)?.as_text("tag")?) {
            prior.promoted.insert((*key).to_owned());
        }
    }
    for row in &module_counts.rows {
        prior.module_sessions.insert(
            cell(row, 0)?.as_text("module")?.to_owned(),
            count(cell(row, 1)?.as_i64("count")?),
        );
    }
    for row in &rejections.rows {
        let Some(class) = cell(row, 0)?.as_opt_text("class")? else {
            continue;
        };
        let total = cell(row, 1)?.as_i64("count")?;
        let forgotten = cell(row, 2)?.as_f64("forgotten")?;
        // Only a class with enough reviewed memories has a measured false-positive rate.
        if total >= 5 {
            if let Some(class) = SignalClass::ALL.into_iter().find(|c| c.as_str() == class) {
                prior
                    .false_positive_rate
                    .insert(class, forgotten / total as f64);
            }
        }
    }
    Ok(prior)
}

fn cell(row: &[Value], index: usize) -> Result<&Value, EngramError> {
    row.get(index).ok_or_else(|| {
        StoreError::Decode(format!("observer statistics row has no column {index}")).into()
    })
}

fn count(value: i64) -> u32 {
    u32::try_from(value.max(0)).unwrap_or(u32::MAX)
}

/// One LLM call that rewrites the templated memories as short, specific sentences. The
/// answer must be a JSON array of strings, one per memory in order; anything else keeps the
/// templates. Returns whether the rewrite was used.
async fn rewrite_with_llm(llm: &dyn crate::Generate, memories: &mut [NewMemory]) -> bool {
    let mut prompt = String::from(
        "Rewrite each observation about a codebase as one or two specific sentences a coding agent \
can act on. Keep every file name, command and error text. Answer with only a JSON array of \
strings, one per observation, in order.\n\n",
    );
    for (i, m) in memories.iter().enumerate() {
        prompt.push_str(&format!(
            "{}. [{}] {}\n",
            i + 1,
            m.memory_type.as_str(),
            m.content
        ));
    }
    let Ok(answer) = llm.generate(&prompt, 120 * memories.len() as u32).await else {
        return false;
    };
    let start = answer.find('[');
    let end = answer.rfind(']');
    let Some(rewritten) = start
        .zip(end)
        .filter(|(s, e)| s < e)
        .and_then(|(s, e)| serde_json::from_str::<Vec<String>>(&answer[s..=e]).ok())
    else {
        return false;
    };
    if rewritten.len() != memories.len() || rewritten.iter().any(|t| t.trim().is_empty()) {
        return false;
    }
    for (memory, text) in memories.iter_mut().zip(rewritten) {
        memory.content = text.trim().chars().take(2000).collect();
    }
    true
}

/// Writes what a new observer memory stands on into its `created` history entry: the
/// signal, the session and the steps that show it (as `after`, JSON), so a person can trace
/// it back. Merged memories keep their history as it is. Runs after the inserts, in the same
/// transaction.
fn evidence_statements(
    project: &str,
    session: &str,
    remembered: &[crate::Remembered],
    candidates: &[engram_observer::Candidate],
) -> Vec<Statement> {
    remembered
        .iter()
        .zip(candidates)
        .filter(|(r, _)| !r.merged)
        .map(|(r, c)| {
            let evidence = serde_json::json!({
                "signal": c.observation.class.as_str(),
                "session": session,
                "steps": c.observation.evidence_steps,
                "evidence": c.evidence,
            });
            evidence_statement(&r.id, project, evidence)
        })
        .collect()
}

/// The statement writing `evidence` into memory `id`'s `created` history entry.
fn evidence_statement(id: &str, project: &str, evidence: serde_json::Value) -> Statement {
    Statement::with_params(
        sql::SET_CREATED_EVIDENCE,
        vec![
            Value::from(project),
            Value::from(id),
            Value::from(evidence.to_string()),
        ],
    )
}
