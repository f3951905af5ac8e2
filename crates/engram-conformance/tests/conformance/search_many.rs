//! `Engram::search_many`: several searches in one HTTP request, each answered exactly as
//! `Engram::search` answers it alone, with the real model, by every mode and filter, with
//! and without resident vectors; the distinct query texts are embedded in one call.

use std::cell::Cell;
use std::rc::Rc;

use crate::common::{nonce, CountingTransport, StillClock};
use crate::real_model::real_model;
use engram::{
    Database, Embed, EmbedFuture, Engram, EngramConfig, Host, MemoryType, NewMemory, OsEntropy,
    Phase, SearchIntent, SearchMode, SearchQuery, SearchResponse,
};
use engram_embed::EngramEmbedder;
use engram_hrana::HranaClient;
use engram_testserver::{ServerConfig, TestServer};

/// The real model, counting the calls and texts it is asked to embed.
struct CountingModel {
    model: Rc<EngramEmbedder>,
    calls: Rc<Cell<usize>>,
    texts: Rc<Cell<usize>>,
}

impl Embed for CountingModel {
    fn model_id(&self) -> &str {
        self.model.model_id()
    }

    fn dims(&self) -> usize {
        self.model.dims()
    }

    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        self.calls.set(self.calls.get() + 1);
        self.texts.set(self.texts.get() + texts.len());
        self.model.embed(texts)
    }
}

/// What a search answered, without its timings: ids, scores to the bit, breakdowns,
/// packing, warnings.
fn answer(response: &SearchResponse) -> String {
    let mut value = serde_json::to_value(response).expect("response");
    value.as_object_mut().expect("object").remove("timings");
    value.to_string()
}

/// Queries by every mode, intent and filter, two of them with the same text.
fn queries() -> Vec<SearchQuery> {
    let mut queries = Vec::new();
    let plain = SearchQuery::new("why does the upload worker retry so often");
    queries.push(plain.clone());
    let mut keyword = plain.clone();
    keyword.mode = SearchMode::Keyword;
    queries.push(keyword);
    let mut dense = SearchQuery::new("the database connection pool is exhausted");
    dense.mode = SearchMode::Dense;
    queries.push(dense);
    let mut typed = plain.clone();
    typed.types = vec![MemoryType::DeadEnd];
    queries.push(typed);
    let mut filed = SearchQuery::new("pool timeouts in src/db/pool.rs");
    filed.files = vec!["src/db/pool.rs".into()];
    queries.push(filed);
    let mut auto = SearchQuery::new("retry the upload worker");
    auto.intent = SearchIntent::AutoInject;
    queries.push(auto);
    let mut packed = SearchQuery::new("how are releases written");
    packed.phase = Some(Phase::Implement);
    packed.budget = Some(300);
    queries.push(packed);
    queries.push(SearchQuery::new("zebra crossing lighthouse"));
    queries
}

async fn fill<D: Database>(engram: &Engram<D>) {
    let notes = [
        (
            MemoryType::Gotcha,
            "The upload worker retries five times before it gives up",
            "src/upload/worker.rs",
        ),
        (
            MemoryType::DeadEnd,
            "Tried a second upload queue; retries doubled instead of halving",
            "src/upload/queue.rs",
        ),
        (
            MemoryType::DeadEnd,
            "Tried pinning the worker thread; no change in retry counts",
            "src/upload/worker.rs",
        ),
        (
            MemoryType::ErrorPattern,
            "Pool exhausted: close connections in tests or raise max_connections",
            "src/db/pool.rs",
        ),
        (
            MemoryType::Decision,
            "Connection pool timeouts are 30 seconds, set in the pool builder",
            "src/db/pool.rs",
        ),
        (
            MemoryType::Preference,
            "Release notes are written by hand, never generated",
            "CHANGELOG.md",
        ),
        (
            MemoryType::WorkflowRecipe,
            "To cut a release: bump the version, write the notes, tag",
            "RELEASING.md",
        ),
    ];
    for (memory_type, content, file) in notes {
        let mut memory = NewMemory::new(memory_type, content);
        memory.related_files = vec![file.into()];
        engram.remember(memory).await.expect("remember");
    }
}

#[tokio::test]
async fn a_batch_of_searches_is_one_request_and_answers_as_each_search_alone() {
    let model = Rc::new(real_model());
    let server = TestServer::start(ServerConfig::default()).expect("test server starts");
    let client = HranaClient::new(CountingTransport::default(), &server.url(), None);
    let (calls, texts) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    let config = EngramConfig {
        project_id: format!("many-{}", nonce()),
    };
    let mut engram = Engram::open(&client, config, Host::new(StillClock, OsEntropy))
        .await
        .expect("open")
        .with_embedder(Box::new(CountingModel {
            model: model.clone(),
            calls: calls.clone(),
            texts: texts.clone(),
        }));
    fill(&engram).await;
    let queries = queries();

    for resident in [false, true] {
        if resident {
            engram.enable_resident_vectors().expect("resident");
            engram.load_resident_vectors().await.expect("load");
        }
        let transport = client.transport();
        let (before, calls_before, texts_before) =
            (transport.requests.get(), calls.get(), texts.get());
        let together = engram.search_many(&queries).await.expect("search many");
        assert_eq!(transport.requests.get() - before, 1, "resident {resident}");
        // Seven queries want the dense path (not the keyword-only one), two of them with
        // the same text: six texts in one call; the second time, the vector cache holds
        // them all.
        let expected = if resident { (0, 0) } else { (1, 6) };
        assert_eq!(
            (calls.get() - calls_before, texts.get() - texts_before),
            expected
        );

        assert_eq!(together.len(), queries.len());
        // Each answer's timings are its own: its stages add up to its total.
        for batched in &together {
            let t = batched.timings;
            let parts =
                t.analysis + t.embed + t.candidates + t.ranking + t.rerank + t.hyde + t.packing;
            assert!((t.total - parts).abs() < 1e-6, "{t:?}");
        }
        for (query, batched) in queries.iter().zip(&together) {
            let alone = engram.search(query).await.expect("search");
            assert_eq!(answer(batched), answer(&alone), "{}", query.text);
        }
        // The batch found something for the related queries and nothing for the
        // unrelated one's auto-injection rules to hide.
        assert!(!together[0].hits.is_empty());
        assert!(together[3]
            .hits
            .iter()
            .all(|h| h.memory.memory_type == MemoryType::DeadEnd));
        assert!(!together[3].hits.is_empty());
    }

    // An invalid query fails the batch before any request.
    let transport = client.transport();
    let before = transport.requests.get();
    let mut bad = queries.clone();
    bad.push(SearchQuery::new(""));
    assert!(engram.search_many(&bad).await.is_err());
    assert_eq!(transport.requests.get(), before);
    // No queries, no request.
    assert!(engram.search_many(&[]).await.expect("empty").is_empty());
    assert_eq!(transport.requests.get(), before);
}
