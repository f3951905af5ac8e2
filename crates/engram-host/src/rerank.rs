//! Reordering search candidates with a stronger model.

use std::future::Future;
use std::pin::Pin;

/// What a [`Rerank`] call returns: one score per document (higher is better), or why not.
pub type RerankFuture<'a> = Pin<Box<dyn Future<Output = Result<Vec<f64>, String>> + 'a>>;

/// Scores documents against a query: a cross-encoder, or a hosted rerank API.
pub trait Rerank {
    /// One score per document, in input order. Each document is a memory's contextual
    /// text, as its vector was made: the prefix naming its files (or a code chunk's file,
    /// kind and name), a blank line, then its content.
    fn rerank<'a>(&'a self, query: &'a str, documents: &'a [String]) -> RerankFuture<'a>;
}
