//! Remote embedding providers for engram: an OpenAI-compatible `/embeddings` endpoint or
//! Ollama's `/api/embed`, called through the host's [`HttpTransport`].
//!
//! A [`RemoteEmbedder`] is an [`engram_host::Embed`]: engram builds one when its open
//! options name a remote provider (`embedder: { provider: "openai", … }`). The dimensions are configured
//! explicitly and every answer is checked against them — a provider that silently switched
//! models (or a proxy answering HTML) is a failure, never a stored vector. Failures feed
//! engram's circuit breaker: after 3 in a row engram stops calling the provider for 30 s,
//! stores memories keyword-searchable and queues them for
//! `Engram::embed_pending`.
//!
//! ```
//! use engram_embed_remote::{Protocol, RemoteConfig, RemoteEmbedder};
//! # fn demo<T: engram_http::HttpTransport + 'static>(transport: T) {
//! let embedder = RemoteEmbedder::new(
//!     transport,
//!     RemoteConfig::new(Protocol::Ollama, "http://127.0.0.1:11434", "all-minilm", 384),
//! );
//! assert_eq!(engram_host::Embed::model_id(&embedder), "ollama:all-minilm");
//! # }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod embedder;
mod protocol;

pub use config::{Protocol, RemoteConfig, MAX_TEXTS_PER_REQUEST};
pub use embedder::RemoteEmbedder;
pub use engram_http::HttpTransport;
