//! The engram API.

use engram_core::secrets::SecretScanner;
use engram_core::time::rfc3339_from_millis;
use engram_core::{context, vector, ValidationError};
use engram_core::{Memory, NewMemory};
use engram_store::{migrate, Database, Statement, StoreError, Value};
use serde::Serialize;

use crate::breaker::Circuit;
use crate::embedding::{EmbedFailure, Embedding};
use crate::lifecycle::consolidate::{self, Placement};
use crate::row::memory_from_row;
use crate::vector_index::VectorIndex;
use crate::{sql, EngramError, Host};
use engram_host::{Embed, Generate, Rerank};

/// Settings for one engram instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngramConfig {
    /// The project every memory of this instance belongs to.
    pub project_id: String,
}

impl Default for EngramConfig {
    fn default() -> Self {
        EngramConfig {
            project_id: "default".to_owned(),
        }
    }
}

/// What [`Engram::remember`] stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Remembered {
    /// The new memory's id.
    pub id: String,
    /// Kinds of secrets that were redacted from the content, in text order.
    pub redacted: Vec<String>,
    /// True when the secret scanner could not run (the memory is flagged for audit).
    pub secret_scan_skipped: bool,
    /// The model that embedded it; `None` when there is no embedder or embedding failed
    /// (the memory is then keyword-searchable and queued for [`Engram::embed_pending`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding_model: Option<String>,
    /// Why embedding failed, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding_error: Option<String>,
    /// Not stored yet: the database is out of reach and the write waits in the buffer
    /// ([`Engram::write_status`]); it keeps this id when it is flushed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
    /// Stored before, by a write with the same idempotency key: nothing new was stored
    /// and `id` is the first write's.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
    /// It said what a live memory of its type already says: nothing new was stored, `id`
    /// is that memory's, and its occurrences, confidence, files, tags and provenance took
    /// this write in (the wording is kept in its history).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub merged: bool,
    /// The live memory it replaced (retired, pointing to this one), when it contradicted
    /// one about the same subject.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded: Option<String>,
    /// A live memory it contradicts that is trusted more (a person's word, or pinned):
    /// both are kept, and this one waits for review.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflicts_with: Option<String>,
}

/// Progress of [`Engram::embed_pending`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbedProgress {
    /// Memories embedded by this call.
    pub embedded: u64,
    /// Memories still without a vector of the current model.
    pub remaining: u64,
}

/// The embedder's state, for hosts to show (`engram status`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddingStatus {
    /// The current model's id.
    pub model: String,
    /// Its vector length.
    pub dims: usize,
    /// The circuit breaker's state.
    pub circuit: Circuit,
    /// Live memories without a vector of this model (keyword-only until embedded).
    pub pending: u64,
}

/// Long-term memory for one project on one database.
pub struct Engram<D> {
    pub(crate) db: D,
    pub(crate) config: EngramConfig,
    pub(crate) host: Host,
    pub(crate) scanner: Option<&'static SecretScanner>,
    pub(crate) embedding: Option<Embedding>,
    pub(crate) vector_index: Option<VectorIndex>,
    /// The current model's vectors of this project, kept in memory for the dense path.
    pub(crate) resident: Option<std::cell::RefCell<crate::retrieve::Resident>>,
    /// The keyword table's postings, kept in memory for the keyword path.
    pub(crate) resident_keywords: Option<std::cell::RefCell<crate::retrieve::ResidentKeywords>>,
    pub(crate) reranker: Option<Box<dyn Rerank>>,
    pub(crate) llm: Option<Box<dyn Generate>>,
    /// Retries, receipts and the write buffer.
    pub(crate) durability: crate::durable::Durability,
    /// Uses of memories handed out and stale marks, written with the next write.
    pub(crate) behind: crate::lifecycle::WriteBehind,
    /// The code graph as of the last index call, reused while the stored generation
    /// matches.
    #[cfg(feature = "code")]
    pub(crate) code: std::cell::RefCell<Option<crate::code::CodeState>>,
    /// A parser with each language's compiled queries (compiling them costs more than
    /// parsing a file).
    #[cfg(feature = "code")]
    pub(crate) outliner: std::cell::RefCell<Option<engram_code::Outliner>>,
}

impl<D: Database> Engram<D> {
    /// Opens engram on `db`, applying schema migrations first.
    pub async fn open(db: D, config: EngramConfig, host: Host) -> Result<Self, EngramError> {
        if config.project_id.trim().is_empty() {
            return Err(
                engram_core::ValidationError::field("projectId", "must not be empty").into(),
            );
        }
        let now = rfc3339_from_millis(host.clock.now_millis());
        migrate(&db, &now).await?;
        Ok(Engram {
            db,
            config,
            host,
            // A scanner that cannot be built must not block writes: memories are
            // then stored flagged `secret_scan_skipped`.
            scanner: SecretScanner::shared().ok(),
            embedding: None,
            vector_index: None,
            resident: None,
            resident_keywords: None,
            reranker: None,
            llm: None,
            durability: crate::durable::Durability::default(),
            behind: crate::lifecycle::WriteBehind::default(),
            #[cfg(feature = "code")]
            code: std::cell::RefCell::new(None),
            #[cfg(feature = "code")]
            outliner: std::cell::RefCell::new(None),
        })
    }

    /// Gives searches a reranker (a cross-encoder or a hosted rerank API): it scores the
    /// best 20 candidates after scoring, and its ranks are fused with the pipeline's
    /// ([`engram_retrieval::rerank::fuse_reranked`]). On failure the order stays, with a
    /// warning.
    pub fn with_reranker(mut self, reranker: Box<dyn Rerank>) -> Self {
        self.reranker = Some(reranker);
        self
    }

    /// Gives searches the host's LLM for HyDE: when fewer than 3 results of an explicit
    /// search reach relevance 0.75, it writes a hypothetical memory whose vector drives a
    /// second dense search (one more round trip). Never used for auto-inject.
    pub fn with_llm(mut self, llm: Box<dyn Generate>) -> Self {
        self.llm = Some(llm);
        self
    }

    /// Gives this instance an embedder: new memories get vectors, searches use the dense
    /// path. Memories stored before (or while the embedder fails) are embedded by
    /// [`Engram::embed_pending`].
    ///
    /// Calls go through a circuit breaker: after 3 consecutive failures the embedder is
    /// left alone for 30 s (memories are stored keyword-searchable and queued, searches are
    /// keyword-only), then one trial call decides. Recent vectors are cached in memory by
    /// sha256(text:model:dims) for 7 days.
    pub fn with_embedder(mut self, embedder: Box<dyn Embed>) -> Self {
        self.embedding = Some(Embedding::new(embedder));
        self.vector_index = None;
        self.resident = None;
        self
    }

    /// Uses the libSQL vector index (DiskANN) for the dense path when the database has it
    /// (libSQL servers, Turso, embedded libSQL files): creates the current model's index
    /// table, copies in its existing vectors, and keeps it up to date from then on. Returns
    /// `false`, changing nothing, on engines without it (plain SQLite); searches then scan
    /// all vectors with `vector_distance_cos`, which is exact and fine for thousands of
    /// memories.
    ///
    /// Searches consult the index once the project has [`crate::VECTOR_INDEX_MIN_MEMORIES`]
    /// (3,000) live memories; below that the
    /// exact scan, which reads only the project's vectors, is faster (docs/search-internals.md
    /// has the figures), so the index is kept current but not searched. [`Engram::enable_vector_index_from`]
    /// sets another threshold.
    pub async fn enable_vector_index(&mut self) -> Result<bool, EngramError> {
        self.enable_vector_index_from(crate::VECTOR_INDEX_MIN_MEMORIES)
            .await
    }

    /// [`Engram::enable_vector_index`], with searches consulting the index once the
    /// project has `min_memories` live memories; `0` consults it always.
    pub async fn enable_vector_index_from(
        &mut self,
        min_memories: u64,
    ) -> Result<bool, EngramError> {
        let Some(embedding) = &self.embedding else {
            return Err(ValidationError::field("embedder", "no embedder configured").into());
        };
        let index = VectorIndex::for_model(embedding.model_id(), embedding.dims(), min_memories);
        match self
            .db
            .transaction(&index.create(embedding.model_id()))
            .await
        {
            Ok(_) => {
                self.vector_index = Some(index);
                Ok(true)
            }
            Err(StoreError::Sql(_)) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether dense searches use the libSQL vector index.
    pub fn uses_vector_index(&self) -> bool {
        self.vector_index.is_some() && self.resident.is_none()
    }

    /// Keeps this project's vectors of the current model in memory, for long-lived hosts
    /// (a server, an editor, a Node process): a dense search then ranks a matrix in
    /// process (an order of magnitude cheaper per vector than in SQL) and passes the best ids into
    /// its one statement. That statement re-scores them, and every memory whose vector
    /// changed since the set last caught up, from the stored vectors, applies the filters,
    /// and falls back to the exact scan if too few of them still rank above the rest.
    /// Results are the exact scan's, in one round trip whatever other writers did.
    ///
    /// The set fills from the change log that the same statement returns (up to 4,096
    /// vectors per search, 1.5 KB each at 384 dimensions; searches use the exact scan until
    /// it is in, unless [`Engram::load_resident_vectors`] loaded it ahead) and stays
    /// current with every writer's changes. Costs `2 × dims` bytes per
    /// memory. Takes precedence over
    /// [`Engram::enable_vector_index`]. Needs an embedder; a later
    /// [`Engram::with_embedder`] drops the set.
    pub fn enable_resident_vectors(&mut self) -> Result<(), EngramError> {
        let Some(embedding) = &self.embedding else {
            return Err(ValidationError::field("embedder", "no embedder configured").into());
        };
        self.resident = Some(std::cell::RefCell::new(crate::retrieve::Resident::new(
            embedding.dims(),
        )));
        Ok(())
    }

    /// Whether dense searches rank vectors kept in memory.
    pub fn uses_resident_vectors(&self) -> bool {
        self.resident.is_some()
    }

    /// How many vectors are kept in memory (`None` without resident vectors); the set
    /// fills at the first dense searches, or at once with [`Engram::load_resident_vectors`].
    #[cfg(feature = "test-support")]
    pub fn resident_vector_count(&self) -> Option<usize> {
        self.resident.as_ref().map(|r| r.borrow().set.len())
    }

    /// Keeps the keyword table's postings in memory, for long-lived hosts: a keyword search
    /// then ranks its matches in process, with FTS5's own BM25 over the same terms (the
    /// index reproduces FTS5's tokenizer), and passes the best into its one statement,
    /// which only fetches and filters them. FTS5 ranks every match of a query, with a
    /// nested lookup per match; at 10,000 memories that was over half of a keyword search.
    /// Results are the same as without the index: the statement takes the pick only when
    /// no memory changed after the index's position, and FTS5 answers otherwise and for
    /// query tokens other than plain ASCII letters and digits.
    ///
    /// The index fills from the memory change log that the same statement returns (up to
    /// 4,096 memories per search; FTS5 answers until it is in, unless
    /// [`Engram::load_resident_keywords`] loaded it ahead) and stays current with every
    /// writer's changes. It holds every project's memories in the database, since BM25's
    /// statistics are the table's: about the size of the memories' text.
    pub fn enable_resident_keywords(&mut self) {
        self.resident_keywords = Some(std::cell::RefCell::new(
            crate::retrieve::ResidentKeywords::default(),
        ));
    }

    /// How many memories the resident keywords hold (`None` without them).
    #[cfg(feature = "test-support")]
    pub fn resident_keyword_count(&self) -> Option<usize> {
        self.resident_keywords
            .as_ref()
            .map(|r| r.borrow().index.len())
    }

    /// The embedder's model id, if there is one.
    pub fn embedding_model(&self) -> Option<&str> {
        self.embedding.as_ref().map(|e| e.model_id())
    }

    /// The embedder's model, circuit state and backlog; `None` without an embedder.
    pub async fn embedding_status(&self) -> Result<Option<EmbeddingStatus>, EngramError> {
        let Some(embedding) = &self.embedding else {
            return Ok(None);
        };
        Ok(Some(EmbeddingStatus {
            model: embedding.model_id().to_owned(),
            dims: embedding.dims(),
            circuit: embedding.circuit(self.host.clock.now_millis()),
            pending: self.pending_count(embedding.model_id()).await?,
        }))
    }

    /// The database this instance stores into.
    pub fn database(&self) -> &D {
        &self.db
    }

    /// The project id.
    pub fn project_id(&self) -> &str {
        &self.config.project_id
    }

    /// Sets how writes are retried and buffered (the default is
    /// [`RetryPolicy::default`](crate::RetryPolicy)).
    pub fn with_retry_policy(mut self, policy: crate::RetryPolicy) -> Self {
        self.durability = crate::durable::Durability::new(policy);
        self
    }

    /// Validates `memory`, redacts secrets from it and stores it with its keyword index
    /// entry in one transaction. Returns the new id; with an idempotency key already used
    /// in this project, the first write's id (`replayed`, nothing stored); while the
    /// database is out of reach, `pending` (see [`Engram::write_status`]).
    pub async fn remember(&self, memory: NewMemory) -> Result<Remembered, EngramError> {
        let mut attempt = 0;
        loop {
            match self.remember_once(memory.clone()).await {
                // A parallel writer stored the same text between this write's read and
                // its commit; read again, and this write merges into that memory.
                Err(error) if is_content_key_conflict(&error) && attempt < CONFLICT_RETRIES => {
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    async fn remember_once(&self, memory: NewMemory) -> Result<Remembered, EngramError> {
        let (statements, remembered, stored) = self.prepare_memories(vec![memory]).await?;
        let mut remembered = remembered.into_iter().next().ok_or_else(|| {
            EngramError::from(ValidationError::field("memory", "nothing to store"))
        })?;
        // The key as stored is the redacted one, like every other text of the write.
        let caller_key = stored.first().and_then(|m| m.idempotency_key.as_deref());
        let write = crate::durable::Write {
            statements,
            key: crate::durable::receipt_key(caller_key, || self.new_id()),
            memory_ids: vec![remembered.id.clone()],
        };
        match self.commit(write, true).await? {
            crate::durable::Committed::Applied(_) => {}
            crate::durable::Committed::Pending => remembered.pending = true,
            crate::durable::Committed::Replayed {
                ids,
                before_this_call,
            } => {
                if let Some(first) = ids.into_iter().next() {
                    remembered.replayed = remembered.id != first || before_this_call;
                    if remembered.replayed {
                        // Nothing of this call was stored: it merged or replaced nothing.
                        remembered.merged = false;
                        remembered.superseded = None;
                        remembered.conflicts_with = None;
                    }
                    remembered.id = first;
                }
            }
        }
        Ok(remembered)
    }

    /// Validates, redacts and embeds `memories` (in one embedder batch) and returns the
    /// statements that store them, for callers that write them in a larger transaction.
    pub(crate) async fn prepare_memories(
        &self,
        memories: Vec<NewMemory>,
    ) -> Result<(Vec<Statement>, Vec<Remembered>, Vec<NewMemory>), EngramError> {
        let forced = vec![None; memories.len()];
        self.prepare_placed(memories, forced).await
    }

    /// [`Engram::prepare_memories`], with the placement of some memories decided by the
    /// caller (`Some`) instead of judged against the live ones.
    pub(crate) async fn prepare_placed(
        &self,
        memories: Vec<NewMemory>,
        forced: Vec<Option<Placement>>,
    ) -> Result<(Vec<Statement>, Vec<Remembered>, Vec<NewMemory>), EngramError> {
        let mut prepared = Vec::with_capacity(memories.len());
        for mut memory in memories {
            // Checked as given (so no oversized text is scanned) and again as stored:
            // redaction markers can make a text longer than the limit.
            memory.validate()?;
            let (redacted, secret_scan_skipped) = self.redact(&mut memory);
            memory.validate()?;
            memory.flags.secret_scan_skipped |= secret_scan_skipped;
            prepared.push((memory, redacted, secret_scan_skipped));
        }
        let now = rfc3339_from_millis(self.host.clock.now_millis());
        let (mut vectors, embedding_error) = match &self.embedding {
            Some(embedding) if !prepared.is_empty() => {
                let texts: Vec<String> = prepared
                    .iter()
                    .map(|(m, _, _)| context::memory_text(m))
                    .collect();
                match embedding.embed(&texts, self.host.clock.as_ref()).await {
                    Ok(vectors) => (vectors.into_iter().map(Some).collect(), None),
                    Err(e) => (Vec::new(), Some(format!("{e}; queued for embedding"))),
                }
            }
            _ => (Vec::new(), None),
        };
        vectors.resize(prepared.len(), None);
        let ids: Vec<String> = prepared.iter().map(|_| self.new_id()).collect();
        let news: Vec<NewMemory> = prepared.iter().map(|(m, _, _)| m.clone()).collect();
        let judged = self.place(&news, &vectors, &ids).await?;
        let placements: Vec<Placement> = judged
            .into_iter()
            .zip(forced)
            .map(|(judged, forced)| forced.unwrap_or(judged))
            .collect();
        let mut statements = Vec::new();
        let mut remembered = Vec::with_capacity(prepared.len());
        let mut stored = Vec::with_capacity(prepared.len());
        for ((((mut memory, redacted, secret_scan_skipped), vector), placement), id) in
            prepared.into_iter().zip(vectors).zip(placements).zip(ids)
        {
            let mut answer = Remembered {
                id,
                redacted,
                secret_scan_skipped,
                embedding_model: None,
                embedding_error: embedding_error.clone(),
                pending: false,
                replayed: false,
                merged: false,
                superseded: None,
                conflicts_with: None,
            };
            statements.extend(self.placed_statements(
                &mut memory,
                vector,
                &placement,
                &mut answer,
                &now,
            ));
            remembered.push(answer);
            stored.push(memory);
        }
        Ok((statements, remembered, stored))
    }

    /// The statements that store `memory` where consolidation placed it (new, merged,
    /// superseding or in conflict), recording the outcome in `answer`.
    fn placed_statements(
        &self,
        memory: &mut NewMemory,
        vector: Option<Vec<f32>>,
        placement: &Placement,
        answer: &mut Remembered,
        now: &str,
    ) -> Vec<Statement> {
        let project = self.config.project_id.as_str();
        let mut statements = Vec::new();
        if let Placement::Merge {
            id,
            confidence,
            occurrences,
            reason,
            adopt_wording,
        } = placement
        {
            statements.extend(consolidate::merge_statements(
                project,
                memory,
                (id, *confidence, *occurrences, reason),
                *adopt_wording,
                now,
            ));
            // The merged memory's vector follows its new wording.
            if let (true, Some(v), Some(embedding)) = (*adopt_wording, &vector, &self.embedding) {
                statements.extend(embedding_statements(id, v, embedding, now));
            }
            answer.id = id.clone();
            answer.merged = true;
            answer.embedding_error = None;
            return statements;
        }
        consolidate::mark_new(memory, placement);
        statements.extend(self.insert_statements(&answer.id, memory, now));
        answer.embedding_model = match (vector, &self.embedding) {
            (Some(v), Some(embedding)) => {
                statements.extend(embedding_statements(&answer.id, &v, embedding, now));
                Some(embedding.model_id().to_owned())
            }
            _ => None,
        };
        match placement {
            Placement::Supersede { old, change } => {
                statements.extend(consolidate::supersede_statements(
                    project,
                    old,
                    change,
                    &answer.id,
                    memory.source.as_str(),
                    now,
                ));
                answer.superseded = Some(old.id.clone());
            }
            Placement::Conflict { old, change } => {
                statements.push(consolidate::history(
                    consolidate::HistoryRecord {
                        memory_id: &answer.id,
                        action: engram_lifecycle::HistoryAction::Conflicts,
                        before: None,
                        after: None,
                        reason: &format!(
                            "contradicts a memory trusted more, kept for review: {}",
                            change.describe()
                        ),
                        actor: memory.source.as_str(),
                        related_id: Some(&old.id),
                    },
                    project,
                    now,
                ));
                answer.conflicts_with = Some(old.id.clone());
            }
            _ => {}
        }
        statements
    }

    /// The statements that store a new memory with its keyword row, file and module
    /// links and its `created` history entry (its vector is written apart).
    fn insert_statements(&self, id: &str, memory: &NewMemory, now: &str) -> Vec<Statement> {
        let project = self.config.project_id.as_str();
        let mut statements = vec![
            Statement::with_params(sql::INSERT_MEMORY, insert_params(id, project, now, memory)),
            Statement::with_params(
                sql::INSERT_FTS,
                vec![
                    Value::from(id),
                    Value::from(memory.content.as_str()),
                    Value::from(memory.tags.join(" ")),
                    Value::from(memory.related_files.join(" ")),
                    Value::from(project),
                ],
            ),
            Statement::with_params(
                sql::INSERT_KEYWORD_ROW,
                vec![Value::from(id), Value::from(project)],
            ),
        ];
        // The memory under each of its files and modules, for the searches filtered by
        // them (and the graph path, for files).
        for (insert, list) in [
            (sql::INSERT_MEMORY_FILES, &memory.related_files),
            (sql::INSERT_MEMORY_MODULES, &memory.related_modules),
        ] {
            if !list.is_empty() {
                statements.push(Statement::with_params(
                    insert,
                    vec![Value::from(project), Value::from(id), json_text(list)],
                ));
            }
        }
        statements.push(consolidate::history(
            consolidate::HistoryRecord {
                memory_id: id,
                action: engram_lifecycle::HistoryAction::Created,
                before: None,
                after: None,
                reason: "stored",
                actor: memory.source.as_str(),
                related_id: None,
            },
            project,
            now,
        ));
        statements
    }

    /// Redacts secrets from every text field of `memory`; returns the kinds found and
    /// whether the scanner could not run.
    pub(crate) fn redact(&self, memory: &mut NewMemory) -> (Vec<String>, bool) {
        let Some(scanner) = self.scanner else {
            return (Vec::new(), true);
        };
        let kinds = scanner.redact_memory(memory);
        (kinds.into_iter().map(str::to_owned).collect(), false)
    }

    /// Parses `json` as a [`NewMemory`] (naming the failing field) and stores it: the write
    /// of an agent or a remote caller, so it may not set what only a person may
    /// ([`NewMemory::person_only_fields`]: `forbidden`, each field named).
    pub async fn remember_json(&self, json: &str) -> Result<Remembered, EngramError> {
        let memory = NewMemory::from_json(json)?;
        let fields = memory.person_only_fields();
        if !fields.is_empty() {
            let problem = "is set only by a person, through engram's review or teach operations";
            let violations = fields
                .into_iter()
                .map(|field| engram_core::Violation {
                    field: field.to_owned(),
                    problem: problem.to_owned(),
                })
                .collect();
            return Err(EngramError::Forbidden(ValidationError { violations }));
        }
        self.remember(memory).await
    }

    /// The live memory with this id (or a unique prefix of it, at least 4 characters),
    /// if any (forgotten memories are not returned).
    pub async fn get(&self, id: &str) -> Result<Option<Memory>, EngramError> {
        let Some(id) = self.full_id(id).await? else {
            return Ok(None);
        };
        let id = id.as_str();
        let statement = Statement::with_params(
            sql::select_memory(),
            vec![
                Value::from(id),
                Value::from(self.config.project_id.as_str()),
            ],
        );
        let rows = self.single(statement).await?;
        rows.rows
            .first()
            .map(|row| memory_from_row(row))
            .transpose()
            .map_err(Into::into)
    }

    /// Soft-deletes a memory: it is never returned again and leaves the keyword index; the
    /// row stays for the pruning grace period. Returns whether a live memory was forgotten.
    pub async fn forget(&self, id: &str) -> Result<bool, EngramError> {
        let Some(id) = self.full_id(id).await? else {
            return Ok(false);
        };
        let id = id.as_str();
        // Forgetting corrects it: its uses since the last write do not count.
        self.behind.discard(id);
        let now = rfc3339_from_millis(self.host.clock.now_millis());
        let write = crate::durable::Write {
            statements: self.forget_statements(id, &now).to_vec(),
            key: crate::durable::receipt_key(None, || self.new_id()),
            memory_ids: vec![id.to_owned()],
        };
        Ok(match self.commit(write, false).await? {
            crate::durable::Committed::Applied(results) => {
                results.first().is_some_and(|r| r.affected_row_count == 1)
            }
            // An earlier attempt was applied and its answer lost: it forgot the memory
            // if one was live, which is what this call reports.
            crate::durable::Committed::Replayed { .. } => self.get(id).await?.is_none(),
            crate::durable::Committed::Pending => false,
        })
    }

    /// The statements that forget memory `id` at `now`, for a transaction: the first
    /// affects one row if a live memory of this project was forgotten. The keyword row goes
    /// by its rowid (one seek; FTS5 cannot look up its `memory_id` column).
    pub(crate) fn forget_statements(&self, id: &str, now: &str) -> [Statement; 4] {
        self.retire_statements(
            id,
            now,
            engram_lifecycle::HistoryAction::Forgotten,
            "forgotten on request",
            "user",
        )
    }

    /// The statements that retire (soft-delete) live memory `id` at `now` with a history
    /// entry saying why and by whom; the first affects one row if it was live.
    pub(crate) fn retire_statements(
        &self,
        id: &str,
        now: &str,
        action: engram_lifecycle::HistoryAction,
        reason: &str,
        actor: &str,
    ) -> [Statement; 4] {
        [
            Statement::with_params(
                sql::FORGET_MEMORY,
                vec![
                    Value::from(id),
                    Value::from(self.config.project_id.as_str()),
                    Value::from(now),
                ],
            ),
            Statement::with_params(
                // Only drop the index row if this project's memory was just forgotten.
                format!("{} AND changes() = 1", sql::DELETE_FTS),
                vec![Value::from(id)],
            ),
            Statement::with_params(sql::DELETE_KEYWORD_ROW, vec![Value::from(id)]),
            // Written only when this call forgot it: retired at this very time.
            Statement::with_params(
                format!(
                    "{} AND EXISTS (SELECT 1 FROM memories WHERE id = ?1 AND deprecated = 1 \
AND deprecated_at = ?9 AND superseded_by IS NULL)",
                    crate::lifecycle::INSERT_HISTORY
                ),
                vec![
                    Value::from(id),
                    Value::from(self.config.project_id.as_str()),
                    Value::from(action.as_str()),
                    Value::from(r#"{"deprecated":false}"#),
                    Value::from(r#"{"deprecated":true}"#),
                    Value::from(reason),
                    Value::from(actor),
                    Value::Null,
                    Value::from(now),
                ],
            ),
        ]
    }

    /// Embeds up to `batch` live memories that have no vector of the current model (new
    /// ones whose embedding failed, or all of them after a model switch) and reports what
    /// is left. Progress lives in the database, so the job resumes after a restart; until
    /// it finishes, searches use the vectors of the current model and keywords for the rest.
    pub async fn embed_pending(&self, batch: u32) -> Result<EmbedProgress, EngramError> {
        let Some(embedder) = self.embedding.as_ref() else {
            return Err(ValidationError::field("embedder", "no embedder configured").into());
        };
        let project = Value::from(self.config.project_id.as_str());
        let model = Value::from(embedder.model_id());
        let pending = self
            .single(Statement::with_params(
                sql::pending_embeddings(),
                vec![project, model, Value::Integer(i64::from(batch.max(1)))],
            ))
            .await?;
        let memories: Vec<Memory> = pending
            .rows
            .iter()
            .map(|row| memory_from_row(row))
            .collect::<Result<_, _>>()?;
        let mut embedded = 0;
        if !memories.is_empty() {
            let texts: Vec<String> = memories.iter().map(context::stored_memory_text).collect();
            let vectors = embedder
                .embed(&texts, self.host.clock.as_ref())
                .await
                .map_err(|failure| match failure {
                    EmbedFailure::CircuitOpen { retry_at } => EngramError::EmbedderUnavailable {
                        reason: failure.to_string(),
                        retry_at: Some(retry_at),
                    },
                    EmbedFailure::Failed(reason) => EngramError::EmbedderUnavailable {
                        reason,
                        retry_at: None,
                    },
                })?;
            let now = rfc3339_from_millis(self.host.clock.now_millis());
            let statements: Vec<Statement> = memories
                .iter()
                .zip(&vectors)
                .flat_map(|(m, v)| embedding_statements(&m.id, v, embedder, &now))
                .collect();
            self.db.transaction(&statements).await?;
            embedded = memories.len() as u64;
        }
        Ok(EmbedProgress {
            embedded,
            remaining: self.pending_count(embedder.model_id()).await?,
        })
    }

    /// Live memories of this project without a vector of `model`.
    async fn pending_count(&self, model: &str) -> Result<u64, EngramError> {
        let rows = self
            .single(Statement::with_params(
                sql::COUNT_PENDING,
                vec![
                    Value::from(self.config.project_id.as_str()),
                    Value::from(model),
                ],
            ))
            .await?;
        let count = rows
            .rows
            .first()
            .and_then(|r| r.first())
            .map_or(Ok(0), |v| v.as_i64("pending count"))?;
        Ok(count.max(0) as u64)
    }

    pub(crate) async fn single(
        &self,
        statement: Statement,
    ) -> Result<engram_store::Rows, EngramError> {
        let result = self
            .db
            .pipeline(std::slice::from_ref(&statement))
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| StoreError::Protocol("no result for the statement".into()))?;
        Ok(result.map_err(StoreError::Sql)?)
    }

    pub(crate) fn new_id(&self) -> String {
        let mut bytes = [0u8; 16];
        self.host.entropy.fill(&mut bytes);
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .hyphenated()
            .to_string()
    }
}

/// Times a write that lost the race to store a text is read and judged again.
pub(crate) const CONFLICT_RETRIES: u32 = 3;

/// Whether `error` is the database refusing a second live memory with the same content
/// key (a parallel writer stored the same text first).
pub(crate) fn is_content_key_conflict(error: &EngramError) -> bool {
    matches!(error, EngramError::Store(StoreError::Sql(e))
        if e.message.contains("UNIQUE") && e.message.contains("content_key"))
}

fn json_text<T: Serialize>(value: &T) -> Value {
    // Serializing these plain data types cannot fail.
    Value::from(serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned()))
}

fn insert_params(id: &str, project_id: &str, now: &str, m: &NewMemory) -> Vec<Value> {
    let chunk = m.chunk.as_ref();
    vec![
        Value::from(id),
        Value::from(project_id),
        Value::from(m.memory_type.as_str()),
        Value::from(m.content.as_str()),
        Value::from(m.confidence),
        json_text(&m.tags),
        json_text(&m.related_files),
        json_text(&m.related_modules),
        Value::from(now),
        Value::from(now),
        Value::Integer(0),
        Value::from(m.scope.as_str()),
        Value::from(m.visibility.as_str()),
        Value::from(m.phase.map(|p| p.as_str())),
        Value::from(m.source.as_str()),
        Value::from(m.session_id.clone()),
        Value::from(m.commit_sha.clone()),
        json_text(&m.provenance_session_ids),
        m.work_unit_ref.as_ref().map_or(Value::Null, json_text),
        Value::from(m.methodology.clone()),
        json_text(&m.relations),
        Value::from(m.effective_half_life_days()),
        Value::from(m.flags.needs_review),
        Value::from(m.flags.user_verified),
        Value::from(m.flags.pinned),
        Value::from(m.flags.contaminated),
        Value::from(m.flags.secret_scan_skipped),
        Value::from(m.citation_text.clone()),
        Value::from(chunk.map(|c| c.chunk_type.clone())),
        Value::from(chunk.map(|c| c.start_line)),
        Value::from(chunk.map(|c| c.end_line)),
        Value::from(chunk.and_then(|c| c.context_prefix.clone())),
        Value::from(m.target_node_id.clone()),
        Value::from(content_key(m)),
    ]
}

/// The key of a memory's normalized text (with its files when the text names code, and its
/// target node), `None`
/// for code chunks (their text is code, not a claim to merge). The visibility is part of
/// it: a personal memory never merges into a shared one.
pub(crate) fn content_key(m: &NewMemory) -> Option<String> {
    m.chunk.is_none().then(|| {
        engram_lifecycle::text::memory_key(
            &format!("{} {}", m.visibility.as_str(), m.content),
            &m.related_files,
            m.target_node_id.as_deref(),
        )
    })
}

/// The statements that store a memory's vector and record its model.
pub(crate) fn embedding_statements(
    id: &str,
    vector: &[f32],
    embedder: &Embedding,
    now: &str,
) -> Vec<Statement> {
    // The vector index, where there is one, follows from the table's triggers.
    vec![
        Statement::with_params(
            sql::UPSERT_EMBEDDING,
            vec![
                Value::from(id),
                Value::Blob(vector::to_blob(vector)),
                Value::from(embedder.model_id()),
                Value::Integer(embedder.dims() as i64),
                Value::from(now),
            ],
        ),
        Statement::with_params(
            sql::SET_EMBEDDING_MODEL,
            vec![Value::from(id), Value::from(embedder.model_id())],
        ),
    ]
}
