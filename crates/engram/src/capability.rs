//! Optional capabilities a host may give the retrieval pipeline: a reranker and a text
//! generator (for HyDE). engram works without either.

use std::future::Future;
use std::pin::Pin;

/// What a [`Rerank`] call returns: one score per document (higher is better), or why not.
pub type RerankFuture<'a> = Pin<Box<dyn Future<Output = Result<Vec<f64>, String>> + 'a>>;
/// What a [`Generate`] call returns: the generated text, or why not.
pub type GenerateFuture<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + 'a>>;

/// Scores documents against a query: a cross-encoder, or a hosted rerank API.
pub trait Rerank {
    /// One score per document, in input order. Each document is a memory's contextual
    /// text, as its vector was made: the prefix naming its files (or a code chunk's file,
    /// kind and name), a blank line, then its content.
    fn rerank<'a>(&'a self, query: &'a str, documents: &'a [String]) -> RerankFuture<'a>;
}

/// Generates text from a prompt: the host's LLM. engram calls it at most once per search
/// (HyDE), never on the auto-inject path.
pub trait Generate {
    /// Text for `prompt`, at most about `max_tokens` long.
    fn generate<'a>(&'a self, prompt: &'a str, max_tokens: u32) -> GenerateFuture<'a>;
}

/// Candidates a reranker sees (the best after scoring).
pub const RERANK_CANDIDATES: usize = 20;
/// Tokens asked of the LLM for a hypothetical memory.
pub const HYDE_MAX_TOKENS: u32 = 100;

/// The HyDE prompt for `query` (seeds 000 §7).
pub fn hyde_prompt(query: &str) -> String {
    format!("Write a 2-sentence memory that would perfectly answer: \"{query}\"")
}
