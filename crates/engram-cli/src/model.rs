//! Loading the embedding model for the CLI.

use std::path::PathBuf;
use std::time::Instant;

use engram::{Database, Engram};
use engram_embed::{Embedder, EngramEmbedder, MINILM_INT8_ID};

use crate::{CliError, Target};

/// Where the model lives: `--model-dir`, else ~/.cache/engram/models.
pub fn model_dir(target: &Target) -> Option<PathBuf> {
    target.model_dir.clone().or_else(|| {
        std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/engram/models"))
    })
}

/// Loads the shipped model if its files are present.
pub fn load(target: &Target) -> Result<Option<Embedder>, CliError> {
    if target.no_embed {
        return Ok(None);
    }
    let Some(dir) = model_dir(target).map(|d| d.join(MINILM_INT8_ID)) else {
        return Ok(None);
    };
    let (onnx, tokenizer) = (dir.join("model.onnx"), dir.join("tokenizer.json"));
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
    let embedder = Embedder::load(&read(&onnx)?, &read(&tokenizer)?, MINILM_INT8_ID)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    if std::env::var_os("ENGRAM_VERBOSE").is_some() {
        eprintln!("loaded {MINILM_INT8_ID} in {:.2?}", started.elapsed());
    }
    Ok(Some(embedder))
}

/// Gives `engram` the model when it is available.
pub fn attach<D: Database>(engram: Engram<D>, target: &Target) -> Result<Engram<D>, CliError> {
    Ok(match load(target)? {
        Some(embedder) => engram.with_embedder(Box::new(EngramEmbedder::new(embedder))),
        None => engram,
    })
}
