//! Loading the embedding model for the CLI.

use std::path::PathBuf;
use std::time::Instant;

use engram::Embed;
use engram_embed::{Embedder, EngramEmbedder, StaticEmbedder, MINILM_INT8_ID, STATIC_MINILM_ID};

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
