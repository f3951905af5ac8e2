//! Searches in one round trip: [`Engram::search_many`] analyses every query, embeds the
//! distinct query texts in one call, sends every candidate statement (and a caller's own
//! reads) in one pipeline, then ranks each answer on its own. [`Engram::search`] is the
//! batch of one.

use engram_retrieval::boost::{boost, FileAdjacency};
use engram_retrieval::fusion::{fuse, CandidatePool, PathWeights};
use engram_retrieval::packing::{pack, PackingBudget};
use engram_retrieval::select::wants_hyde;
use engram_retrieval::{analyze, diversity, scoring, select, Candidate, Mode, QueryAnalysis};
use engram_store::{Database, Rows, SqlError, Statement, StoreError};

use super::{with_extra_dense, CandidateFetch};
use crate::retrieve::query::{
    SearchHit, SearchIntent, SearchMode, SearchQuery, SearchResponse, StageTimings,
};
use crate::{Engram, EngramError};

/// A search between its analysis and its round trip.
struct Pending<'q> {
    query: &'q SearchQuery,
    analysis: QueryAnalysis,
    vector: Option<Vec<f32>>,
    /// What the candidate statement's answer updates, or `None` when no path can run
    /// (nothing to match, no vector, no graph input) and there is no statement.
    fetch: Option<CandidateFetch>,
    timings: StageTimings,
    warnings: Vec<String>,
}

impl<D: Database> Engram<D> {
    /// Runs several searches with one database round trip for all their candidates
    /// (instead of one each): a context built from several searches costs one round
    /// trip, however many sections it has. The distinct query texts are embedded in one
    /// call. Each answer is what [`Engram::search`] returns for its query, in the order of
    /// `queries` (each one's hand-outs count as used, as a search's do). Each answer's
    /// timings are its own: its stages, and an even share of the shared embedding call and
    /// round trip ([`StageTimings::share_of`]), so the answers' totals add up to about the
    /// batch's time. Only HyDE and the reranker, where they run, cost a query more.
    ///
    /// At most [`MAX_BATCH_QUERIES`](crate::MAX_BATCH_QUERIES) queries; one invalid query
    /// fails the whole batch before anything runs, its error naming the entry (`[2].text`).
    pub async fn search_many(
        &self,
        queries: &[SearchQuery],
    ) -> Result<Vec<SearchResponse>, EngramError> {
        SearchQuery::validate_batch(queries)?;
        let answers = self.search_checked(queries, Vec::new()).await?.0;
        for found in &answers {
            self.behind.record(found.shown_ids());
        }
        Ok(answers)
    }

    /// [`Engram::search_many`], with `reads` sent in the same round trip after the
    /// candidate statements; returns their rows in order beside the answers. Validates
    /// each query (an error names its field, not its entry).
    pub(crate) async fn search_with(
        &self,
        queries: &[SearchQuery],
        reads: Vec<Statement>,
    ) -> Result<(Vec<SearchResponse>, Vec<Rows>), EngramError> {
        for query in queries {
            query.validate()?;
        }
        self.search_checked(queries, reads).await
    }

    /// The queries with secrets redacted from their text and turns, or `None` when they
    /// hold none: query text reaches the embedder, the reranker and the LLM, which may be
    /// remote services.
    fn redacted_queries(&self, queries: &[SearchQuery]) -> Option<Vec<SearchQuery>> {
        let scanner = self.scanner?;
        let has = |text: &String| !scanner.scan(text).is_empty();
        let any = queries
            .iter()
            .any(|q| has(&q.text) || q.context.recent_turns.iter().any(has));
        if !any {
            return None;
        }
        let mut queries = queries.to_vec();
        for query in &mut queries {
            scanner.redact_in_place(&mut query.text);
            for turn in &mut query.context.recent_turns {
                scanner.redact_in_place(turn);
            }
        }
        Some(queries)
    }

    /// [`Engram::search_with`] on queries already validated.
    async fn search_checked(
        &self,
        queries: &[SearchQuery],
        reads: Vec<Statement>,
    ) -> Result<(Vec<SearchResponse>, Vec<Rows>), EngramError> {
        let clock = self.host.clock.as_ref();
        let started = clock.now_micros();
        let redacted = self.redacted_queries(queries);
        let queries = redacted.as_deref().unwrap_or(queries);
        let mut pending: Vec<Pending<'_>> = queries
            .iter()
            .map(|query| {
                let before = clock.now_micros();
                let analysis = analyze(&query.text, &query.context);
                Pending {
                    query,
                    analysis,
                    vector: None,
                    fetch: None,
                    timings: StageTimings {
                        analysis: clock.now_micros() - before,
                        ..StageTimings::default()
                    },
                    warnings: Vec::new(),
                }
            })
            .collect();

        let mark = clock.now_micros();
        self.embed_queries(&mut pending).await;
        let embed = clock.now_micros() - mark;

        let mark = clock.now_micros();
        let mut statements: Vec<Statement> = Vec::with_capacity(pending.len() + reads.len());
        for search in &mut pending {
            search.timings.embed = embed;
            let paths = self.paths(search.query, &search.analysis, search.vector.is_some());
            if paths.keyword || search.vector.is_some() || paths.graph.any() {
                let (statement, fetch) = self.candidate_fetch(
                    &paths,
                    search.query,
                    &search.analysis,
                    search.vector.as_deref(),
                );
                statements.push(statement);
                search.fetch = Some(fetch);
            }
        }
        statements.extend(reads);
        let mut results = if statements.is_empty() {
            Vec::new()
        } else {
            self.db.pipeline(&statements).await?
        }
        .into_iter();
        if results.len() != statements.len() {
            return Err(StoreError::Protocol(format!(
                "{} results for {} statements",
                results.len(),
                statements.len()
            ))
            .into());
        }
        let mut candidates = Vec::with_capacity(pending.len());
        for search in &pending {
            candidates.push(match &search.fetch {
                Some(fetch) => {
                    let rows = results.next().unwrap_or_else(|| Ok(Rows::default()));
                    self.take_candidates(fetch, &rows.map_err(StoreError::Sql)?)?
                }
                None => (CandidatePool::default(), FileAdjacency::default()),
            });
        }
        let reads = results
            .map(|rows| rows.map_err(|e: SqlError| StoreError::Sql(e).into()))
            .collect::<Result<Vec<Rows>, EngramError>>()?;
        let round_trip = clock.now_micros() - mark;

        let mut responses = Vec::with_capacity(pending.len());
        for (search, (pool, adjacency)) in pending.into_iter().zip(candidates) {
            responses.push(
                self.finish(search, pool, adjacency, round_trip, started)
                    .await?,
            );
        }
        self.attach_superseded(queries, &mut responses).await?;
        if responses.len() > 1 {
            let count = responses.len();
            for response in &mut responses {
                response.timings = response.timings.share_of(count);
            }
        }
        Ok((responses, reads))
    }

    /// Embeds the dense text of every search that wants the dense path, each distinct text
    /// once, in one call; on failure each such search carries the warning instead.
    async fn embed_queries(&self, pending: &mut [Pending<'_>]) {
        let wanted = |s: &Pending<'_>| s.query.mode != SearchMode::Keyword;
        let Some(embedder) = &self.embedding else {
            for search in pending.iter_mut() {
                if search.query.mode == SearchMode::Dense {
                    search
                        .warnings
                        .push("dense path skipped: no embedder configured".into());
                }
            }
            return;
        };
        let mut texts: Vec<String> = Vec::new();
        for search in pending.iter().filter(|s| wanted(s)) {
            if !texts.contains(&search.analysis.dense_text) {
                texts.push(search.analysis.dense_text.clone());
            }
        }
        if texts.is_empty() {
            return;
        }
        match embedder.embed(&texts, self.host.clock.as_ref()).await {
            Ok(vectors) => {
                for search in pending.iter_mut().filter(|s| wanted(s)) {
                    search.vector = texts
                        .iter()
                        .position(|t| *t == search.analysis.dense_text)
                        .and_then(|i| vectors.get(i).cloned());
                }
            }
            Err(e) => {
                for search in pending.iter_mut().filter(|s| wanted(s)) {
                    search.warnings.push(format!("dense path skipped: {e}"));
                }
            }
        }
    }

    /// Ranks one search's candidates and selects and packs its answer: fusion, boost,
    /// scoring, diversity, the reranker, HyDE, the intent's rules and packing.
    async fn finish(
        &self,
        search: Pending<'_>,
        candidates: CandidatePool,
        adjacency: FileAdjacency,
        round_trip: f64,
        started: f64,
    ) -> Result<SearchResponse, EngramError> {
        let Pending {
            query,
            analysis,
            mut timings,
            mut warnings,
            ..
        } = search;
        let clock = self.host.clock.as_ref();
        timings.candidates = round_trip;
        let mut mark = clock.now_micros();
        let candidate_count = candidates.len();

        let base_weights = PathWeights::for_type(analysis.query_type);
        let now_millis = clock.now_millis();
        let rank = |pool: CandidatePool| -> Vec<Candidate> {
            let candidates = pool.into_candidates();
            let weights = base_weights.adapted(analysis.query_type, &candidates);
            let mut ranked = fuse(candidates, &weights);
            if query.stages().boost {
                ranked = boost(ranked, &adjacency);
            }
            ranked = scoring::score(ranked, query.phase, now_millis);
            if query.stages().diversity {
                ranked = diversity::mmr(diversity::dedupe(ranked));
            }
            ranked
        };
        let mut ranked = rank(candidates);
        let now = clock.now_micros();
        timings.ranking = now - mark;
        mark = now;

        if query.stages().rerank {
            if let Some(reranker) = &self.reranker {
                ranked = self
                    .rerank(reranker.as_ref(), &query.text, ranked, &mut warnings)
                    .await;
            }
        }
        let now = clock.now_micros();
        timings.rerank = now - mark;
        mark = now;

        // Relevance reads a candidate's words: worked out only where HyDE or selection
        // looks (see `select::select`).
        let dense_ran = ranked.iter().any(|c| c.dense.is_some());
        let relevance = |c: &Candidate| scoring::relevance(&analysis.tokens, c, dense_ran);
        let mut hyde = false;
        // HyDE needs a host LLM and an embedder; only then is it worth asking whether the
        // results are weak (which reads their words).
        let hyde_capabilities = match (&self.llm, &self.embedding) {
            (Some(llm), Some(embedder))
                if query.intent == Mode::Search
                    && query.stages().hyde
                    && query.mode != SearchMode::Keyword =>
            {
                Some((llm, embedder))
            }
            _ => None,
        };
        if let Some((llm, embedder)) = hyde_capabilities.filter(|_| wants_hyde(&ranked, relevance))
        {
            match self
                .hyde_candidates(llm.as_ref(), embedder, query, &analysis)
                .await?
            {
                Ok(extra) => {
                    ranked = rank(with_extra_dense(std::mem::take(&mut ranked), extra));
                    hyde = true;
                }
                Err(warning) => warnings.push(warning),
            }
        }
        let now = clock.now_micros();
        timings.hyde = now - mark;
        mark = now;

        // A memory citing a file the host's probe says is gone is marked stale, and never
        // injected unasked.
        if self.host.files.is_some() {
            let unasked = query.intent == SearchIntent::AutoInject;
            ranked.retain(|c| self.files_still_there(&c.memory) || !unasked);
        }
        let selection = select::select(
            ranked,
            query.intent,
            query.limit as usize,
            query.stages().cut && scoring::cut_applies(&query.text),
            relevance,
        );
        for id in &selection.stale {
            if let Some(c) = selection.results.iter().find(|c| &c.memory.id == id) {
                warnings.push(format!(
                    "memory {id} needs review: {}",
                    c.memory.review_reason()
                ));
            }
        }
        let packed = match (query.budget, query.phase) {
            (None, None) => None,
            (budget, phase) => {
                let mut plan = PackingBudget::for_phase(phase);
                if let Some(total) = budget {
                    plan = plan.with_total(total as usize);
                }
                Some(pack(&selection.results, &plan))
            }
        };
        let now = clock.now_micros();
        timings.packing = now - mark;
        timings.total = now - started;

        let hits = selection
            .results
            .into_iter()
            .map(|c| SearchHit {
                score: c.breakdown.score,
                memory: c.memory,
                breakdown: c.breakdown,
                superseded: Vec::new(),
            })
            .collect();
        Ok(SearchResponse {
            hits,
            query_type: analysis.query_type,
            tokens: analysis.tokens,
            emphasized: analysis.emphasized,
            identifiers: analysis.identifiers,
            enriched_with: analysis.enriched_with,
            candidates: candidate_count,
            packed,
            empty_reason: selection.empty_reason,
            hyde,
            timings,
            warnings,
        })
    }
}
