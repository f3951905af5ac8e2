//! Search requests and responses.

use engram_core::{Memory, MemoryType, ValidationError};
use serde::{Deserialize, Serialize};

/// Most results one search returns.
pub const MAX_SEARCH_LIMIT: u32 = 50;
/// Longest query text, in bytes.
pub const MAX_QUERY_BYTES: usize = 16 * 1024;

/// A search request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchQuery {
    /// What to look for, in natural language or identifiers.
    pub text: String,
    /// How many results at most (1–50, default 10).
    #[serde(default = "default_limit")]
    pub limit: u32,
    /// Only these types; all when empty.
    #[serde(default)]
    pub types: Vec<MemoryType>,
    /// Which candidate paths to use (default hybrid).
    #[serde(default)]
    pub mode: SearchMode,
}

/// Which retrieval paths a search uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// Keyword and dense candidates fused by reciprocal rank (dense only when an embedder
    /// is configured).
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
        }
    }

    /// Parses a query from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<Self, ValidationError> {
        engram_core::validate::from_json(json)
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
        Ok(())
    }
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The memory.
    pub memory: Memory,
    /// Relevance, higher is better: the reciprocal-rank-fusion score over the paths used.
    pub score: f64,
    /// 1-based rank in the keyword (BM25) path, if it found this memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bm25_rank: Option<u32>,
    /// The FTS5 BM25 score (negated: higher is better), if the keyword path found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bm25: Option<f64>,
    /// 1-based rank in the dense (vector) path, if it found this memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense_rank: Option<u32>,
    /// Cosine distance to the query (0 = same direction), if the dense path found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distance: Option<f64>,
}

/// The answer to a search.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResponse {
    /// Results, best first.
    pub hits: Vec<SearchHit>,
    /// The sanitized tokens the query was reduced to.
    pub tokens: Vec<String>,
    /// Paths that could not run and why (e.g. the embedder failed: keyword results only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}
