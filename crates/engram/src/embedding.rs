//! The embedder as engram uses it: answers checked, failures counted by the circuit
//! breaker, recent vectors served from a cache.

use std::cell::RefCell;

use crate::breaker::{Breaker, Circuit, FAILURES_TO_OPEN};
use crate::cache::VectorCache;
use crate::embed::embed_checked;
use engram_host::{Clock, Embed};

/// Why no vectors came back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum EmbedFailure {
    /// The circuit is open; the embedder was not called.
    CircuitOpen {
        /// When a trial call will be let through (Unix milliseconds).
        retry_at: i64,
    },
    /// The embedder failed or answered something unusable.
    Failed(String),
}

impl std::fmt::Display for EmbedFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmbedFailure::CircuitOpen { retry_at } => write!(
                f,
                "embedder unavailable after {FAILURES_TO_OPEN} consecutive failures; \
                 next attempt after {}",
                engram_core::time::rfc3339_from_millis(*retry_at)
            ),
            EmbedFailure::Failed(reason) => f.write_str(reason),
        }
    }
}

/// An embedder with its breaker and cache.
pub(crate) struct Embedding {
    embedder: Box<dyn Embed>,
    breaker: Breaker,
    cache: RefCell<VectorCache>,
}

impl Embedding {
    pub(crate) fn new(embedder: Box<dyn Embed>) -> Self {
        Embedding {
            embedder,
            breaker: Breaker::default(),
            cache: RefCell::new(VectorCache::default()),
        }
    }

    pub(crate) fn model_id(&self) -> &str {
        self.embedder.model_id()
    }

    pub(crate) fn dims(&self) -> usize {
        self.embedder.dims()
    }

    pub(crate) fn circuit(&self, now: i64) -> Circuit {
        self.breaker.circuit(now)
    }

    /// Vectors for `texts`, in order: cached ones from the cache, the rest from the
    /// embedder in one call (if the breaker allows it).
    pub(crate) async fn embed(
        &self,
        texts: &[String],
        clock: &dyn Clock,
    ) -> Result<Vec<Vec<f32>>, EmbedFailure> {
        let now = clock.now_millis();
        let (model, dims) = (self.embedder.model_id(), self.embedder.dims());
        let keys: Vec<String> = texts
            .iter()
            .map(|t| VectorCache::key(t, model, dims))
            .collect();
        let mut vectors: Vec<Option<Vec<f32>>> = {
            let mut cache = self.cache.borrow_mut();
            keys.iter().map(|k| cache.get(k, now)).collect()
        };
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| vectors[i].is_none()).collect();
        if !missing.is_empty() {
            if !self.breaker.try_acquire(now) {
                let retry_at = match self.breaker.circuit(now) {
                    Circuit::Open { retry_at } => retry_at,
                    _ => now,
                };
                return Err(EmbedFailure::CircuitOpen { retry_at });
            }
            let batch: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
            let result = embed_checked(self.embedder.as_ref(), &batch).await;
            let done = clock.now_millis();
            self.breaker.record(done, result.is_ok());
            let fresh = result.map_err(EmbedFailure::Failed)?;
            let mut cache = self.cache.borrow_mut();
            for (&i, vector) in missing.iter().zip(fresh) {
                cache.insert(keys[i].clone(), vector.clone(), done);
                vectors[i] = Some(vector);
            }
        }
        Ok(vectors.into_iter().map(Option::unwrap_or_default).collect())
    }
}
