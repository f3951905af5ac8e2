//! The in-sandbox embedder: a small sentence-embedding transformer (all-MiniLM-L6-v2,
//! int8 weight-only ONNX) run by tract, with its WordPiece tokenizer, mean pooling over the
//! attention mask and L2 normalization — the sentence-transformers recipe, reproduced
//! within cosine ≥ 0.99 of the fp32 reference (`tests/vectors/embeddings.json`).
//!
//! Pure computation: the host hands in the model and tokenizer bytes (from a file, a URL, a
//! Worker binding…); nothing here reads files or the network.
//!
//! **Long texts.** The model sees at most 256 tokens. Longer texts are split into windows of
//! 254 word pieces with a stride of 127 (each window overlaps half of the previous one), each
//! window is embedded as `[CLS] window [SEP]`, and the mean-pooled window vectors are averaged
//! before normalization, so every part of a long text contributes.

#![warn(missing_docs)]

#[cfg(feature = "transformer")]
mod adapter;
#[cfg(feature = "transformer")]
mod dequantize;
mod pooling;
mod static_model;
#[cfg(feature = "transformer")]
mod transformer;

#[cfg(feature = "transformer")]
pub use adapter::EngramEmbedder;
pub use pooling::{l2_normalize, windows};
pub use static_model::{StaticEmbedder, STATIC_MINILM_ID};
#[cfg(feature = "transformer")]
pub use transformer::{Embedder, Footprint};

/// The id engram stores with vectors of the shipped model.
pub const MINILM_INT8_ID: &str = "all-minilm-l6-v2-int8";

/// Most tokens the model attends to at once, including `[CLS]` and `[SEP]`.
pub const MAX_TOKENS: usize = 256;

/// Sequence lengths [`Footprint::Fast`] compiles plans for; inputs are padded up to the next
/// one. A plan specialized to a fixed length runs faster than one plan over a symbolic
/// length (what [`Footprint::Compact`] uses), at the price of a packed copy of the
/// matrices per plan.
pub const BUCKETS: [usize; 5] = [16, 32, 64, 128, MAX_TOKENS];

/// What went wrong while loading or running the model.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The ONNX bytes could not be parsed or optimized.
    #[error("cannot load the embedding model: {0}")]
    Model(String),
    /// The tokenizer JSON could not be parsed.
    #[error("cannot load the tokenizer: {0}")]
    Tokenizer(String),
    /// Inference failed.
    #[error("embedding failed: {0}")]
    Inference(String),
}

/// Identity and shape of an embedding model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    /// Stable id stored with every vector (`all-minilm-l6-v2-int8`).
    pub model_id: String,
    /// Output dimensions.
    pub dims: usize,
}

/// Parses a Hugging Face `tokenizer.json` with its padding and truncation turned off: the
/// models pad and window texts themselves.
pub(crate) fn load_tokenizer(json: &[u8]) -> Result<tokenizers::Tokenizer, EmbedError> {
    let mut tokenizer = tokenizers::Tokenizer::from_bytes(json)
        .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(None)
        .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
    Ok(tokenizer)
}
