//! The service as an [`engram_host::Rerank`].

use engram_host::{Rerank, RerankFuture};
use engram_http::HttpTransport;

use crate::protocol::{error_message, parse_scores, request_body};
use crate::RerankConfig;

/// Reranks through a remote service over the host's HTTP.
pub struct RemoteReranker<T> {
    transport: T,
    config: RerankConfig,
}

impl<T: HttpTransport> RemoteReranker<T> {
    /// A reranker for `config`, sending requests through `transport`.
    pub fn new(transport: T, config: RerankConfig) -> Self {
        RemoteReranker { transport, config }
    }

    /// The configuration.
    pub fn config(&self) -> &RerankConfig {
        &self.config
    }
}

impl<T: HttpTransport> Rerank for RemoteReranker<T> {
    /// One request for all documents (engram sends at most 20).
    fn rerank<'a>(&'a self, query: &'a str, documents: &'a [String]) -> RerankFuture<'a> {
        Box::pin(async move {
            let response = self
                .transport
                .post_json(
                    &self.config.endpoint(),
                    self.config.api_key.as_deref(),
                    request_body(&self.config, query, documents),
                )
                .await
                .map_err(|e| format!("rerank service unreachable: {e}"))?;
            if !(200..300).contains(&response.status) {
                return Err(error_message(response.status, &response.body));
            }
            parse_scores(self.config.protocol, &response.body, documents.len())
        })
    }
}
