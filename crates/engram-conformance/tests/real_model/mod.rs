//! The real MiniLM model and engram instances that embed with it, for the test binaries
//! that need them (kept out of `common`, which every binary includes).
#![allow(dead_code)]

use std::path::PathBuf;
use std::rc::Rc;

use engram::{Database, Engram, EngramConfig, Host};
use engram_embed::{Embedder, EngramEmbedder, MINILM_INT8_ID};

/// all-MiniLM-L6-v2 int8 from `$ENGRAM_MODEL_DIR` or `~/.cache/engram/models`.
pub fn real_model() -> EngramEmbedder {
    let dir = std::env::var_os("ENGRAM_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/engram/models")
        })
        .join(MINILM_INT8_ID);
    let read = |n: &str| std::fs::read(dir.join(n)).expect("run scripts/fetch-model.sh");
    EngramEmbedder::new(
        Embedder::load(&read("model.onnx"), &read("tokenizer.json"), MINILM_INT8_ID).unwrap(),
    )
}

/// engram for `project` on `db`, embedding with `model`.
pub async fn open_with_model<D: Database>(
    db: D,
    project: &str,
    model: &Rc<EngramEmbedder>,
) -> Engram<D> {
    let config = EngramConfig {
        project_id: project.to_owned(),
    };
    Engram::open(db, config, Host::native())
        .await
        .unwrap()
        .with_embedder(Box::new(model.clone()))
}
