//! The optional host capabilities of search on an embedded libSQL file: a reranker reorders
//! the best candidates (and a failing one changes nothing but a warning), and the host LLM
//! drives HyDE for weak explicit searches only. The reranker, LLM and embedder here are
//! fakes standing in for what a host provides.

use std::cell::Cell;

use crate::common::{temp_db, FakeWordEmbedder};
use engram::{
    Engram, EngramConfig, Generate, GenerateFuture, Host, MemoryType, NewMemory, Rerank,
    RerankFuture, SearchIntent, SearchQuery,
};
use engram_libsql::LocalDatabase;

/// Fake reranker: scores documents by their length (longest first), or fails.
struct FakeLengthReranker {
    fail: bool,
}

impl Rerank for FakeLengthReranker {
    fn rerank<'a>(&'a self, _query: &'a str, documents: &'a [String]) -> RerankFuture<'a> {
        Box::pin(async move {
            if self.fail {
                return Err("reranker offline".into());
            }
            Ok(documents.iter().map(|d| d.len() as f64).collect())
        })
    }
}

/// Fake reranker that records the documents it was asked to score and scores them all 1.
struct FakeRecordingReranker {
    seen: std::rc::Rc<std::cell::RefCell<Vec<String>>>,
}

impl Rerank for FakeRecordingReranker {
    fn rerank<'a>(&'a self, _query: &'a str, documents: &'a [String]) -> RerankFuture<'a> {
        Box::pin(async move {
            self.seen.borrow_mut().extend(documents.iter().cloned());
            Ok(vec![1.0; documents.len()])
        })
    }
}

/// Fake LLM: always answers with a fixed hypothetical memory, counting calls.
struct FakeLlm {
    calls: std::rc::Rc<Cell<usize>>,
    fail: bool,
}

impl Generate for FakeLlm {
    fn generate<'a>(&'a self, _prompt: &'a str, _max_tokens: u32) -> GenerateFuture<'a> {
        Box::pin(async move {
            self.calls.set(self.calls.get() + 1);
            if self.fail {
                return Err("model overloaded".into());
            }
            Ok("kubernetes helm chart values override".to_owned())
        })
    }
}

/// A local database at `path` (a temporary file of the test).
async fn open_db(path: &std::path::Path) -> LocalDatabase {
    LocalDatabase::open(path.to_str().expect("utf-8"))
        .await
        .expect("db")
}

async fn engram(db: &LocalDatabase) -> Engram<&LocalDatabase> {
    let engram = Engram::open(db, EngramConfig::default(), Host::native())
        .await
        .expect("open");
    for content in [
        "database locked",
        "database locked when tests share one database file",
        "database locked: give each test process its own temporary database file",
        "Override helm chart values per environment with a kubernetes values file",
    ] {
        engram
            .remember(NewMemory::new(MemoryType::Gotcha, content))
            .await
            .expect("remember");
    }
    engram
}

#[tokio::test]
async fn a_reranker_reorders_and_a_failing_one_only_warns() {
    let path = temp_db("rerank");
    let db = open_db(&path).await;
    let plain = engram(&db).await;
    let before = plain
        .search(&SearchQuery::new("database locked"))
        .await
        .unwrap();
    assert_eq!(before.hits[0].memory.content, "database locked");
    assert!(before.hits.iter().all(|h| h.breakdown.rerank.is_none()));

    let reranked = plain.with_reranker(Box::new(FakeLengthReranker { fail: false }));
    let after = reranked
        .search(&SearchQuery::new("database locked"))
        .await
        .unwrap();
    // The reranker reverses the pipeline's three: its ranks fuse with the pipeline's, so
    // the first and last tie (1/61 + 1/63), the reranker's favourite takes the tie, and the
    // middle one (1/62 + 1/62, a little less) comes last.
    let contents: Vec<&str> = after
        .hits
        .iter()
        .map(|h| h.memory.content.as_str())
        .collect();
    let pipeline: Vec<&str> = before
        .hits
        .iter()
        .map(|h| h.memory.content.as_str())
        .collect();
    assert_eq!(pipeline.len(), 3, "{pipeline:?}");
    assert_eq!(contents, [pipeline[2], pipeline[0], pipeline[1]]);
    let longest = after.hits[0].memory.content.len() as f64;
    assert_eq!(after.hits[0].breakdown.rerank, Some(longest));
    let reranker_ranks: Vec<Option<u32>> =
        after.hits.iter().map(|h| h.breakdown.rerank_rank).collect();
    assert_eq!(reranker_ranks, [Some(1), Some(3), Some(2)]);

    // Switching the stage off restores the pipeline's own order.
    let mut off = SearchQuery::new("database locked");
    off.stages.rerank = false;
    let off = reranked.search(&off).await.unwrap();
    assert_eq!(off.hits[0].memory.content, "database locked");

    let failing = Engram::open(&db, EngramConfig::default(), Host::native())
        .await
        .unwrap()
        .with_reranker(Box::new(FakeLengthReranker { fail: true }));
    let kept = failing
        .search(&SearchQuery::new("database locked"))
        .await
        .unwrap();
    assert_eq!(kept.hits[0].memory.content, "database locked");
    assert!(kept.warnings.iter().any(|w| w.contains("reranker offline")));
}

#[tokio::test]
async fn the_reranker_reads_each_memory_as_it_was_embedded() {
    let path = temp_db("rerank-text");
    let db = open_db(&path).await;
    let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let engram = engram(&db)
        .await
        .with_reranker(Box::new(FakeRecordingReranker { seen: seen.clone() }));
    let mut filed = NewMemory::new(
        MemoryType::Gotcha,
        "database locked: close the pool before the migration",
    );
    filed.related_files = vec!["db/pool.rs".into()];
    engram.remember(filed).await.expect("remember");
    let response = engram
        .search(&SearchQuery::new("database locked"))
        .await
        .unwrap();
    assert!(response.warnings.is_empty(), "{:?}", response.warnings);
    let seen = seen.borrow();
    // The memory with a file is read behind the prefix naming it; the others as written.
    assert!(
        seen.contains(
            &"Files: db/pool.rs\n\ndatabase locked: close the pool before the migration".to_owned()
        ),
        "{seen:?}"
    );
    assert!(seen.contains(&"database locked".to_owned()), "{seen:?}");
    assert_eq!(seen.len(), response.hits.len());
}

#[tokio::test]
async fn hyde_runs_for_weak_explicit_searches_only() {
    let path = temp_db("hyde");
    let db = open_db(&path).await;
    let calls = std::rc::Rc::new(Cell::new(0));
    let engram = engram(&db).await.with_embedder(Box::new(FakeWordEmbedder));
    // Memories stored before the embedder get vectors now.
    engram.embed_pending(10).await.expect("embed pending");
    let engram = engram.with_llm(Box::new(FakeLlm {
        calls: calls.clone(),
        fail: false,
    }));

    // A weak explicit search: HyDE runs once and its dense hits join the candidates.
    let weak = engram
        .search(&SearchQuery::new("how do we configure deployments"))
        .await
        .unwrap();
    assert!(weak.hyde);
    assert_eq!(calls.get(), 1);
    assert!(
        weak.hits[0].memory.content.contains("helm chart"),
        "{:?}",
        weak.hits[0]
    );

    // Auto-inject never calls the LLM.
    let mut auto = SearchQuery::new("how do we configure deployments");
    auto.intent = SearchIntent::AutoInject;
    let auto = engram.search(&auto).await.unwrap();
    assert!(!auto.hyde);
    assert_eq!(calls.get(), 1);

    // A failing LLM only warns: the search answers with the results it had.
    let failing = engram.with_llm(Box::new(FakeLlm {
        calls: calls.clone(),
        fail: true,
    }));
    let kept = failing
        .search(&SearchQuery::new("how do we configure deployments"))
        .await
        .unwrap();
    assert_eq!(calls.get(), 2);
    assert!(!kept.hyde);
    assert!(
        kept.warnings
            .iter()
            .any(|w| w == "HyDE skipped: host LLM failed: model overloaded"),
        "{:?}",
        kept.warnings
    );
    let mut without = SearchQuery::new("how do we configure deployments");
    without.stages.hyde = false;
    let without = failing.search(&without).await.unwrap();
    let ids = |r: &engram::SearchResponse| -> Vec<String> {
        r.hits.iter().map(|h| h.memory.id.clone()).collect()
    };
    assert_eq!(ids(&kept), ids(&without));
    assert_eq!(calls.get(), 2);
}
