//! A search filtered to a few memories — by type, file or module — walks those memories
//! (through the filter's index and each memory's keyword row) instead of scoring every
//! keyword match or vector of the project, and finds exactly what the general exact forms
//! find: the same memories with the same scores, by keyword and by vector, with and without
//! resident vectors.

use crate::common::{FakeWordEmbedder, StillClock};
use crate::file_db::open_db;
use engram::{
    Database, Engram, EngramConfig, Host, MemoryType, NewMemory, OsEntropy, SearchMode, SearchQuery,
};
use engram_libsql::LocalDatabase;

/// engram on `db` with a clock that stands still: the forms compared must see the same
/// decay.
async fn open_engram(db: &LocalDatabase) -> Engram<&LocalDatabase> {
    Engram::open(
        db,
        EngramConfig::default(),
        Host::new(StillClock, OsEntropy),
    )
    .await
    .expect("engram")
}

/// 300 gotchas and 6 dead ends that share the query's words. The dead ends alone are in
/// `notes/dead-ends.md`, in module `notes` and at confidence 0.95, so a filter by their
/// type, file or module selects exactly them, as does a confidence floor of 0.9 (which the
/// exact forms cannot start from: the general forms answer it).
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
        memory.related_modules = vec!["src/upload".into()];
        memory.confidence = 0.5;
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
        memory.related_modules = vec!["notes".into()];
        memory.confidence = 0.95;
        engram.remember(memory).await.expect("remember");
    }
}

/// Each hit's id, score and path metrics, for the query filtered by type, by file, by
/// module, by all three (the statement then starts from the shortest list), and by the
/// confidence floor (the general forms' answer, last).
async fn five_ways<D: Database>(engram: &Engram<D>, mode: SearchMode) -> [Vec<String>; 5] {
    let mut query = SearchQuery::new("upload queue worker retries");
    query.mode = mode;
    query.limit = 10;
    let mut by_type = query.clone();
    by_type.types = vec![MemoryType::DeadEnd];
    let mut by_file = query.clone();
    by_file.files = vec!["notes/dead-ends.md".into()];
    let mut by_module = query.clone();
    by_module.modules = vec!["notes".into()];
    let mut by_all = by_type.clone();
    by_all.files = by_file.files.clone();
    by_all.modules = by_module.modules.clone();
    let mut by_confidence = query;
    by_confidence.min_confidence = Some(0.9);
    let mut answers: [Vec<String>; 5] = Default::default();
    for (answer, query) in
        answers
            .iter_mut()
            .zip([by_type, by_file, by_module, by_all, by_confidence])
    {
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
async fn a_narrow_filter_is_searched_through_its_own_memories() {
    let (_file, db) = open_db("narrowed-search").await;
    let engram = open_engram(&db)
        .await
        .with_embedder(Box::new(FakeWordEmbedder));
    fill(&engram).await;
    for mode in [SearchMode::Keyword, SearchMode::Dense, SearchMode::Hybrid] {
        let [by_type, by_file, by_module, by_all, general] = five_ways(&engram, mode).await;
        assert_eq!(general.len(), 6, "{mode:?}: {general:#?}");
        assert_eq!(by_type, general, "{mode:?} by type");
        assert_eq!(by_file, general, "{mode:?} by file");
        assert_eq!(by_module, general, "{mode:?} by module");
        assert_eq!(by_all, general, "{mode:?} by all three");
    }
    let mut resident = open_engram(&db)
        .await
        .with_embedder(Box::new(FakeWordEmbedder));
    resident.enable_resident_vectors().expect("resident");
    resident.load_resident_vectors().await.expect("load");
    let answers = five_ways(&resident, SearchMode::Dense).await;
    assert_eq!(answers[4].len(), 6, "{answers:#?}");
    for narrowed in &answers[..4] {
        assert_eq!(narrowed, &answers[4]);
    }

    // The narrowed forms are the ones that answered: a dead end whose keyword row is not
    // on record is invisible to them, and still found by the general form.
    let [by_type, ..] = five_ways(&engram, SearchMode::Keyword).await;
    let hidden = by_type[0].split(' ').next().expect("id").to_owned();
    db.transaction(&[engram_store::Statement::with_params(
        "DELETE FROM memory_keyword_rows WHERE memory_id = ?1",
        vec![engram_store::Value::from(hidden.as_str())],
    )])
    .await
    .expect("unrecord");
    let [by_type, by_file, by_module, by_all, general] =
        five_ways(&engram, SearchMode::Keyword).await;
    for narrowed in [&by_type, &by_file, &by_module, &by_all] {
        assert_eq!(narrowed.len(), 5, "{narrowed:#?}");
        assert!(narrowed.iter().all(|h| !h.starts_with(&hidden)));
    }
    assert!(general.iter().any(|h| h.starts_with(&hidden)));
}
