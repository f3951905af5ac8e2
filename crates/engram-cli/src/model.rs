//! Loading the embedding model for the CLI.

use std::path::PathBuf;
use std::time::Instant;

use engram::{Database, Embed, Engram};
use engram_embed::{Embedder, EngramEmbedder, StaticEmbedder, MINILM_INT8_ID, STATIC_MINILM_ID};
use engram_embed_remote::{Protocol, RemoteConfig, RemoteEmbedder};
use engram_hrana::ReqwestTransport;

use crate::{CliError, Target};

/// Where the model lives: `--model-dir`, else ~/.cache/engram/models.
pub fn model_dir(target: &Target) -> Option<PathBuf> {
    target.model_dir.clone().or_else(|| {
        std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/engram/models"))
    })
}

/// Loads the bundled model chosen by `--local-model` if its files are present.
pub fn load(target: &Target) -> Result<Option<Box<dyn Embed>>, CliError> {
    if target.no_embed {
        return Ok(None);
    }
    let static_model = target.local_model == "static";
    let id = if static_model {
        STATIC_MINILM_ID
    } else {
        MINILM_INT8_ID
    };
    let Some(dir) = model_dir(target).map(|d| d.join(id)) else {
        return Ok(None);
    };
    let weights = if static_model {
        "model.bin"
    } else {
        "model.onnx"
    };
    let (onnx, tokenizer) = (dir.join(weights), dir.join("tokenizer.json"));
    if !onnx.exists() || !tokenizer.exists() {
        if target.model_dir.is_some() {
            return Err(CliError::Usage(format!(
                "no model in {} (run scripts/fetch-model.sh)",
                dir.display()
            )));
        }
        return Ok(None);
    }
    let read = |p: &PathBuf| {
        std::fs::read(p).map_err(|e| CliError::Usage(format!("cannot read {}: {e}", p.display())))
    };
    let started = Instant::now();
    let (weights, tokenizer) = (read(&onnx)?, read(&tokenizer)?);
    let embedder: Box<dyn Embed> = if static_model {
        Box::new(
            StaticEmbedder::load(&weights, &tokenizer, id)
                .map_err(|e| CliError::Usage(e.to_string()))?,
        )
    } else {
        Box::new(EngramEmbedder::new(
            Embedder::load(&weights, &tokenizer, id).map_err(|e| CliError::Usage(e.to_string()))?,
        ))
    };
    if crate::output::verbose() {
        eprintln!("loaded {id} in {:.2?}", started.elapsed());
    }
    Ok(Some(embedder))
}

/// The remote provider configured by `--embed-provider`, if any.
pub fn remote(target: &Target) -> Result<Option<RemoteConfig>, CliError> {
    let Some(name) = target.embed_provider.as_deref() else {
        return Ok(None);
    };
    let protocol = Protocol::parse(name).ok_or_else(|| {
        CliError::Usage(format!(
            "unknown --embed-provider {name:?} (use openai or ollama)"
        ))
    })?;
    let missing = |flag: &str| CliError::Usage(format!("--embed-provider needs {flag}"));
    let url = target
        .embed_url
        .as_deref()
        .ok_or_else(|| missing("--embed-url"))?;
    let model = target
        .embed_model
        .as_deref()
        .ok_or_else(|| missing("--embed-model"))?;
    let dims = target.embed_dims.ok_or_else(|| missing("--embed-dims"))?;
    if dims == 0 {
        return Err(CliError::Usage("--embed-dims must be positive".into()));
    }
    let mut config = RemoteConfig::new(protocol, url, model, dims);
    config.api_key = target.embed_api_key.clone();
    Ok(Some(config))
}

/// Gives `engram` its embedder: the remote provider when configured, else the bundled
/// model when it is available.
pub fn attach<D: Database>(engram: Engram<D>, target: &Target) -> Result<Engram<D>, CliError> {
    if target.no_embed {
        return Ok(engram);
    }
    if let Some(config) = remote(target)? {
        let embedder = RemoteEmbedder::new(ReqwestTransport::new(), config);
        return Ok(engram.with_embedder(Box::new(embedder)));
    }
    Ok(match load(target)? {
        Some(embedder) => engram.with_embedder(embedder),
        None => engram,
    })
}

/// Uses the libSQL vector index for the dense path when there is an embedder (libSQL
/// servers and embedded libSQL files have it).
pub async fn with_vector_index<D: Database>(mut engram: Engram<D>) -> Result<Engram<D>, CliError> {
    if engram.embedding_model().is_some() {
        engram.enable_vector_index().await?;
    }
    Ok(engram)
}
