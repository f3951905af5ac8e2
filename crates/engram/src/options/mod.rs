//! How a host opens engram: one options type, the same JSON in every host (the npm
//! package's `createMemory`, the component's `open`, the Worker's settings and the CLI's
//! flags), validated once here with errors that name the field.

mod open;

use engram_core::ValidationError;
use serde::{Deserialize, Serialize};

/// The project memories belong to when the options name none.
pub const DEFAULT_PROJECT: &str = "default";

/// Retries a write may have: with the longest wait each, a failing write returns within
/// ten minutes.
const MAX_RETRIES: usize = 10;
/// The longest wait between two attempts.
const MAX_RETRY_DELAY_MS: u32 = 60_000;
/// The largest write buffer (each entry holds a write's statements in memory).
const MAX_WRITE_BUFFER: u32 = 10_000;

/// Everything that decides how an engram is opened.
///
/// The database fields (`url`, `authToken`, `local`, `path`) say where memories live; the
/// host builds its database client from [`EngramOptions::database`] and hands it to
/// [`Engram::open_with`](crate::Engram::open_with) with the rest. Unknown fields are
/// rejected, so a misspelt option is an error rather than silently ignored.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EngramOptions {
    /// A libSQL server (`http://`, `https://` or `libsql://`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The server's bearer token; never serialized back out.
    #[serde(default, skip_serializing)]
    pub auth_token: Option<String>,
    /// The largest request body to send the server (default 1 MiB); a larger transaction
    /// (a repository's code graph) goes in pieces on one stream, still one transaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_request_bytes: Option<u64>,
    /// The waits between a failed write's retries, in milliseconds (default 1000, 2000,
    /// 4000, 8000); `[]` for one attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_delays_ms: Option<Vec<u32>>,
    /// Writes held in memory while the database is out of reach (default 50; 0 turns the
    /// buffer off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_buffer: Option<u32>,
    /// An embedded database instead of a server.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub local: bool,
    /// The embedded database's file, where the host has files; without it the embedded
    /// database lives in memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The project every memory of this engram belongs to (default `default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
    /// Which embedder gives memories vectors; absent: the model the host loaded, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedder: Option<EmbedderOptions>,
    /// A rerank service for the best candidates of each search.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reranker: Option<RerankerOptions>,
    /// Keep the project's vectors in memory for dense searches (long-lived hosts; needs an
    /// embedder).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resident_vectors: bool,
    /// Keep the keyword table's postings in memory for keyword searches (long-lived hosts).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resident_keywords: bool,
    /// Dense searches use libSQL's vector index where the database has one (needs an
    /// embedder).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub vector_index: bool,
    /// Live memories from which searches consult the vector index (default 3,000; below
    /// it the exact scan is faster). Only with `vectorIndex`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_index_min_memories: Option<u64>,
}

impl std::fmt::Debug for EngramOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Everything but the secrets, which are only said to be there.
        f.debug_struct("EngramOptions")
            .field("url", &self.url)
            .field("auth_token", &self.auth_token.as_ref().map(|_| "…"))
            .field("max_request_bytes", &self.max_request_bytes)
            .field("retry_delays_ms", &self.retry_delays_ms)
            .field("write_buffer", &self.write_buffer)
            .field("local", &self.local)
            .field("path", &self.path)
            .field("project_id", &self.project_id)
            .field("embedder", &self.embedder)
            .field("reranker", &self.reranker)
            .field("resident_vectors", &self.resident_vectors)
            .field("resident_keywords", &self.resident_keywords)
            .field("vector_index", &self.vector_index)
            .field("vector_index_min_memories", &self.vector_index_min_memories)
            .finish()
    }
}

/// Which embedder gives memories their vectors.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EmbedderOptions {
    /// `bundled` (the transformer the host loaded), `static` (the distilled edge model the
    /// host loaded), `openai` (any OpenAI-compatible `/embeddings` endpoint), `ollama`, or
    /// `none` (keyword search only).
    #[serde(default)]
    pub provider: String,
    /// The remote provider's base URL or full endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The remote provider's model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The vector length the remote model returns; every answer is checked against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dims: Option<u32>,
    /// The remote provider's key; never serialized back out.
    #[serde(default, skip_serializing)]
    pub api_key: Option<String>,
    /// Ask an OpenAI-compatible provider for `dims` dimensions (models that can shorten).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub request_dims: bool,
}

impl std::fmt::Debug for EmbedderOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbedderOptions")
            .field("provider", &self.provider)
            .field("url", &self.url)
            .field("model", &self.model)
            .field("dims", &self.dims)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .field("request_dims", &self.request_dims)
            .finish()
    }
}

/// The embedder [`EmbedderOptions::provider`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbedderKind {
    /// No embedder: keyword search only.
    None,
    /// The transformer the host loaded.
    Bundled,
    /// The static edge model the host loaded.
    Static,
    /// A remote provider over the host's HTTP.
    Remote(engram_embed_remote::Protocol),
}

impl EmbedderOptions {
    /// An embedder option naming only its provider (`bundled`, `static`, `none`).
    pub fn provider(provider: &str) -> Self {
        EmbedderOptions {
            provider: provider.to_owned(),
            url: None,
            model: None,
            dims: None,
            api_key: None,
            request_dims: false,
        }
    }

    /// Which embedder this is, once validated.
    pub fn kind(&self) -> Option<EmbedderKind> {
        match self.provider.as_str() {
            "none" => Some(EmbedderKind::None),
            "bundled" => Some(EmbedderKind::Bundled),
            "static" => Some(EmbedderKind::Static),
            name => engram_embed_remote::Protocol::parse(name).map(EmbedderKind::Remote),
        }
    }
}

/// A rerank service reached over the host's HTTP.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RerankerOptions {
    /// `cohere` (the `/rerank` shape Cohere, Jina, Voyage, vLLM, Infinity and llama.cpp
    /// share; those names are accepted too) or `tei` (text-embeddings-inference).
    #[serde(default)]
    pub provider: String,
    /// Base URL or the full `/rerank` URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The service's model name; required except for `tei`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The service's key; never serialized back out.
    #[serde(default, skip_serializing)]
    pub api_key: Option<String>,
}

impl std::fmt::Debug for RerankerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RerankerOptions")
            .field("provider", &self.provider)
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .finish()
    }
}

/// Where memories live, from validated options.
#[derive(Clone, PartialEq, Eq)]
pub enum DatabaseTarget {
    /// A libSQL server over HTTP.
    Remote {
        /// The server's URL.
        url: String,
        /// Its bearer token.
        auth_token: Option<String>,
        /// The largest request body to send it, when the options set one.
        max_request_bytes: Option<u64>,
    },
    /// An embedded database: a file where `path` is given, else in memory.
    Local {
        /// The file.
        path: Option<String>,
    },
}

impl std::fmt::Debug for DatabaseTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DatabaseTarget::Remote { url, .. } => write!(f, "Remote({url})"),
            DatabaseTarget::Local { path } => write!(f, "Local({path:?})"),
        }
    }
}

impl EngramOptions {
    /// Parses options from untrusted JSON and validates them, naming the failing field.
    pub fn from_json(json: &str) -> Result<EngramOptions, ValidationError> {
        // serde would also take a struct from an array of its fields.
        if !json.trim_start().starts_with('{') {
            return Err(ValidationError::field("(root)", "must be an object"));
        }
        engram_core::validate::from_json_checked(json, EngramOptions::validate)
    }

    /// The project id, or the default.
    pub fn project(&self) -> &str {
        self.project_id.as_deref().unwrap_or(DEFAULT_PROJECT)
    }

    /// How writes are retried and buffered.
    pub fn retry_policy(&self) -> crate::RetryPolicy {
        let default = crate::RetryPolicy::default();
        crate::RetryPolicy {
            delays_ms: self.retry_delays_ms.clone().unwrap_or(default.delays_ms),
            buffer: self.write_buffer.unwrap_or(default.buffer),
        }
    }

    /// Where memories live. Call after [`EngramOptions::validate`] (which `from_json`
    /// does); unvalidated options that name neither are treated as in-memory local.
    pub fn database(&self) -> DatabaseTarget {
        match &self.url {
            Some(url) if !self.local => DatabaseTarget::Remote {
                url: url.clone(),
                auth_token: self.auth_token.clone(),
                max_request_bytes: self.max_request_bytes,
            },
            _ => DatabaseTarget::Local {
                path: self.path.clone(),
            },
        }
    }

    /// Checks every rule the options must keep; every broken one is named.
    pub fn validate(&self) -> Result<(), ValidationError> {
        let mut violations = Vec::new();
        let mut fail = |field: &str, problem: &str| {
            violations.push(engram_core::Violation {
                field: field.to_owned(),
                problem: problem.to_owned(),
            })
        };
        match (&self.url, self.local) {
            (Some(_), true) => fail("local", "conflicts with url"),
            (None, false) => fail("url", "is required unless local is true"),
            (Some(url), false) if !is_database_url(url) => {
                fail("url", "must start with http://, https:// or libsql://")
            }
            _ => {}
        }
        if self.path.is_some() && !self.local {
            fail("path", "needs local: true");
        }
        match self.max_request_bytes {
            Some(_) if self.url.is_none() => fail("maxRequestBytes", "needs url"),
            Some(bytes) if bytes < 4096 => fail("maxRequestBytes", "must be at least 4096"),
            _ => {}
        }
        if let Some(delays) = &self.retry_delays_ms {
            if delays.len() > MAX_RETRIES {
                fail("retryDelaysMs", "must have at most 10 entries");
            }
            if delays.iter().any(|&d| d > MAX_RETRY_DELAY_MS) {
                fail("retryDelaysMs", "each wait must be at most 60000 ms");
            }
        }
        if self.write_buffer.is_some_and(|n| n > MAX_WRITE_BUFFER) {
            fail("writeBuffer", "must be at most 10000");
        }
        if let Some(project) = &self.project_id {
            if project.trim().is_empty() {
                fail("projectId", "must not be empty");
            } else if project.chars().count() > engram_core::validate::MAX_ID_CHARS {
                fail("projectId", "must be at most 256 characters");
            } else if project.chars().any(char::is_control) {
                fail("projectId", "must not contain control characters");
            }
        }
        let embedder = self.embedder.as_ref();
        if let Some(embedder) = embedder {
            embedder.check(&mut fail);
        }
        if let Some(reranker) = &self.reranker {
            reranker.check(&mut fail);
        }
        if self.vector_index_min_memories.is_some() && !self.vector_index {
            fail("vectorIndexMinMemories", "needs vectorIndex: true");
        }
        if violations.is_empty() {
            Ok(())
        } else {
            Err(ValidationError { violations })
        }
    }
}

impl EmbedderOptions {
    fn check(&self, fail: &mut impl FnMut(&str, &str)) {
        if self.provider.is_empty() {
            fail("embedder.provider", "is required");
            return;
        }
        let Some(kind) = self.kind() else {
            fail(
                "embedder.provider",
                "must be \"bundled\", \"static\", \"openai\", \"ollama\" or \"none\"",
            );
            return;
        };
        let remote = matches!(kind, EmbedderKind::Remote(_));
        if remote {
            if self.url.as_deref().is_none_or(|u| u.trim().is_empty()) {
                fail("embedder.url", "is required");
            } else if self
                .url
                .as_deref()
                .is_some_and(|u| !(u.starts_with("http://") || u.starts_with("https://")))
            {
                fail("embedder.url", "must start with http:// or https://");
            }
            if self.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
                fail("embedder.model", "is required");
            }
            match self.dims {
                None => fail("embedder.dims", "is required"),
                Some(d) if !(1..=65_536).contains(&d) => {
                    fail("embedder.dims", "must be a positive integer")
                }
                Some(_) => {}
            }
        } else {
            for (field, given) in [
                ("embedder.url", self.url.is_some()),
                ("embedder.model", self.model.is_some()),
                ("embedder.dims", self.dims.is_some()),
                ("embedder.apiKey", self.api_key.is_some()),
            ] {
                if given {
                    fail(field, "is only for a remote provider (openai, ollama)");
                }
            }
        }
    }
}

impl RerankerOptions {
    fn check(&self, fail: &mut impl FnMut(&str, &str)) {
        match engram_rerank_remote::RerankProtocol::parse(&self.provider) {
            None if self.provider.is_empty() => fail("reranker.provider", "is required"),
            None => fail(
                "reranker.provider",
                "must be \"cohere\" (also \"jina\", \"voyage\", \"vllm\", \"infinity\") or \"tei\"",
            ),
            Some(engram_rerank_remote::RerankProtocol::Cohere) if self.model.is_none() => {
                fail("reranker.model", "is required for this provider")
            }
            Some(_) => {}
        }
        match self.url.as_deref() {
            None | Some("") => fail("reranker.url", "is required"),
            Some(url) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                fail("reranker.url", "must start with http:// or https://")
            }
            Some(_) => {}
        }
    }
}

fn is_database_url(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://") || url.starts_with("libsql://")
}

#[cfg(test)]
mod tests;
