//! A disk cache of vectors for evaluation runs: embedding a corpus costs minutes, scoring
//! it seconds, so vectors persist between runs (and between pytest versions that share most
//! functions). Keyed by sha256 of model id and text; a file of fixed-size records.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use engram::{Embed, EmbedFuture};
use sha2::{Digest, Sha256};

/// An embedder that serves cached vectors and embeds only the misses; optionally embeds
/// only each text's first `head_chars` characters.
pub struct CachedEmbedder {
    inner: Box<dyn Embed>,
    path: Option<PathBuf>,
    cache: RefCell<HashMap<[u8; 32], Vec<f32>>>,
    pending: RefCell<Vec<([u8; 32], Vec<f32>)>>,
    /// Characters of each text embedded; `None` embeds whole texts.
    pub head_chars: Cell<Option<usize>>,
    /// Texts embedded by the model (cache misses).
    pub misses: Cell<usize>,
}

impl CachedEmbedder {
    /// Wraps `inner`, loading the cache file of its model from `dir` (if any).
    pub fn new(inner: Box<dyn Embed>, dir: Option<PathBuf>) -> Self {
        let path = dir.map(|d| {
            let safe: String = inner
                .model_id()
                .chars()
                .map(|c| {
                    if c.is_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            d.join(format!("{safe}.vectors"))
        });
        let dims = inner.dims();
        let mut cache = HashMap::new();
        if let Some(bytes) = path.as_ref().and_then(|p| std::fs::read(p).ok()) {
            let record = 32 + 4 * dims;
            for chunk in bytes.chunks_exact(record) {
                let mut key = [0u8; 32];
                key.copy_from_slice(&chunk[..32]);
                let vector = chunk[32..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                cache.insert(key, vector);
            }
        }
        CachedEmbedder {
            inner,
            path,
            cache: RefCell::new(cache),
            pending: RefCell::new(Vec::new()),
            head_chars: Cell::new(None),
            misses: Cell::new(0),
        }
    }

    /// Vectors in the cache.
    pub fn len(&self) -> usize {
        self.cache.borrow().len()
    }

    /// Appends new vectors to the cache file.
    pub fn flush(&self) -> std::io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let pending = std::mem::take(&mut *self.pending.borrow_mut());
        if pending.is_empty() {
            return Ok(());
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        let mut bytes = Vec::with_capacity(pending.len() * (32 + 4 * self.inner.dims()));
        for (key, vector) in pending {
            bytes.extend_from_slice(&key);
            for x in vector {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
        file.write_all(&bytes)
    }

    fn key(&self, text: &str) -> [u8; 32] {
        let mut hasher = Sha256::new();
        hasher.update(self.inner.model_id().as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.finalize().into()
    }
}

impl Embed for CachedEmbedder {
    fn model_id(&self) -> &str {
        self.inner.model_id()
    }

    fn dims(&self) -> usize {
        self.inner.dims()
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        Box::pin(async move {
            let texts: Vec<String> = texts
                .iter()
                .map(|t| match self.head_chars.get() {
                    Some(n) => t.chars().take(n).collect(),
                    None => t.clone(),
                })
                .collect();
            let keys: Vec<[u8; 32]> = texts.iter().map(|t| self.key(t)).collect();
            let missing: Vec<usize> = (0..texts.len())
                .filter(|&i| !self.cache.borrow().contains_key(&keys[i]))
                .collect();
            if !missing.is_empty() {
                let batch: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
                let vectors = self.inner.embed(&batch).await?;
                self.misses.set(self.misses.get() + vectors.len());
                for (&i, v) in missing.iter().zip(vectors) {
                    self.cache.borrow_mut().insert(keys[i], v.clone());
                    self.pending.borrow_mut().push((keys[i], v));
                }
                if self.pending.borrow().len() >= 256 {
                    self.flush().map_err(|e| format!("vector cache: {e}"))?;
                }
            }
            let cache = self.cache.borrow();
            keys.iter()
                .map(|k| {
                    cache
                        .get(k)
                        .cloned()
                        .ok_or_else(|| "vector cache miss".to_owned())
                })
                .collect()
        })
    }
}
