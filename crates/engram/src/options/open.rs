//! Opening an engram from options and the host's capabilities, in the one order that
//! works: the embedder before what needs it, the vector index last (it may cost a round
//! trip).

use engram_embed_remote::{RemoteConfig, RemoteEmbedder};
use engram_host::{Capabilities, Embed, Rerank, SharedTransport};
use engram_rerank_remote::{RemoteReranker, RerankConfig, RerankProtocol};
use engram_store::Database;

use super::{EmbedderKind, EmbedderOptions, EngramOptions, RerankerOptions};
use crate::{Engram, EngramConfig, EngramError};

impl<D: Database> Engram<D> {
    /// Opens engram on `db` as `options` say, with what the host gives it.
    ///
    /// Every host opens through this call, so each rule is checked once and each failure
    /// has one code: the options are validated (field-named `invalid_input`), the
    /// capabilities they need must be there (a remote provider needs
    /// [`Capabilities::http`]; `bundled` or `static` needs [`Capabilities::model`]), and
    /// the schema is migrated before anything else touches the database.
    pub async fn open_with(
        db: D,
        options: &EngramOptions,
        capabilities: Capabilities,
    ) -> Result<Self, EngramError> {
        options.validate()?;
        let Capabilities {
            host,
            http,
            model,
            reranker,
            llm,
        } = capabilities;
        let embedder = embedder(options.embedder.as_ref(), model, http.as_ref())?;
        let reranker = reranker_of(options.reranker.as_ref(), reranker, http.as_ref())?;
        if embedder.is_none() {
            for (field, wanted) in [
                ("residentVectors", options.resident_vectors),
                ("vectorIndex", options.vector_index),
            ] {
                if wanted {
                    return Err(EngramError::invalid(field, "needs an embedder"));
                }
            }
        }
        let config = EngramConfig {
            project_id: options.project().to_owned(),
        };
        let mut engram = Engram::open(db, config, host)
            .await?
            .with_retry_policy(options.retry_policy());
        if let Some(embedder) = embedder {
            engram = engram.with_embedder(embedder);
        }
        if let Some(reranker) = reranker {
            engram = engram.with_reranker(reranker);
        }
        if let Some(llm) = llm {
            engram = engram.with_llm(llm);
        }
        if options.resident_keywords {
            engram.enable_resident_keywords();
        }
        if options.resident_vectors {
            engram.enable_resident_vectors()?;
        }
        if options.vector_index {
            let from = options
                .vector_index_min_memories
                .unwrap_or(crate::VECTOR_INDEX_MIN_MEMORIES);
            engram.enable_vector_index_from(from).await?;
        }
        Ok(engram)
    }
}

/// The embedder the options and the host's model make.
fn embedder(
    options: Option<&EmbedderOptions>,
    model: Option<Box<dyn Embed>>,
    http: Option<&SharedTransport>,
) -> Result<Option<Box<dyn Embed>>, EngramError> {
    let Some(options) = options else {
        return Ok(model);
    };
    let kind = options
        .kind()
        .ok_or_else(|| EngramError::invalid("embedder.provider", "is not a known provider"))?;
    match kind {
        EmbedderKind::None => Ok(None),
        EmbedderKind::Bundled | EmbedderKind::Static => match model {
            Some(model) => Ok(Some(model)),
            None => Err(EngramError::Model(format!(
                "embedder.provider is {:?} but the host loaded no model",
                options.provider
            ))),
        },
        EmbedderKind::Remote(protocol) => {
            if model.is_some() {
                return Err(EngramError::invalid(
                    "embedder.provider",
                    "conflicts with the model given to open: choose one",
                ));
            }
            let http = http.ok_or_else(|| {
                EngramError::invalid("embedder.provider", "this host has no HTTP to reach it")
            })?;
            let mut config = RemoteConfig::new(
                protocol,
                options.url.as_deref().unwrap_or_default(),
                options.model.as_deref().unwrap_or_default(),
                options.dims.unwrap_or_default() as usize,
            );
            config.api_key = options.api_key.clone();
            config.request_dims = options.request_dims;
            Ok(Some(Box::new(RemoteEmbedder::new(http.clone(), config))))
        }
    }
}

/// The reranker the options or the host give; both at once is a conflict.
fn reranker_of(
    options: Option<&RerankerOptions>,
    host_reranker: Option<Box<dyn Rerank>>,
    http: Option<&SharedTransport>,
) -> Result<Option<Box<dyn Rerank>>, EngramError> {
    let Some(options) = options else {
        return Ok(host_reranker);
    };
    if host_reranker.is_some() {
        return Err(EngramError::invalid(
            "reranker",
            "give either a reranker of the host's or a rerank service, not both",
        ));
    }
    let protocol = RerankProtocol::parse(&options.provider)
        .ok_or_else(|| EngramError::invalid("reranker.provider", "is not a known provider"))?;
    let http = http.ok_or_else(|| {
        EngramError::invalid("reranker.provider", "this host has no HTTP to reach it")
    })?;
    let mut config = RerankConfig::new(protocol, options.url.clone().unwrap_or_default());
    config.model = options.model.clone();
    config.api_key = options.api_key.clone();
    Ok(Some(Box::new(RemoteReranker::new(http.clone(), config))))
}
