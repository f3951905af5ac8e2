//! The embedding cache: recent vectors keyed by sha256(text:model:dims), with expiry.
//!
//! It lives in memory, per engram instance. Searches repeat (the same session-start query,
//! the same identifier looked up between steps) and a remote provider call costs a network
//! round trip and money; a cached query vector costs neither. It is deliberately not a
//! database table read on every call: a search and a remember are one database round trip
//! each, and the vectors of stored memories are already durable in `embeddings`.

use std::collections::{HashMap, VecDeque};

use sha2::{Digest, Sha256};

/// How long a cached vector is served.
pub const CACHE_TTL_MILLIS: i64 = 7 * 86_400 * 1000;
/// Most vectors kept; the oldest entry is evicted first.
pub const CACHE_CAPACITY: usize = 1024;

/// Vectors by key, evicted oldest-inserted first, each expiring [`CACHE_TTL_MILLIS`] after
/// it was stored.
#[derive(Debug, Default)]
pub(crate) struct VectorCache {
    entries: HashMap<String, (Vec<f32>, i64)>,
    order: VecDeque<String>,
}

impl VectorCache {
    /// The cache key of a text embedded by `model` at `dims`: hex sha256 of
    /// `text:model:dims`.
    pub(crate) fn key(text: &str, model: &str, dims: usize) -> String {
        let digest = Sha256::digest(format!("{text}:{model}:{dims}").as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The vector stored under `key`, unless it expired by `now`.
    pub(crate) fn get(&mut self, key: &str, now: i64) -> Option<Vec<f32>> {
        match self.entries.get(key) {
            Some((vector, expires_at)) if *expires_at > now => Some(vector.clone()),
            Some(_) => {
                self.entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Stores `vector` under `key` at `now`.
    pub(crate) fn insert(&mut self, key: String, vector: Vec<f32>, now: i64) {
        if self
            .entries
            .insert(key.clone(), (vector, now + CACHE_TTL_MILLIS))
            .is_none()
        {
            self.order.push_back(key);
        }
        while self.entries.len() > CACHE_CAPACITY {
            match self.order.pop_front() {
                Some(oldest) => {
                    self.entries.remove(&oldest);
                }
                None => break,
            }
        }
        // Keys of expired entries removed by `get` linger in `order`; drop them lazily.
        if self.order.len() > 2 * CACHE_CAPACITY {
            let entries = &self.entries;
            self.order.retain(|k| entries.contains_key(k));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_sha256_of_text_model_dims() {
        // sha256("a:m:3"), computed independently with `printf 'a:m:3' | sha256sum`.
        assert_eq!(
            VectorCache::key("a", "m", 3),
            "b3986ddef422fee0040ec24d47066cefce0d56671a7f1ee6fb451b34588eea31"
        );
        assert_ne!(VectorCache::key("a", "m", 3), VectorCache::key("a", "m", 4));
    }

    #[test]
    fn entries_expire_and_the_oldest_is_evicted() {
        let mut cache = VectorCache::default();
        cache.insert("k".into(), vec![1.0], 0);
        assert_eq!(cache.get("k", CACHE_TTL_MILLIS - 1), Some(vec![1.0]));
        assert_eq!(cache.get("k", CACHE_TTL_MILLIS), None);
        for i in 0..=CACHE_CAPACITY {
            cache.insert(format!("k{i}"), vec![i as f32], 0);
        }
        assert_eq!(cache.get("k0", 1), None);
        assert_eq!(cache.get("k1", 1), Some(vec![1.0]));
        assert_eq!(cache.entries.len(), CACHE_CAPACITY);
    }
}
