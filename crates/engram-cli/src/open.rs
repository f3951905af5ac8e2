//! Opening engram from the command line: the global flags decoded into the one options
//! type every host opens with, and the capabilities a native host has (its clock and
//! randomness, reqwest for remote providers, the bundled model from the model folder).

use engram::{
    Capabilities, Database, EmbedderKind, EmbedderOptions, Engram, EngramOptions, Host,
    RerankerOptions, SharedTransport, ValidationError,
};
use engram_hrana::ReqwestTransport;

use crate::{model, CliError, Target};

/// The options the flags describe, validated; violations are reported by flag name.
pub fn options(target: &Target) -> Result<EngramOptions, CliError> {
    let local = target.url.is_none();
    let options = EngramOptions {
        url: target.url.clone(),
        auth_token: target.url.as_ref().and(target.auth_token.clone()),
        local,
        path: local.then(|| target.db.clone()),
        project_id: Some(target.project.clone()),
        embedder: embedder(target)?,
        reranker: target
            .rerank_provider
            .as_ref()
            .map(|provider| RerankerOptions {
                provider: provider.clone(),
                url: target.rerank_url.clone(),
                model: target.rerank_model.clone(),
                api_key: target.rerank_api_key.clone(),
            }),
        max_request_bytes: target.max_request_bytes,
        retry_delays_ms: target.retry_delays_ms.clone(),
        ..EngramOptions::default()
    };
    options.validate().map_err(|e| flag_error(&e, target))?;
    Ok(options)
}

/// The embedder the flags name: none with `--no-embed`, the remote provider of
/// `--embed-provider`, else whatever bundled model is found (decided when loading).
fn embedder(target: &Target) -> Result<Option<EmbedderOptions>, CliError> {
    if target.no_embed {
        return Ok(Some(EmbedderOptions::provider("none")));
    }
    let Some(provider) = &target.embed_provider else {
        return Ok(None);
    };
    let dims = target
        .embed_dims
        .map(u32::try_from)
        .transpose()
        .map_err(|_| CliError::Usage("--embed-dims is too large".into()))?;
    Ok(Some(EmbedderOptions {
        provider: provider.clone(),
        url: target.embed_url.clone(),
        model: target.embed_model.clone(),
        dims,
        api_key: target.embed_api_key.clone(),
        request_dims: false,
    }))
}

/// A native host's capabilities for `options`: the bundled model is loaded when the
/// options leave the embedder to it and its files are there.
pub fn capabilities(target: &Target, options: &EngramOptions) -> Result<Capabilities, CliError> {
    let mut capabilities =
        Capabilities::new(native_host()).with_http(SharedTransport::new(ReqwestTransport::new()));
    let wants_local_model = match options.embedder.as_ref().and_then(EmbedderOptions::kind) {
        None => true,
        Some(kind) => matches!(kind, EmbedderKind::Bundled | EmbedderKind::Static),
    };
    if wants_local_model {
        if let Some(model) = model::load(target)? {
            capabilities = capabilities.with_model(model);
        }
    }
    Ok(capabilities)
}

/// The operating system's clock, randomness and timer, and a probe of the files under the
/// project's root (the working directory's), so memories about deleted files are not
/// injected.
fn native_host() -> Host {
    let host = Host::native();
    match std::env::current_dir() {
        Ok(cwd) => {
            host.with_file_probe(engram::DirectoryProbe::new(crate::hook::project_root(&cwd)))
        }
        Err(_) => host,
    }
}

/// Opens engram on `db` as the flags say. Dense searches use the libSQL vector index
/// whenever there is an embedder (libSQL servers and files have one).
pub async fn open<D: Database>(db: D, target: &Target) -> Result<Engram<D>, CliError> {
    let options = options(target)?;
    let capabilities = capabilities(target, &options)?;
    let engram = open_with(db, options, capabilities).await?;
    hold_trust_level(&engram, target).await?;
    Ok(engram)
}

/// Sets the trust level the project's config file names, when the database holds another
/// (one read when it holds that level already).
async fn hold_trust_level<D: Database>(
    engram: &Engram<D>,
    target: &Target,
) -> Result<(), CliError> {
    if let Some(level) = target.trust_level {
        if engram.trust_level().await?.level != level {
            engram.set_trust_level(level).await?;
        }
    }
    Ok(())
}

/// Like [`open`], but a bundled model that cannot be loaded (its files deleted or damaged)
/// leaves engram keyword-only instead of failing; the model's error comes back beside it.
/// For callers that must answer something (a hook) rather than stop.
pub async fn open_keyword_fallback<D: Database>(
    db: D,
    target: &Target,
) -> Result<(Engram<D>, Option<CliError>), CliError> {
    let options = options(target)?;
    let (capabilities, model_error) = match capabilities(target, &options) {
        Ok(capabilities) => (capabilities, None),
        Err(error) => {
            let keyword = Target {
                no_embed: true,
                ..target.clone()
            };
            (capabilities(&keyword, &options)?, Some(error))
        }
    };
    let engram = open_with(db, options, capabilities).await?;
    hold_trust_level(&engram, target).await?;
    Ok((engram, model_error))
}

async fn open_with<D: Database>(
    db: D,
    mut options: EngramOptions,
    capabilities: Capabilities,
) -> Result<Engram<D>, CliError> {
    let remote = matches!(
        options.embedder.as_ref().and_then(EmbedderOptions::kind),
        Some(EmbedderKind::Remote(_))
    );
    options.vector_index = remote || capabilities.model.is_some();
    Ok(Engram::open_with(db, &options, capabilities).await?)
}

/// The flag each option comes from.
fn flag_of(field: &str) -> &'static str {
    match field {
        "url" => "--url",
        "authToken" => "--auth-token",
        "local" | "path" => "--db",
        "projectId" => "--project",
        "maxRequestBytes" => "--max-request-bytes",
        "retryDelaysMs" => "--retry-delays-ms",
        "embedder.provider" => "--embed-provider",
        "embedder.url" => "--embed-url",
        "embedder.model" => "--embed-model",
        "embedder.dims" => "--embed-dims",
        "embedder.apiKey" => "--embed-api-key",
        "reranker.provider" => "--rerank-provider",
        "reranker.url" => "--rerank-url",
        "reranker.model" => "--rerank-model",
        "reranker.apiKey" => "--rerank-api-key",
        _ => "an option",
    }
}

/// The options' violations said in terms of the flags, with the value given where it is
/// a name (`invalid --rerank-provider "bm25": must be …`).
fn flag_error(error: &ValidationError, target: &Target) -> CliError {
    let given = |field: &str| match field {
        "embedder.provider" => target.embed_provider.clone(),
        "reranker.provider" => target.rerank_provider.clone(),
        _ => None,
    };
    let parts: Vec<String> = error
        .violations
        .iter()
        .map(|v| {
            let flag = flag_of(&v.field);
            match given(&v.field) {
                Some(value) => format!("invalid {flag} {value:?}: {}", v.problem),
                None => format!("{flag} {}", v.problem),
            }
        })
        .collect();
    CliError::Usage(parts.join("; "))
}
