//! How the retrieval pipeline uses the optional capabilities: how many candidates a
//! reranker sees, and what the host's LLM is asked for HyDE.

/// Candidates a reranker sees (the best after scoring).
pub const RERANK_CANDIDATES: usize = 20;
/// Tokens asked of the LLM for a hypothetical memory.
pub const HYDE_MAX_TOKENS: u32 = 100;

/// The HyDE prompt for `query`.
pub fn hyde_prompt(query: &str) -> String {
    format!("Write a 2-sentence memory that would perfectly answer: \"{query}\"")
}
