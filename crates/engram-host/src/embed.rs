//! Turning texts into vectors.

use std::future::Future;
use std::pin::Pin;

/// The future an [`Embed`] implementation returns: vectors in input order, or why not.
pub type EmbedFuture<'a> = Pin<Box<dyn Future<Output = Result<Vec<Vec<f32>>, String>> + 'a>>;

/// Turns texts into vectors: the in-sandbox model, or a remote provider over host HTTP.
///
/// engram checks every answer (one vector per text, exactly [`Embed::dims`] finite floats)
/// and treats anything else as a failure: the memory is stored keyword-searchable and
/// embedded later; it is never dropped.
pub trait Embed {
    /// Identifies the model; stored with every vector. Vectors of different models are
    /// never compared.
    fn model_id(&self) -> &str;
    /// Length of every vector.
    fn dims(&self) -> usize;
    /// Embeds `texts`.
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a>;
}

/// One loaded model shared by several engram instances (e.g. per-tenant handles).
impl<E: Embed + ?Sized> Embed for std::rc::Rc<E> {
    fn model_id(&self) -> &str {
        (**self).model_id()
    }
    fn dims(&self) -> usize {
        (**self).dims()
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        (**self).embed(texts)
    }
}
