//! Remote rerankers for engram's rerank stage: a cross-encoder served behind a `/rerank`
//! endpoint, called through the host's [`HttpTransport`].
//!
//! No cross-encoder ships in a package registry engram can depend on, so the rerank stage
//! is a host capability ([`engram_host::Rerank`]). A [`RemoteReranker`] is that capability for
//! the rerank services people run: Cohere, Jina, Voyage, vLLM, Infinity and llama.cpp
//! (one request shape, [`RerankProtocol::Cohere`]) and Hugging Face
//! text-embeddings-inference ([`RerankProtocol::Tei`]). engram builds one
//! when its open options name a rerank service: a search then reorders its
//! best 20 by the service's ranks fused with its own. Every answer is checked (one finite score per
//! document, no index twice); a failed call leaves the order as it was and the response
//! says why in its warnings.
//!
//! ```
//! use engram_rerank_remote::{RemoteReranker, RerankConfig, RerankProtocol};
//! # fn demo<T: engram_http::HttpTransport + 'static>(transport: T) {
//! let mut config = RerankConfig::new(RerankProtocol::Cohere, "https://api.cohere.com/v2");
//! config.model = Some("rerank-v3.5".into());
//! config.api_key = std::env::var("COHERE_API_KEY").ok();
//! let reranker = RemoteReranker::new(transport, config);
//! assert_eq!(reranker.config().endpoint(), "https://api.cohere.com/v2/rerank");
//! // engram.with_reranker(Box::new(reranker))
//! # }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod protocol;
mod reranker;

pub use config::{RerankConfig, RerankProtocol};
pub use engram_http::HttpTransport;
pub use reranker::RemoteReranker;
