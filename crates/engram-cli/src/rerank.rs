//! The rerank stage's service, from `--rerank-provider` and its flags.

use engram::{Database, Engram};
use engram_hrana::ReqwestTransport;
use engram_rerank_remote::{RemoteReranker, RerankConfig, RerankProtocol};

use crate::{CliError, Target};

/// The rerank service configured by `--rerank-provider`, if any.
pub fn config(target: &Target) -> Result<Option<RerankConfig>, CliError> {
    let Some(name) = target.rerank_provider.as_deref() else {
        return Ok(None);
    };
    let protocol = RerankProtocol::parse(name).ok_or_else(|| {
        CliError::Usage(format!(
            "unknown --rerank-provider {name:?} (use cohere — also jina, voyage, vllm, infinity — or tei)"
        ))
    })?;
    let url = target
        .rerank_url
        .as_deref()
        .ok_or_else(|| CliError::Usage("--rerank-provider needs --rerank-url".into()))?;
    let mut config = RerankConfig::new(protocol, url);
    config.model = target.rerank_model.clone();
    config.api_key = target.rerank_api_key.clone();
    if protocol == RerankProtocol::Cohere && config.model.is_none() {
        return Err(CliError::Usage(
            "--rerank-provider cohere needs --rerank-model (the service's model name)".into(),
        ));
    }
    Ok(Some(config))
}

/// Gives `engram` the configured rerank service: searches then reorder their best 20 by
/// its ranks fused with their own (a failed call keeps the order and says why in the
/// response's warnings).
pub fn attach<D: Database>(engram: Engram<D>, target: &Target) -> Result<Engram<D>, CliError> {
    Ok(match config(target)? {
        Some(config) => engram.with_reranker(Box::new(RemoteReranker::new(
            ReqwestTransport::new(),
            config,
        ))),
        None => engram,
    })
}
