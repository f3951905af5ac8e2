//! [`Engram::search`]: the retrieval pipeline on a database.
//!
//! One round trip fetches the keyword, dense and graph candidates and the file adjacency
//! among them — for one search or, with [`Engram::search_many`], for several; ranking is
//! `engram-retrieval`'s pure functions. Only HyDE (search intent, with a host LLM, when
//! results are weak) makes a second round trip.

mod batch;
mod keywords;
#[cfg(feature = "test-support")]
mod plan;
pub(crate) mod query;
mod resident;
mod sql;
mod superseded;

/// What a candidate statement's answer updates besides the candidates: the resident sets
/// it picked from.
struct CandidateFetch {
    dense_pick: bool,
    keyword_pick: bool,
}

use engram_core::context::stored_memory_text;
use engram_core::vector;
use engram_retrieval::boost::FileAdjacency;
use engram_retrieval::fusion::CandidatePool;
use engram_retrieval::rerank::fuse_reranked;
use engram_retrieval::{Candidate, PathKind};
use engram_store::{Database, Rows, Statement, StoreError, Value};

pub(crate) use self::keywords::ResidentKeywords;
use self::keywords::{IndexedText, KeywordPick, MatchTerms, TextChange};
use self::query::{SearchIntent, SearchMode, SearchQuery, SearchResponse};
pub(crate) use self::resident::Resident;
use self::resident::{DensePick, PickSize, VectorChange};
use self::sql::{param, DenseSource, GraphInputs, Narrow, Paths};
use crate::capability::{hyde_prompt, HYDE_MAX_TOKENS, RERANK_CANDIDATES};
use crate::embedding::Embedding;
use crate::row::memory_from_row;
use crate::{Engram, EngramError};
use engram_host::Generate;

/// The pool HyDE ranks again: every path hit of the ranked candidates, and the dense hits
/// of the hypothetical answer's `extra` pool beside them.
fn with_extra_dense(ranked: Vec<Candidate>, extra: CandidatePool) -> CandidatePool {
    let mut pool = CandidatePool::default();
    for c in ranked {
        for path in [PathKind::Keyword, PathKind::Dense, PathKind::Graph] {
            if let Some(hit) = c.hit(path) {
                pool.add(path, hit.rank, hit.metric, c.memory.clone());
            }
        }
    }
    for c in extra.into_candidates() {
        if let Some(hit) = c.dense {
            pool.add(PathKind::Dense, hit.rank, hit.metric, c.memory);
        }
    }
    pool
}

/// `items` as a JSON array, or NULL when there are none (a filter that is off).
fn json_list<T: serde::Serialize>(items: &[T]) -> Value {
    if items.is_empty() {
        Value::Null
    } else {
        json_array(items)
    }
}

/// `items` as a JSON array, empty or not (for `json_each`, which reads an empty array as
/// no rows).
pub(crate) fn json_array<T: serde::Serialize>(items: &[T]) -> Value {
    Value::from(serde_json::to_string(items).unwrap_or_else(|_| "[]".into()))
}

/// `{"name": weight, …}`: the graph path reads each name as `key` and its weight as
/// `value` of `json_each`.
fn json_weights(weights: &[(&str, f64)]) -> Value {
    let object: serde_json::Map<String, serde_json::Value> = weights
        .iter()
        .map(|(name, weight)| ((*name).to_owned(), serde_json::Value::from(*weight)))
        .collect();
    Value::from(serde_json::Value::Object(object).to_string())
}

impl<D: Database> Engram<D> {
    /// Searches live memories through the full pipeline: query analysis, keyword,
    /// dense and graph candidates in one round trip, weighted reciprocal rank fusion, the
    /// graph neighbourhood boost, phase × trust × confidence × decay, dedupe and MMR, the
    /// optional host reranker, the intent's selection rules, HyDE when a search is weak, and
    /// packing into a token budget. Every hit carries its score breakdown and the response
    /// its stage timings. The memories it hands out ([`SearchResponse::shown_ids`]) count
    /// as used, written with the next write ([`Engram::flush_uses`]).
    pub async fn search(&self, query: &SearchQuery) -> Result<SearchResponse, EngramError> {
        let found = self.search_unrecorded(query).await?;
        self.behind.record(found.shown_ids());
        Ok(found)
    }

    /// [`Engram::search`] for a caller that hands out only part of the answer (and counts
    /// that part's uses itself).
    pub(crate) async fn search_unrecorded(
        &self,
        query: &SearchQuery,
    ) -> Result<SearchResponse, EngramError> {
        // `search_with` validates the query.
        self.search_with(std::slice::from_ref(query), Vec::new())
            .await?
            .0
            .pop()
            .ok_or_else(|| StoreError::Protocol("no answer for the search".into()).into())
    }

    /// HyDE's second round trip: the dense candidates of a hypothetical answer the host
    /// LLM writes for the query. `Ok(Err(warning))` when the LLM or the embedder fails (the
    /// search goes on without HyDE); `Err` only when the database does.
    async fn hyde_candidates(
        &self,
        llm: &dyn Generate,
        embedder: &Embedding,
        query: &SearchQuery,
        analysis: &engram_retrieval::QueryAnalysis,
    ) -> Result<Result<CandidatePool, String>, EngramError> {
        let clock = self.host.clock.as_ref();
        let text = match llm
            .generate(&hyde_prompt(&query.text), HYDE_MAX_TOKENS)
            .await
        {
            Ok(text) => text,
            Err(e) => return Ok(Err(format!("HyDE skipped: host LLM failed: {e}"))),
        };
        let vector = match embedder.embed(std::slice::from_ref(&text), clock).await {
            Ok(mut vectors) => vectors.pop(),
            Err(e) => return Ok(Err(format!("HyDE skipped: {e}"))),
        };
        let paths = Paths {
            keyword: false,
            graph: GraphInputs::default(),
            adjacency: false,
            ..self.paths(query, analysis, true)
        };
        let (extra, _) = self
            .fetch_candidates(&paths, query, analysis, vector.as_deref())
            .await?;
        Ok(Ok(extra))
    }

    /// Which paths the candidate statement runs for `query` (`dense` when there is a
    /// query vector).
    fn paths(
        &self,
        query: &SearchQuery,
        analysis: &engram_retrieval::QueryAnalysis,
        dense: bool,
    ) -> Paths<'_> {
        Paths {
            keyword: query.mode != SearchMode::Dense && analysis.match_expression.is_some(),
            resident_keywords: self.resident_keywords.is_some(),
            dense: match (dense, &self.resident, &self.vector_index) {
                (false, _, _) => DenseSource::Off,
                (true, Some(_), _) => DenseSource::Resident,
                (true, None, Some(index)) => DenseSource::Index(index),
                (true, None, None) => DenseSource::Exact,
            },
            graph: {
                let on = query.mode == SearchMode::Hybrid && query.stages().graph;
                GraphInputs {
                    names: on && !analysis.identifiers.is_empty(),
                    recent: on && !query.context.recent_files.is_empty(),
                    named: on && !analysis.named_files.is_empty(),
                }
            },
            adjacency: query.mode == SearchMode::Hybrid && query.stages().boost,
            filters: query.narrows_by_attribute() || !query.exclude_ids.is_empty(),
            injection_floor: query.intent == SearchIntent::AutoInject,
            narrow: Narrow {
                files: !query.files.is_empty(),
                modules: !query.modules.is_empty(),
                types: !query.types.is_empty(),
            },
        }
    }

    /// Loads the resident vectors now, 4,096 per round trip, instead of over the first
    /// searches (which answer by the exact scan until the set is in: at 100K memories, 25
    /// searches of about 220 ms each). Call it after [`Engram::enable_resident_vectors`] in
    /// a process about to search; on a loaded set it brings in what other writers changed.
    /// Returns how many vectors the set holds (0 without resident vectors).
    pub async fn load_resident_vectors(&self) -> Result<usize, EngramError> {
        let (Some(resident), Some(embedding)) = (&self.resident, &self.embedding) else {
            return Ok(0);
        };
        self.load_changes(
            |seq| {
                Statement::with_params(
                    sql::vector_changes(),
                    vec![
                        Value::from(self.config.project_id.as_str()),
                        Value::from(embedding.model_id()),
                        Value::Integer(embedding.dims() as i64),
                        Value::Integer(seq),
                        Value::Integer(resident::CHANGE_BATCH as i64),
                    ],
                )
            },
            || resident.borrow().set.seq(),
            |decoded| {
                let count = decoded.vector_changes.len();
                resident.borrow_mut().apply(decoded.vector_changes);
                count
            },
        )
        .await?;
        Ok(resident.borrow().set.len())
    }

    /// Loads the resident keywords now, 4,096 memories per round trip, instead of over the
    /// first keyword searches (which FTS5 answers until the index is in). Call it after
    /// [`Engram::enable_resident_keywords`] in a process about to search; on a loaded index
    /// it brings in what other writers changed. Returns how many memories the index holds
    /// (0 without resident keywords).
    pub async fn load_resident_keywords(&self) -> Result<usize, EngramError> {
        let Some(resident) = &self.resident_keywords else {
            return Ok(0);
        };
        self.load_changes(
            |seq| {
                Statement::with_params(
                    sql::text_changes(),
                    vec![
                        Value::Integer(seq),
                        Value::Integer(resident::CHANGE_BATCH as i64),
                    ],
                )
            },
            || resident.borrow().index.seq(),
            |decoded| {
                let count = decoded.text_changes.len();
                resident.borrow_mut().apply(decoded.text_changes);
                count
            },
        )
        .await?;
        Ok(resident.borrow().index.len())
    }

    /// Reads a change log from the position `seq` reports on, one batch of at most
    /// [`resident::CHANGE_BATCH`] per round trip (`statement` for a position), handing each
    /// to `apply` (which returns how many changes it held), until a batch comes short.
    async fn load_changes(
        &self,
        statement: impl Fn(i64) -> Statement,
        seq: impl Fn() -> i64,
        mut apply: impl FnMut(Decoded) -> usize,
    ) -> Result<(), EngramError> {
        loop {
            let rows = first_rows(self.db.pipeline(&[statement(seq())]).await?)?;
            if apply(decode_candidates(&rows)?) < resident::CHANGE_BATCH {
                return Ok(());
            }
        }
    }

    /// Runs the candidate statement for `paths`, in one round trip (HyDE's second
    /// search; [`Engram::search_many`] sends its statements together).
    async fn fetch_candidates(
        &self,
        paths: &Paths<'_>,
        query: &SearchQuery,
        analysis: &engram_retrieval::QueryAnalysis,
        vector: Option<&[f32]>,
    ) -> Result<(CandidatePool, FileAdjacency), EngramError> {
        let (statement, fetch) = self.candidate_fetch(paths, query, analysis, vector);
        let rows = first_rows(self.db.pipeline(std::slice::from_ref(&statement)).await?)?;
        self.take_candidates(&fetch, &rows)
    }

    /// The candidate statement for `paths`. With resident vectors or keywords, it passes
    /// the ids they rank best (and asks for the changes they have not seen).
    fn candidate_fetch(
        &self,
        paths: &Paths<'_>,
        query: &SearchQuery,
        analysis: &engram_retrieval::QueryAnalysis,
        vector: Option<&[f32]>,
    ) -> (Statement, CandidateFetch) {
        let pick = match (&paths.dense, vector, &self.resident) {
            (DenseSource::Resident, Some(v), Some(resident)) => Some(DensePick::from(
                &resident.borrow(),
                v,
                PickSize::for_query(query, dense_limit(query) as usize),
            )),
            _ => None,
        };
        let terms = MatchTerms::of(analysis.match_tokens());
        let keyword_pick = match (&self.resident_keywords, paths.keyword) {
            (Some(resident), true) => Some(KeywordPick::from(
                &mut resident.borrow_mut(),
                &terms,
                keyword_limit(query) as usize,
                &self.config.project_id,
            )),
            _ => None,
        };
        let statement = Statement::with_params(
            sql::candidates(paths),
            self.candidate_params(
                query,
                analysis,
                &terms,
                vector,
                pick.as_ref(),
                keyword_pick.as_ref(),
            ),
        );
        let fetch = CandidateFetch {
            dense_pick: pick.is_some(),
            keyword_pick: keyword_pick.is_some(),
        };
        (statement, fetch)
    }

    /// The candidates in a candidate statement's `rows`; applies the vector and text
    /// changes they carry to the resident sets the statement picked from (changes a set
    /// has already seen are skipped, so several answers may carry the same ones).
    fn take_candidates(
        &self,
        fetch: &CandidateFetch,
        rows: &Rows,
    ) -> Result<(CandidatePool, FileAdjacency), EngramError> {
        let decoded = decode_candidates(rows)?;
        if let (true, Some(resident)) = (fetch.dense_pick, &self.resident) {
            resident.borrow_mut().apply(decoded.vector_changes);
        }
        if let (true, Some(resident)) = (fetch.keyword_pick, &self.resident_keywords) {
            resident.borrow_mut().apply(decoded.text_changes);
        }
        Ok((decoded.pool, decoded.adjacency))
    }

    fn candidate_params(
        &self,
        query: &SearchQuery,
        analysis: &engram_retrieval::QueryAnalysis,
        terms: &MatchTerms,
        vector: Option<&[f32]>,
        pick: Option<&DensePick>,
        keyword_pick: Option<&KeywordPick>,
    ) -> Vec<Value> {
        let mut params = vec![Value::Null; param::COUNT];
        let mut set = |n: usize, v: Value| params[n - 1] = v;
        set(param::PROJECT, Value::from(self.config.project_id.as_str()));
        set(
            param::MATCH,
            analysis
                .match_expression
                .as_deref()
                .map_or(Value::Null, Value::from),
        );
        set(param::TERMS, terms.param());
        if let (Some(v), Some(embedder)) = (vector, &self.embedding) {
            set(param::VECTOR, Value::Blob(vector::to_blob(v)));
            set(param::MODEL, Value::from(embedder.model_id()));
            set(param::DIMS, Value::Integer(embedder.dims() as i64));
        }
        let types: Vec<&str> = query.types.iter().map(|t| t.as_str()).collect();
        set(param::TYPES, json_list(&types));
        set(
            param::IDENTIFIERS,
            json_weights(&analysis.identifier_weights()),
        );
        set(param::RECENT_FILES, json_array(&query.context.recent_files));
        // The files the query names: those of the project find their memories (not their
        // neighbours: a traceback names many files, and their neighbourhoods are most of
        // the project); the other suffixes match nothing.
        set(param::NAMED_FILES, json_array(&analysis.named_files));
        set(param::FILES, json_list(&query.files));
        set(param::MODULES, json_list(&query.modules));
        set(
            param::MIN_CONFIDENCE,
            Value::Float(query.min_confidence.unwrap_or(0.0)),
        );
        let scopes: Vec<&str> = query.scopes.iter().map(|s| s.as_str()).collect();
        set(param::SCOPES, json_list(&scopes));
        set(param::EXCLUDE, json_list(&query.exclude_ids));
        let limit = i64::from(query.limit);
        set(
            param::KEYWORD_LIMIT,
            Value::Integer(i64::from(keyword_limit(query))),
        );
        let dense_limit = i64::from(dense_limit(query));
        set(param::DENSE_LIMIT, Value::Integer(dense_limit));
        if let Some(pick) = pick {
            set(param::DENSE_IDS, json_list(&pick.ids));
            set(param::KNOWN_SEQ, Value::Integer(pick.seq));
            set(param::DENSE_FLOOR, pick.floor_param());
            set(
                param::CHANGE_LIMIT,
                Value::Integer(resident::CHANGE_BATCH as i64),
            );
        }
        if let Some(pick) = keyword_pick {
            if let Some(scored) = &pick.scored {
                set(param::KEYWORD_PICK, json_array(scored));
            }
            set(param::KEYWORD_SEQ, Value::Integer(pick.seq));
            set(
                param::CHANGE_LIMIT,
                Value::Integer(resident::CHANGE_BATCH as i64),
            );
        }
        set(
            param::GRAPH_LIMIT,
            Value::Integer(limit.max(i64::from(sql::GRAPH_CANDIDATES))),
        );
        set(
            param::ANN_CANDIDATES,
            Value::Integer(i64::from(crate::vector_index::VectorIndex::ann_candidates(
                dense_limit as u32,
            ))),
        );
        params
    }

    /// Reorders the best [`RERANK_CANDIDATES`] by the host reranker's scores fused with
    /// the pipeline's order ([`fuse_reranked`]); on failure the order stays and a warning
    /// says why.
    ///
    /// The reranker reads each memory as the dense path embedded it
    /// ([`stored_memory_text`]): behind the prefix naming its files, or a code chunk's
    /// file, kind and name. Content alone hides where a chunk lives, and a report names
    /// files and functions: on SWE-bench pytest (dev) with the MPNet service of
    /// `scripts/rerank`, content alone gave file localization Acc@1 0.47, the prefixed
    /// text 0.53.
    async fn rerank(
        &self,
        reranker: &dyn engram_host::Rerank,
        text: &str,
        mut ranked: Vec<Candidate>,
        warnings: &mut Vec<String>,
    ) -> Vec<Candidate> {
        let n = ranked.len().min(RERANK_CANDIDATES);
        if n < 2 {
            return ranked;
        }
        let documents: Vec<String> = ranked[..n]
            .iter()
            .map(|c| stored_memory_text(&c.memory))
            .collect();
        match reranker.rerank(text, &documents).await {
            Ok(scores) if scores.len() == n && scores.iter().all(|s| s.is_finite()) => {
                let tail = ranked.split_off(n);
                let mut out = fuse_reranked(ranked, &scores);
                out.extend(tail);
                out
            }
            Ok(scores) => {
                warnings.push(format!(
                    "rerank skipped: the reranker returned {} scores for {n} documents or a non-finite score",
                    scores.len()
                ));
                ranked
            }
            Err(e) => {
                warnings.push(format!("rerank skipped: {e}"));
                ranked
            }
        }
    }
}

/// How many keyword candidates the statement keeps for `query`.
fn keyword_limit(query: &SearchQuery) -> u32 {
    query.limit.max(sql::KEYWORD_CANDIDATES)
}

/// How many dense candidates the statement keeps for `query`.
fn dense_limit(query: &SearchQuery) -> u32 {
    query.limit.max(sql::DENSE_CANDIDATES)
}

fn first_rows(results: Vec<Result<Rows, engram_store::SqlError>>) -> Result<Rows, EngramError> {
    Ok(results
        .into_iter()
        .next()
        .transpose()
        .map_err(StoreError::Sql)?
        .unwrap_or_default())
}

/// The candidate statement's rows, by kind.
#[derive(Default)]
struct Decoded {
    pool: CandidatePool,
    adjacency: FileAdjacency,
    vector_changes: Vec<VectorChange>,
    text_changes: Vec<TextChange>,
}

/// Splits the candidate statement's rows into path hits, file adjacency, vector changes and
/// memory text changes.
fn decode_candidates(rows: &Rows) -> Result<Decoded, EngramError> {
    let mut decoded = Decoded::default();
    let Decoded {
        pool,
        adjacency,
        vector_changes: changes,
        text_changes,
    } = &mut decoded;
    for row in &rows.rows {
        let kind = row
            .first()
            .ok_or_else(|| StoreError::Decode("empty candidate row".into()))?
            .as_text("kind")?;
        let path = match kind {
            "keyword" => PathKind::Keyword,
            "dense" => PathKind::Dense,
            "graph" => PathKind::Graph,
            "adj" => {
                let a = row.get(1).map(|v| v.as_text("file")).transpose()?;
                let b = row.get(3).map(|v| v.as_text("file")).transpose()?;
                if let (Some(a), Some(b)) = (a, b) {
                    adjacency.add(a, b);
                }
                continue;
            }
            "vec" => {
                let id = row.get(1).map(|v| v.as_text("memory id")).transpose()?;
                let seq = row.get(2).map_or(Ok(0), |v| v.as_i64("change position"))?;
                let vector = match row.get(3) {
                    Some(Value::Blob(blob)) => vector::from_blob(blob).ok(),
                    _ => None,
                };
                if let Some(id) = id {
                    changes.push(VectorChange {
                        id: id.to_owned(),
                        seq,
                        vector,
                    });
                }
                continue;
            }
            "txt" => {
                let text = |i: usize, what: &str| -> Result<Option<&str>, StoreError> {
                    match row.get(i) {
                        None | Some(Value::Null) => Ok(None),
                        Some(v) => v.as_text(what).map(Some),
                    }
                };
                let id = text(1, "memory id")?;
                let seq = row.get(2).map_or(Ok(0), |v| v.as_i64("change position"))?;
                let indexed = text(3, "content")?.map(|content| {
                    IndexedText::from_columns(
                        content.to_owned(),
                        text(4, "tags").ok().flatten().unwrap_or("[]"),
                        text(5, "related files").ok().flatten().unwrap_or("[]"),
                        text(6, "project").ok().flatten().unwrap_or("").to_owned(),
                    )
                });
                if let Some(id) = id {
                    text_changes.push(TextChange {
                        id: id.to_owned(),
                        seq,
                        text: indexed,
                    });
                }
                continue;
            }
            other => {
                return Err(StoreError::Decode(format!("unknown candidate kind {other:?}")).into())
            }
        };
        let rank = row.get(1).map_or(Ok(0), |v| v.as_i64("rank"))?;
        let metric = row.get(2).map_or(Ok(0.0), |v| v.as_f64("metric"))?;
        let memory = memory_from_row(row.get(3..).unwrap_or(&[]))?;
        pool.add(
            path,
            rank.clamp(1, i64::from(u32::MAX)) as u32,
            metric,
            memory,
        );
    }
    Ok(decoded)
}
