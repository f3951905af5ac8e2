//! Text generation by the host's LLM.

use std::future::Future;
use std::pin::Pin;

/// What a [`Generate`] call returns: the generated text, or why not.
pub type GenerateFuture<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + 'a>>;

/// Generates text from a prompt: the host's LLM. engram works without one and never
/// calls it on a latency-critical path (auto-inject).
pub trait Generate {
    /// Text for `prompt`, at most about `max_tokens` long.
    fn generate<'a>(&'a self, prompt: &'a str, max_tokens: u32) -> GenerateFuture<'a>;
}
