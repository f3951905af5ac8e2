//! Which service, where, and with which model.

/// The wire protocol of a rerank service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RerankProtocol {
    /// `POST {base}/rerank` with `{"model", "query", "documents": [...]}`, answering
    /// `{"results": [{"index", "relevance_score"}]}` (`"data"` for Voyage): Cohere, Jina,
    /// Voyage, vLLM, Infinity, llama.cpp's server.
    Cohere,
    /// Hugging Face text-embeddings-inference: `POST {base}/rerank` with
    /// `{"query", "texts": [...]}`, answering `[{"index", "score"}]`.
    Tei,
}

impl RerankProtocol {
    /// The short name used on the command line and in options.
    pub fn as_str(self) -> &'static str {
        match self {
            RerankProtocol::Cohere => "cohere",
            RerankProtocol::Tei => "tei",
        }
    }

    /// Parses `cohere` (also `jina`, `voyage`, `vllm`, `infinity`: the same shape) or `tei`.
    pub fn parse(name: &str) -> Option<RerankProtocol> {
        match name {
            "cohere" | "jina" | "voyage" | "vllm" | "infinity" => Some(RerankProtocol::Cohere),
            "tei" => Some(RerankProtocol::Tei),
            _ => None,
        }
    }
}

/// Settings of a [`RemoteReranker`](crate::RemoteReranker).
#[derive(Clone, PartialEq, Eq)]
pub struct RerankConfig {
    /// The wire protocol.
    pub protocol: RerankProtocol,
    /// The base URL (`https://api.cohere.com/v2`, `http://127.0.0.1:8080`) or the full
    /// endpoint URL (ending in `/rerank`).
    pub url: String,
    /// The service's model name; Cohere-style services need one, a TEI server serves one.
    pub model: Option<String>,
    /// Sent as `Authorization: Bearer …`; never logged or echoed in errors.
    pub api_key: Option<String>,
}

impl RerankConfig {
    /// A configuration without model or key.
    pub fn new(protocol: RerankProtocol, url: impl Into<String>) -> Self {
        RerankConfig {
            protocol,
            url: url.into(),
            model: None,
            api_key: None,
        }
    }

    /// The URL requests go to: `url` itself when it already ends in `/rerank`, else
    /// `url` + `/rerank`.
    pub fn endpoint(&self) -> String {
        let base = self.url.trim_end_matches('/');
        if base.ends_with("/rerank") {
            base.to_owned()
        } else {
            format!("{base}/rerank")
        }
    }
}

/// The key never appears in debug output.
impl std::fmt::Debug for RerankConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RerankConfig")
            .field("protocol", &self.protocol)
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_and_names() {
        let mut config = RerankConfig::new(RerankProtocol::Cohere, "https://api.cohere.com/v2/");
        assert_eq!(config.endpoint(), "https://api.cohere.com/v2/rerank");
        config.url = "http://localhost:7997/rerank".into();
        assert_eq!(config.endpoint(), "http://localhost:7997/rerank");
        assert_eq!(RerankProtocol::parse("jina"), Some(RerankProtocol::Cohere));
        assert_eq!(RerankProtocol::parse("tei"), Some(RerankProtocol::Tei));
        assert_eq!(RerankProtocol::parse("openai"), None);
        config.api_key = Some("sk-secret".into());
        assert!(!format!("{config:?}").contains("sk-secret"));
    }
}
