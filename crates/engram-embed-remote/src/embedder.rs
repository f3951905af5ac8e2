//! The provider as an [`engram_host::Embed`].

use engram_host::{Embed, EmbedFuture};
use engram_http::HttpTransport;

use crate::protocol::{error_message, parse_vectors, request_body};
use crate::{RemoteConfig, MAX_TEXTS_PER_REQUEST};

/// Embeds through a remote provider over the host's HTTP.
pub struct RemoteEmbedder<T> {
    transport: T,
    config: RemoteConfig,
    model_id: String,
}

impl<T: HttpTransport> RemoteEmbedder<T> {
    /// An embedder for `config`, sending requests through `transport`.
    pub fn new(transport: T, config: RemoteConfig) -> Self {
        let model_id = format!("{}:{}", config.protocol.as_str(), config.model);
        RemoteEmbedder {
            transport,
            config,
            model_id,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &RemoteConfig {
        &self.config
    }

    async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        let response = self
            .transport
            .post_json(
                &self.config.endpoint(),
                self.config.api_key.as_deref(),
                request_body(&self.config, texts),
            )
            .await
            .map_err(|e| format!("provider unreachable: {e}"))?;
        if !(200..300).contains(&response.status) {
            return Err(error_message(response.status, &response.body));
        }
        parse_vectors(&self.config, &response.body, texts.len())
    }
}

impl<T: HttpTransport> Embed for RemoteEmbedder<T> {
    /// `openai:<model>` or `ollama:<model>`.
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dims(&self) -> usize {
        self.config.dims
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        Box::pin(async move {
            let mut vectors = Vec::with_capacity(texts.len());
            for batch in texts.chunks(MAX_TEXTS_PER_REQUEST) {
                vectors.extend(self.embed_batch(batch).await?);
            }
            Ok(vectors)
        })
    }
}
