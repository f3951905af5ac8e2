//! This model as engram's [`engram_host::Embed`] capability.

use engram_host::{Embed, EmbedFuture};

use crate::Embedder;

/// The in-sandbox model, for `Engram::with_embedder`.
pub struct EngramEmbedder {
    embedder: Embedder,
}

impl EngramEmbedder {
    /// Wraps a loaded model.
    pub fn new(embedder: Embedder) -> Self {
        EngramEmbedder { embedder }
    }
}

impl EngramEmbedder {
    /// Embeds one text.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, String> {
        self.embedder.embed(text).map_err(|e| e.to_string())
    }
}

impl Embed for EngramEmbedder {
    fn model_id(&self) -> &str {
        &self.embedder.info().model_id
    }

    fn dims(&self) -> usize {
        self.embedder.info().dims
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        Box::pin(async move {
            texts
                .iter()
                .map(|t| self.embedder.embed(t).map_err(|e| e.to_string()))
                .collect()
        })
    }
}
