//! The dense path: vectors written with memories, hybrid and dense search, failures that
//! keep memories keyword-searchable, and resumable re-embedding after a model switch.
//! Real model where the behaviour depends on it; named fakes where a failure must be forced.

use std::cell::Cell;

use crate::real_model::real_model;
use engram::{
    Embed, EmbedFuture, Engram, EngramConfig, Host, MemoryType, NewMemory, SearchMode, SearchQuery,
};
use engram_embed::MINILM_INT8_ID;
use engram_sqlite::SqliteDatabase;

fn query(text: &str, mode: SearchMode) -> SearchQuery {
    SearchQuery {
        mode,
        ..SearchQuery::new(text)
    }
}

#[tokio::test]
async fn dense_search_finds_what_keywords_miss() {
    let db = SqliteDatabase::open_in_memory().unwrap();
    let engram = Engram::open(&db, EngramConfig::default(), Host::native())
        .await
        .unwrap()
        .with_embedder(Box::new(real_model()));
    let locked = engram
        .remember(NewMemory::new(
            MemoryType::ErrorPattern,
            "SQLite reports 'database is locked' when two test processes share one database file",
        ))
        .await
        .unwrap();
    assert_eq!(locked.embedding_model.as_deref(), Some(MINILM_INT8_ID));
    engram
        .remember(NewMemory::new(
            MemoryType::Preference,
            "Use CSS grid instead of flexbox for the dashboard layout",
        ))
        .await
        .unwrap();
    let paraphrase = "parallel unit runs collide on the same storage";
    let keyword = engram
        .search(&query(paraphrase, SearchMode::Keyword))
        .await
        .unwrap();
    assert!(
        keyword.hits.is_empty(),
        "keyword path should miss: {:?}",
        keyword.hits
    );
    let dense = engram
        .search(&query(paraphrase, SearchMode::Dense))
        .await
        .unwrap();
    assert_eq!(dense.hits[0].memory.id, locked.id);
    assert_eq!(
        dense.hits.len(),
        1,
        "the memory about CSS is unrelated and cut: {:?}",
        dense.hits
    );
    let hybrid = engram
        .search(&query("database locked", SearchMode::Hybrid))
        .await
        .unwrap();
    assert_eq!(hybrid.hits[0].memory.id, locked.id);
    assert_eq!(hybrid.hits[0].breakdown.keyword.map(|k| k.rank), Some(1));
    assert_eq!(hybrid.hits[0].breakdown.dense.map(|d| d.rank), Some(1));
}

/// A fake embedder: bag-of-words hashed into `dims` buckets; fails while `failing` is set
/// and can answer with the wrong number of dimensions.
struct FakeHashEmbedder {
    id: String,
    dims: usize,
    failing: Cell<bool>,
    wrong_dims: Cell<bool>,
}

impl FakeHashEmbedder {
    fn new(id: &str) -> Self {
        FakeHashEmbedder {
            id: id.into(),
            dims: 16,
            failing: Cell::new(false),
            wrong_dims: Cell::new(false),
        }
    }
}

impl Embed for FakeHashEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }
    fn dims(&self) -> usize {
        self.dims
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        Box::pin(async move {
            if self.failing.get() {
                return Err("provider unavailable".to_owned());
            }
            let dims = if self.wrong_dims.get() {
                self.dims + 1
            } else {
                self.dims
            };
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v = vec![0f32; dims];
                    for word in t
                        .to_lowercase()
                        .split(|c: char| !c.is_alphanumeric())
                        .filter(|w| !w.is_empty())
                    {
                        let h = word
                            .bytes()
                            .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
                        v[(h % dims as u64) as usize] += 1.0;
                    }
                    v
                })
                .collect())
        })
    }
}

#[tokio::test]
async fn a_failed_or_malformed_embedding_keeps_the_memory_and_embed_pending_recovers() {
    let db = SqliteDatabase::open_in_memory().unwrap();
    let fake = FakeHashEmbedder::new("fake-a");
    fake.failing.set(true);
    let engram = Engram::open(&db, EngramConfig::default(), Host::native())
        .await
        .unwrap()
        .with_embedder(Box::new(fake));
    let stored = engram
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "flaky provider memory about caches",
        ))
        .await
        .unwrap();
    assert_eq!(stored.embedding_model, None);
    assert_eq!(
        stored.embedding_error.as_deref(),
        Some("provider unavailable; queued for embedding")
    );
    // Still keyword-searchable, and the dense failure is reported, not fatal.
    let found = engram.search(&SearchQuery::new("caches")).await.unwrap();
    assert_eq!(found.hits[0].memory.id, stored.id);
    assert!(
        found
            .warnings
            .iter()
            .any(|w| w.contains("provider unavailable")),
        "{:?}",
        found.warnings
    );
    let err = engram.embed_pending(10).await.unwrap_err();
    assert!(err.to_string().contains("provider unavailable"));
    drop(engram);

    let fake = FakeHashEmbedder::new("fake-a");
    fake.wrong_dims.set(true);
    let engram = Engram::open(&db, EngramConfig::default(), Host::native())
        .await
        .unwrap()
        .with_embedder(Box::new(fake));
    let wrong = engram
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "second memory with a bad vector",
        ))
        .await
        .unwrap();
    assert!(wrong
        .embedding_error
        .unwrap()
        .contains("17 dimensions, expected 16"));
    drop(engram);

    let engram = Engram::open(&db, EngramConfig::default(), Host::native())
        .await
        .unwrap()
        .with_embedder(Box::new(FakeHashEmbedder::new("fake-a")));
    let progress = engram.embed_pending(10).await.unwrap();
    assert_eq!((progress.embedded, progress.remaining), (2, 0));
    let dense = engram
        .search(&query("caches", SearchMode::Dense))
        .await
        .unwrap();
    assert_eq!(dense.hits.len(), 2);
    assert!(
        engram
            .get(&stored.id)
            .await
            .unwrap()
            .unwrap()
            .embedding_model_id
            .as_deref()
            == Some("fake-a")
    );
}

#[tokio::test]
async fn a_model_switch_re_embeds_resumably_and_never_mixes_models() {
    let db = SqliteDatabase::open_in_memory().unwrap();
    let old = Engram::open(&db, EngramConfig::default(), Host::native())
        .await
        .unwrap()
        .with_embedder(Box::new(FakeHashEmbedder::new("fake-a")));
    for text in ["alpha cache rules", "beta cache rules", "gamma cache rules"] {
        old.remember(NewMemory::new(MemoryType::Pattern, text))
            .await
            .unwrap();
    }
    drop(old);
    let new = Engram::open(&db, EngramConfig::default(), Host::native())
        .await
        .unwrap()
        .with_embedder(Box::new(FakeHashEmbedder::new("fake-b")));
    // No vector of the new model yet: dense finds nothing, hybrid still answers by keyword.
    assert!(new
        .search(&query("cache rules", SearchMode::Dense))
        .await
        .unwrap()
        .hits
        .is_empty());
    assert_eq!(
        new.search(&query("cache rules", SearchMode::Hybrid))
            .await
            .unwrap()
            .hits
            .len(),
        3
    );
    let first = new.embed_pending(2).await.unwrap();
    assert_eq!((first.embedded, first.remaining), (2, 1));
    assert_eq!(
        new.search(&query("cache rules", SearchMode::Dense))
            .await
            .unwrap()
            .hits
            .len(),
        2
    );
    drop(new);
    // A restart resumes where the job stopped.
    let restarted = Engram::open(&db, EngramConfig::default(), Host::native())
        .await
        .unwrap()
        .with_embedder(Box::new(FakeHashEmbedder::new("fake-b")));
    let second = restarted.embed_pending(2).await.unwrap();
    assert_eq!((second.embedded, second.remaining), (1, 0));
    let third = restarted.embed_pending(2).await.unwrap();
    assert_eq!((third.embedded, third.remaining), (0, 0));
    let hits = restarted
        .search(&query("cache rules", SearchMode::Dense))
        .await
        .unwrap()
        .hits;
    assert_eq!(hits.len(), 3);
    assert!(hits
        .iter()
        .all(|h| h.memory.embedding_model_id.as_deref() == Some("fake-b")));
}

#[tokio::test]
async fn engines_without_the_vector_index_keep_the_exact_scan() {
    let db = SqliteDatabase::open_in_memory().unwrap();
    let mut engram = Engram::open(&db, EngramConfig::default(), Host::native())
        .await
        .unwrap()
        .with_embedder(Box::new(FakeHashEmbedder::new("fake-a")));
    assert!(!engram.enable_vector_index().await.unwrap());
    assert!(!engram.uses_vector_index());
    let stored = engram
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "vector scan fallback works",
        ))
        .await
        .unwrap();
    let found = engram
        .search(&query("vector scan fallback", SearchMode::Dense))
        .await
        .unwrap();
    assert_eq!(found.hits[0].memory.id, stored.id);
}
