//! The model files scripts/fetch-model.sh puts in $ENGRAM_MODEL_DIR (default
//! ~/.cache/engram/models).

use std::path::PathBuf;

/// Reads `name` from the folder of model `id`, with a hint when it is missing.
pub fn read_model_file(id: &str, name: &str) -> Vec<u8> {
    let dir = match std::env::var_os("ENGRAM_MODEL_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/engram/models"),
    }
    .join(id);
    std::fs::read(dir.join(name)).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run scripts/fetch-model.sh first",
            dir.join(name).display()
        )
    })
}
