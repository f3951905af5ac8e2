//! Which provider, where, and what it must answer.

/// Most texts sent in one request; longer batches are split.
pub const MAX_TEXTS_PER_REQUEST: usize = 64;

/// The wire protocol of a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `POST {base}/embeddings` with `{"model", "input": [...]}`, answering
    /// `{"data": [{"index", "embedding"}]}` (OpenAI, Azure-style proxies, vLLM, LM Studio…).
    OpenAiCompatible,
    /// `POST {base}/api/embed` with `{"model", "input": [...]}`, answering
    /// `{"embeddings": [[...]]}`.
    Ollama,
}

impl Protocol {
    /// The short name used in model ids and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::OpenAiCompatible => "openai",
            Protocol::Ollama => "ollama",
        }
    }

    /// Parses `openai` or `ollama`.
    pub fn parse(name: &str) -> Option<Protocol> {
        match name {
            "openai" | "openai-compatible" => Some(Protocol::OpenAiCompatible),
            "ollama" => Some(Protocol::Ollama),
            _ => None,
        }
    }

    fn path(self) -> &'static str {
        match self {
            Protocol::OpenAiCompatible => "/embeddings",
            Protocol::Ollama => "/api/embed",
        }
    }
}

/// Settings of a [`RemoteEmbedder`](crate::RemoteEmbedder).
#[derive(Clone, PartialEq, Eq)]
pub struct RemoteConfig {
    /// The wire protocol.
    pub protocol: Protocol,
    /// The base URL (`https://api.openai.com/v1`, `http://127.0.0.1:11434`) or the full
    /// endpoint URL.
    pub url: String,
    /// The provider's model name.
    pub model: String,
    /// The vector length every answer must have.
    pub dims: usize,
    /// Sent as `Authorization: Bearer …`; never logged or echoed in errors.
    pub api_key: Option<String>,
    /// Also send `"dimensions": dims` (OpenAI `text-embedding-3-*` shorten their vectors on
    /// request; many compatible servers reject the field, so it is off by default).
    pub request_dims: bool,
}

impl RemoteConfig {
    /// A configuration without an API key, not requesting a dimension count.
    pub fn new(protocol: Protocol, url: &str, model: &str, dims: usize) -> Self {
        RemoteConfig {
            protocol,
            url: url.to_owned(),
            model: model.to_owned(),
            dims,
            api_key: None,
            request_dims: false,
        }
    }

    /// The endpoint requests go to.
    pub fn endpoint(&self) -> String {
        let base = self.url.trim_end_matches('/');
        let path = self.protocol.path();
        if base.ends_with(path) {
            base.to_owned()
        } else {
            format!("{base}{path}")
        }
    }
}

impl std::fmt::Debug for RemoteConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteConfig")
            .field("protocol", &self.protocol)
            .field("url", &self.url)
            .field("model", &self.model)
            .field("dims", &self.dims)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("request_dims", &self.request_dims)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_appends_the_protocol_path_once() {
        let mut c = RemoteConfig::new(Protocol::OpenAiCompatible, "http://h/v1/", "m", 3);
        assert_eq!(c.endpoint(), "http://h/v1/embeddings");
        c.url = "http://h/v1/embeddings".into();
        assert_eq!(c.endpoint(), "http://h/v1/embeddings");
        let o = RemoteConfig::new(Protocol::Ollama, "http://h:11434", "m", 3);
        assert_eq!(o.endpoint(), "http://h:11434/api/embed");
    }

    #[test]
    fn debug_never_shows_the_key() {
        let mut c = RemoteConfig::new(Protocol::OpenAiCompatible, "http://h", "m", 3);
        c.api_key = Some("sk-very-secret".into());
        assert!(!format!("{c:?}").contains("very-secret"));
    }
}
