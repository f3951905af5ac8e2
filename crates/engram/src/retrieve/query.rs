//! Search requests and responses.

use engram_core::{Memory, MemoryScope, MemoryType, Phase, ValidationError};
use engram_retrieval::packing::PackedContext;
use engram_retrieval::{Breakdown, QueryContext, QueryType};
use serde::{Deserialize, Serialize};

pub use engram_retrieval::Mode as SearchIntent;

/// Most results one search returns.
pub const MAX_SEARCH_LIMIT: u32 = 50;
/// Longest query text, in bytes.
pub const MAX_QUERY_BYTES: usize = 16 * 1024;
/// Most entries in any list filter (files, modules, ids, context lists).
pub const MAX_FILTER_ENTRIES: usize = 256;
/// Most queries one [`Engram::search_many`](crate::Engram::search_many) takes.
pub const MAX_BATCH_QUERIES: usize = 16;
/// Largest packing budget, in tokens.
pub const MAX_BUDGET_TOKENS: u32 = 200_000;

/// A search request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchQuery {
    /// What to look for, in natural language or identifiers.
    pub text: String,
    /// How many results at most (1–50, default 10; auto-inject returns at most 3).
    #[serde(default = "default_limit")]
    pub limit: u32,
    /// Only these types; all when empty.
    #[serde(default)]
    pub types: Vec<MemoryType>,
    /// Which candidate paths to use (default hybrid: every path available).
    #[serde(default)]
    pub mode: SearchMode,
    /// Explicit search (default) or auto-inject between steps.
    #[serde(default)]
    pub intent: SearchIntent,
    /// The agent's phase: weights memory types and sets the packing budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// What the runtime knows about the moment: recent turns, tools, files.
    #[serde(default)]
    pub context: QueryContext,
    /// Only memories related to one of these files.
    #[serde(default)]
    pub files: Vec<String>,
    /// Only memories related to one of these modules.
    #[serde(default)]
    pub modules: Vec<String>,
    /// Only memories with at least this confidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_confidence: Option<f64>,
    /// Only these scopes; all when empty.
    #[serde(default)]
    pub scopes: Vec<MemoryScope>,
    /// Never these memories (e.g. already shown this session).
    #[serde(default)]
    pub exclude_ids: Vec<String>,
    /// Pack the results into this many tokens (default: the phase's budget when a phase is
    /// given, else no packing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u32>,
    /// Also show, under each hit, the retired memories it superseded (one more read, only
    /// when asked): what a decision or a value replaced, and why.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub include_superseded: bool,
    /// Stages to run (all by default; switch off for ablations). Only with the
    /// `test-support` feature: the product always runs every stage.
    #[cfg(feature = "test-support")]
    #[serde(default)]
    pub stages: Stages,
}

/// Optional pipeline stages, on by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Stages {
    /// The graph candidate path.
    #[serde(default = "yes")]
    pub graph: bool,
    /// The graph neighbourhood boost.
    #[serde(default = "yes")]
    pub boost: bool,
    /// Overlapping-chunk dedupe and MMR.
    #[serde(default = "yes")]
    pub diversity: bool,
    /// The host reranker, if one is configured.
    #[serde(default = "yes")]
    pub rerank: bool,
    /// HyDE through the host LLM, if one is configured (search intent only).
    #[serde(default = "yes")]
    pub hyde: bool,
    /// The search intent's cut of clearly unrelated hits (relevance below
    /// [`engram_retrieval::scoring::SEARCH_MIN_RELEVANCE`]).
    #[serde(default = "yes")]
    pub cut: bool,
}

fn yes() -> bool {
    true
}

impl Default for Stages {
    fn default() -> Self {
        Stages {
            graph: true,
            boost: true,
            diversity: true,
            rerank: true,
            hyde: true,
            cut: true,
        }
    }
}

/// Which retrieval paths a search uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// Keyword, dense (with an embedder) and graph candidates, fused by weighted reciprocal
    /// rank.
    #[default]
    Hybrid,
    /// BM25 only.
    Keyword,
    /// Vectors only (falls back to nothing, with a warning, without an embedder).
    Dense,
}

fn default_limit() -> u32 {
    10
}

impl SearchQuery {
    /// A query for `text` with default options.
    pub fn new(text: impl Into<String>) -> Self {
        SearchQuery {
            text: text.into(),
            limit: default_limit(),
            types: Vec::new(),
            mode: SearchMode::default(),
            intent: SearchIntent::default(),
            phase: None,
            context: QueryContext::default(),
            files: Vec::new(),
            modules: Vec::new(),
            min_confidence: None,
            scopes: Vec::new(),
            exclude_ids: Vec::new(),
            budget: None,
            include_superseded: false,
            #[cfg(feature = "test-support")]
            stages: Stages::default(),
        }
    }

    /// The stages this query runs: all of them unless an ablation switched one off.
    pub(crate) fn stages(&self) -> Stages {
        #[cfg(feature = "test-support")]
        return self.stages;
        #[cfg(not(feature = "test-support"))]
        return Stages::default();
    }

    /// Parses a query from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<Self, ValidationError> {
        engram_core::validate::from_json(json)
    }

    /// Parses a batch for [`Engram::search_many`](crate::Engram::search_many) from
    /// untrusted JSON: an array of at most [`MAX_BATCH_QUERIES`] queries, each a query
    /// object or its text alone. Names the failing entry and field (`[2].limit`).
    pub fn list_from_json(json: &str) -> Result<Vec<Self>, ValidationError> {
        let items: Vec<serde_json::Value> = engram_core::validate::from_json(json)?;
        check_batch(items.len())?;
        items
            .into_iter()
            .enumerate()
            .map(|(i, item)| match item {
                serde_json::Value::String(text) => Ok(SearchQuery::new(text)),
                other => SearchQuery::from_json(&other.to_string())
                    .map_err(|e| e.within(&format!("[{i}]"))),
            })
            .collect()
    }

    /// Checks a batch of queries: at most [`MAX_BATCH_QUERIES`], each within engram's
    /// limits (a violation names its entry, `[2].text`).
    pub fn validate_batch(queries: &[SearchQuery]) -> Result<(), ValidationError> {
        check_batch(queries.len())?;
        for (i, query) in queries.iter().enumerate() {
            query.validate().map_err(|e| e.within(&format!("[{i}]")))?;
        }
        Ok(())
    }

    /// Whether the query keeps only some types, files, modules or scopes (each a filter
    /// that may drop any memory; exclusions and the confidence floor are not counted).
    pub(crate) fn narrows_by_attribute(&self) -> bool {
        !(self.types.is_empty()
            && self.files.is_empty()
            && self.modules.is_empty()
            && self.scopes.is_empty())
    }

    /// Checks the query against engram's limits.
    pub fn validate(&self) -> Result<(), ValidationError> {
        if self.text.trim().is_empty() {
            return Err(ValidationError::field("text", "must not be empty"));
        }
        if self.text.len() > MAX_QUERY_BYTES {
            return Err(ValidationError::field(
                "text",
                format!(
                    "is {} bytes; the limit is {MAX_QUERY_BYTES}",
                    self.text.len()
                ),
            ));
        }
        if !(1..=MAX_SEARCH_LIMIT).contains(&self.limit) {
            return Err(ValidationError::field(
                "limit",
                format!("must be from 1 to {MAX_SEARCH_LIMIT}, got {}", self.limit),
            ));
        }
        if let Some(c) = self.min_confidence {
            if !(0.0..=1.0).contains(&c) {
                return Err(ValidationError::field(
                    "minConfidence",
                    format!("must be from 0 to 1, got {c}"),
                ));
            }
        }
        if let Some(b) = self.budget {
            if b > MAX_BUDGET_TOKENS {
                return Err(ValidationError::field(
                    "budget",
                    format!("must be at most {MAX_BUDGET_TOKENS} tokens, got {b}"),
                ));
            }
        }
        let lists: [(&str, usize); 6] = [
            ("files", self.files.len()),
            ("modules", self.modules.len()),
            ("excludeIds", self.exclude_ids.len()),
            ("context.recentTurns", self.context.recent_turns.len()),
            ("context.recentTools", self.context.recent_tools.len()),
            ("context.recentFiles", self.context.recent_files.len()),
        ];
        for (field, len) in lists {
            if len > MAX_FILTER_ENTRIES {
                return Err(ValidationError::field(
                    field,
                    format!("has {len} entries; the limit is {MAX_FILTER_ENTRIES}"),
                ));
            }
        }
        let turn_bytes: usize = self.context.recent_turns.iter().map(String::len).sum();
        if turn_bytes > MAX_QUERY_BYTES {
            return Err(ValidationError::field(
                "context.recentTurns",
                format!("is {turn_bytes} bytes; the limit is {MAX_QUERY_BYTES}"),
            ));
        }
        Ok(())
    }
}

/// At most [`MAX_BATCH_QUERIES`] queries in a batch.
fn check_batch(count: usize) -> Result<(), ValidationError> {
    if count > MAX_BATCH_QUERIES {
        return Err(ValidationError::field(
            "(root)",
            format!("must have at most {MAX_BATCH_QUERIES} queries, got {count}"),
        ));
    }
    Ok(())
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The memory.
    pub memory: Memory,
    /// Relevance, higher is better (see [`Breakdown::score`]).
    pub score: f64,
    /// How the score came to be: each path's rank and contribution, boosts, weights.
    pub breakdown: Breakdown,
    /// The retired memories this one superseded, newest first, when the query asked for
    /// them ([`SearchQuery::include_superseded`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub superseded: Vec<Memory>,
}

/// Time spent in each stage of one search, in microseconds (host clock resolution).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StageTimings {
    /// Query analysis.
    pub analysis: f64,
    /// Embedding the query (0 when cached or without an embedder).
    pub embed: f64,
    /// The database round trip for all candidate paths.
    pub candidates: f64,
    /// Fusion, boost, scoring, diversity and selection.
    pub ranking: f64,
    /// The host reranker.
    pub rerank: f64,
    /// HyDE (generation, embedding, second dense search).
    pub hyde: f64,
    /// Context packing.
    pub packing: f64,
    /// The whole search.
    pub total: f64,
}

impl StageTimings {
    /// One of `count` searches' timings: its own stages, an even share of the embedding
    /// call and the round trip they shared, and the sum of those as its total.
    pub fn share_of(self, count: usize) -> StageTimings {
        let share = 1.0 / count.max(1) as f64;
        let mut own = StageTimings {
            embed: self.embed * share,
            candidates: self.candidates * share,
            ..self
        };
        own.total = own.analysis
            + own.embed
            + own.candidates
            + own.ranking
            + own.rerank
            + own.hyde
            + own.packing;
        own
    }
}

/// The answer to a search.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResponse {
    /// Results, best first.
    pub hits: Vec<SearchHit>,
    /// The detected query type.
    pub query_type: QueryType,
    /// The sanitized keyword tokens the query was reduced to.
    pub tokens: Vec<String>,
    /// The `tokens` that counted twice in BM25 (a long report's title words that it also
    /// uses as code names).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub emphasized: Vec<String>,
    /// Code names sent to the graph path.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub identifiers: Vec<String>,
    /// Tokens borrowed from recent turns (short prompts only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub enriched_with: Vec<String>,
    /// How many distinct candidates the paths produced.
    pub candidates: usize,
    /// The packed context, when a budget or phase was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packed: Option<PackedContext>,
    /// Why an auto-inject search returned nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub empty_reason: Option<String>,
    /// Whether HyDE ran.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hyde: bool,
    /// Time per stage.
    pub timings: StageTimings,
    /// Paths that could not run and why; memories that need review.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl SearchResponse {
    /// The memories the answer hands out: the packed ones when it was packed, else every
    /// hit. Each counts as used.
    pub fn shown_ids(&self) -> Vec<&str> {
        match &self.packed {
            Some(packed) => packed.items.iter().map(|i| i.id.as_str()).collect(),
            None => self.hits.iter().map(|h| h.memory.id.as_str()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StageTimings;

    #[test]
    fn a_batch_answer_takes_its_share_of_what_the_batch_shared() {
        let batch = StageTimings {
            analysis: 10.0,
            embed: 400.0,
            candidates: 800.0,
            ranking: 50.0,
            rerank: 0.0,
            hyde: 0.0,
            packing: 5.0,
            total: 2_000.0,
        };
        let own = batch.share_of(4);
        assert_eq!((own.embed, own.candidates), (100.0, 200.0));
        assert_eq!(own.total, 10.0 + 100.0 + 200.0 + 50.0 + 5.0);
        assert_eq!(batch.share_of(1).total, 10.0 + 400.0 + 800.0 + 50.0 + 5.0);
    }
}
