//! A search filtered to a rare type walks that type's memories (through the type index and
//! each memory's keyword row) instead of scoring every keyword match or vector of the
//! project, and finds exactly what the general exact forms find: the same memories with
//! the same scores, by keyword and by vector, with and without resident vectors.

mod common;
mod file_db;

use common::FakeWordEmbedder;
use engram::{Database, Engram, MemoryType, NewMemory, SearchMode, SearchQuery};
use file_db::{open_db, open_engram};

/// 300 gotchas and 6 dead ends that share the query's words, the dead ends alone under
/// `notes/dead-ends.md`; so a filter by that file selects exactly the dead ends, through
/// the general exact forms.
async fn fill<D: Database>(engram: &Engram<D>) {
    for i in 0..300 {
        let mut memory = NewMemory::new(
            MemoryType::Gotcha,
            format!(
                "The upload queue worker retries {} times before the cache {i} expires",
                i % 7
            ),
        );
        memory.related_files = vec![format!("src/upload{}.rs", i % 30)];
        engram.remember(memory).await.expect("remember");
    }
    for (i, detail) in [
        "pinning the worker thread",
        "a second upload queue",
        "retrying inside the worker lock",
        "caching the queue cursor",
        "an upload worker per tenant",
        "polling instead of the queue",
    ]
    .iter()
    .enumerate()
    {
        let mut memory = NewMemory::new(
            MemoryType::DeadEnd,
            format!("Tried {detail} for the upload queue worker {i}; it did not help"),
        );
        memory.related_files = vec!["notes/dead-ends.md".into()];
        engram.remember(memory).await.expect("remember");
    }
}

/// Each hit's id, score and path metrics, for `query` filtered by type and by file.
async fn both_ways<D: Database>(engram: &Engram<D>, mode: SearchMode) -> [Vec<String>; 2] {
    let mut query = SearchQuery::new("upload queue worker retries");
    query.mode = mode;
    query.limit = 10;
    let mut by_type = query.clone();
    by_type.types = vec![MemoryType::DeadEnd];
    let mut by_file = query;
    by_file.files = vec!["notes/dead-ends.md".into()];
    let mut answers = [Vec::new(), Vec::new()];
    for (answer, query) in answers.iter_mut().zip([by_type, by_file]) {
        let found = engram.search(&query).await.expect("search");
        *answer = found
            .hits
            .iter()
            .map(|h| {
                let b = serde_json::to_value(&h.breakdown).expect("breakdown");
                format!(
                    "{} {:.9} {} {}",
                    h.memory.id, h.score, b["keyword"], b["dense"]
                )
            })
            .collect();
    }
    answers
}

#[tokio::test]
async fn a_rare_type_is_searched_through_its_own_memories() {
    let (_file, db) = open_db("typed-search").await;
    let engram = open_engram(&db)
        .await
        .with_embedder(Box::new(FakeWordEmbedder));
    fill(&engram).await;
    for mode in [SearchMode::Keyword, SearchMode::Dense, SearchMode::Hybrid] {
        let [by_type, by_file] = both_ways(&engram, mode).await;
        assert_eq!(by_type.len(), 6, "{mode:?}: {by_type:#?}");
        assert_eq!(by_type, by_file, "{mode:?}");
    }
    let mut resident = open_engram(&db)
        .await
        .with_embedder(Box::new(FakeWordEmbedder));
    resident.enable_resident_vectors().expect("resident");
    resident.load_resident_vectors().await.expect("load");
    let [by_type, by_file] = both_ways(&resident, SearchMode::Dense).await;
    assert_eq!(by_type.len(), 6, "{by_type:#?}");
    assert_eq!(by_type, by_file);

    // The typed form is the one that answered: a dead end whose keyword row is not on
    // record is invisible to it, and still found by the general form.
    let [by_type, _] = both_ways(&engram, SearchMode::Keyword).await;
    let hidden = by_type[0].split(' ').next().expect("id").to_owned();
    db.transaction(&[engram_store::Statement::with_params(
        "DELETE FROM memory_keyword_rows WHERE memory_id = ?1",
        vec![engram_store::Value::from(hidden.as_str())],
    )])
    .await
    .expect("unrecord");
    let [by_type, by_file] = both_ways(&engram, SearchMode::Keyword).await;
    assert_eq!(by_type.len(), 5, "{by_type:#?}");
    assert!(by_type.iter().all(|h| !h.starts_with(&hidden)));
    assert!(by_file.iter().any(|h| h.starts_with(&hidden)));
}
