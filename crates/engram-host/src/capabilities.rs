//! Everything a host hands engram when it opens it.

use crate::{Embed, Generate, Host, Rerank, SharedTransport};

/// The capabilities a host gives one engram: the clock and randomness every engram needs,
/// and the optional ones its options may call for.
///
/// Which of them are used is decided by the open options: a remote embedding provider or
/// rerank service named there is reached through [`Capabilities::http`]; a model the host
/// loaded itself (from a file, bytes or a binding) is [`Capabilities::model`].
pub struct Capabilities {
    /// Clock and randomness.
    pub host: Host,
    /// HTTP for the remote providers the options name.
    pub http: Option<SharedTransport>,
    /// An embedding model the host loaded (the bundled transformer or the static model).
    pub model: Option<Box<dyn Embed>>,
    /// The host's own reranker (a function in JavaScript, a cross-encoder in Rust).
    pub reranker: Option<Box<dyn Rerank>>,
    /// The host's LLM, for query expansion on weak searches.
    pub llm: Option<Box<dyn Generate>>,
}

impl Capabilities {
    /// Only a clock and randomness: keyword search, no remote providers.
    pub fn new(host: Host) -> Self {
        Capabilities {
            host,
            http: None,
            model: None,
            reranker: None,
            llm: None,
        }
    }

    /// With HTTP for remote providers.
    pub fn with_http(mut self, http: SharedTransport) -> Self {
        self.http = Some(http);
        self
    }

    /// With an embedding model the host loaded.
    pub fn with_model(mut self, model: Box<dyn Embed>) -> Self {
        self.model = Some(model);
        self
    }

    /// With the host's own reranker.
    pub fn with_reranker(mut self, reranker: Box<dyn Rerank>) -> Self {
        self.reranker = Some(reranker);
        self
    }

    /// With the host's LLM.
    pub fn with_llm(mut self, llm: Box<dyn Generate>) -> Self {
        self.llm = Some(llm);
        self
    }
}
