//! Resident keywords (`Engram::enable_resident_keywords`) on the test server over HTTP and
//! on an embedded libSQL file: keyword results must be FTS5's (same memories, ranks and
//! BM25 scores) while the index loads, after this instance's and another writer's changes,
//! under filters, and for queries it leaves to FTS5; every search is one round trip. The
//! corpus is this repository's own text, split into memories of a few lines each.

use crate::common::{nonce, open_project, CountingTransport};
use crate::file_db::open_db;
use engram::{Database, Engram, MemoryType, NewMemory, SearchMode, SearchQuery, SearchResponse};
use engram_hrana::HranaClient;
use engram_store::{Statement, Value};
use engram_testserver::{ServerConfig, TestServer};

/// Memories of four lines each from the README, a docs page and some sources, tagged by
/// file kind and related to their file, plus a few in other scripts.
fn corpus() -> Vec<NewMemory> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut memories = Vec::new();
    for (file, memory_type) in [
        ("README.md", MemoryType::Decision),
        ("docs/retrieval.md", MemoryType::Decision),
        ("crates/engram-retrieval/src/fusion.rs", MemoryType::Pattern),
        (
            "crates/engram-retrieval/src/analysis/mod.rs",
            MemoryType::Gotcha,
        ),
        (
            "crates/engram/src/retrieve/sql.rs",
            MemoryType::ErrorPattern,
        ),
    ] {
        let text = std::fs::read_to_string(root.join(file)).expect("source");
        let lines: Vec<&str> = text.lines().filter(|l| l.trim().len() > 3).collect();
        for chunk in lines.chunks(4) {
            let mut memory = NewMemory::new(memory_type, chunk.join("\n"));
            memory.tags = vec![file.rsplit('.').next().unwrap_or("").to_owned()];
            memory.related_files = vec![file.to_owned()];
            memories.push(memory);
        }
    }
    for text in [
        "Réservations échouent quand le cache est plein",
        "Der Datenbankpool ist erschöpft, Anfragen hängen",
        "Кэш сбрасывается при каждом деплое",
    ] {
        memories.push(NewMemory::new(MemoryType::Gotcha, text));
    }
    memories
}

fn keyword(text: &str) -> SearchQuery {
    SearchQuery {
        mode: SearchMode::Keyword,
        limit: 10,
        ..SearchQuery::new(text)
    }
}

/// Each hit's id, keyword rank and BM25 score.
fn keyword_hits(response: &SearchResponse) -> Vec<(String, u32, f64)> {
    response
        .hits
        .iter()
        .map(|h| {
            let hit = h.breakdown.keyword.expect("a keyword hit");
            (h.memory.id.clone(), hit.rank, hit.metric)
        })
        .collect()
}

fn assert_same(a: &SearchResponse, b: &SearchResponse, what: &str) {
    let (a, b) = (keyword_hits(a), keyword_hits(b));
    assert_eq!(a.len(), b.len(), "{what}");
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((&x.0, x.1), (&y.0, y.1), "{what}");
        assert!((x.2 - y.2).abs() < 1e-9, "{what}: {} vs {}", x.2, y.2);
    }
}

/// Queries from the corpus itself: a few words of every 25th memory that give a search
/// something to look for (a search with no token to match, such as "2 of its 2.9 s)", has
/// no statement to run), identifiers, prose, and words no memory has.
fn queries(corpus: &[NewMemory]) -> Vec<String> {
    let mut queries: Vec<String> = corpus
        .iter()
        .step_by(25)
        .map(|m| {
            m.content
                .split_whitespace()
                .skip(2)
                .take(6)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|q| !engram_core::query::tokenize(q).is_empty())
        .collect();
    queries.extend(
        [
            "reciprocal rank fusion weights",
            "why does the keyword path drop common terms",
            "PathWeights::for_type identifier queries",
            "npm test command",
            "cache plein réservations",
            "RÉSERVATIONS Échouent",
            "erschöpft Datenbankpool hängen",
            "кэш деплое",
            "Reciprocal RANK Fusion",
            "xylophone zeppelin",
        ]
        .map(String::from),
    );
    queries.push(long_report(corpus));
    queries
}

/// An issue-like report: a title naming code, then a body pasted from the corpus, long
/// enough to be cut to the token cap, so that the title's names count twice (a repeated
/// phrase in the MATCH expression, a repeated term in the resident index).
fn long_report(corpus: &[NewMemory]) -> String {
    let mut report = String::from("`PathWeights` and `relative_scale` decide the fused order\n");
    for memory in corpus.iter().skip(40).take(12) {
        report.push_str(&memory.content);
        report.push('\n');
    }
    report
}

async fn search_counted<D: Database>(
    engram: &Engram<D>,
    query: &SearchQuery,
    requests: &dyn Fn() -> Option<usize>,
    what: &str,
) -> SearchResponse {
    let before = requests();
    let response = engram.search(query).await.unwrap();
    if let Some(before) = before {
        assert_eq!(requests(), Some(before + 1), "{what}: round trips");
    }
    response
}

/// How many of `ids` are live memories.
async fn live_count<D: Database>(
    engram: &Engram<D>,
    ids: &std::collections::HashSet<String>,
) -> usize {
    let mut live = 0;
    for id in ids {
        live += usize::from(engram.get(id).await.unwrap().is_some());
    }
    live
}

async fn resident_matches_fts5<D: Database + Copy>(db: D, requests: &dyn Fn() -> Option<usize>) {
    let project = format!("rk-{}", nonce());
    let open = |project: String| async move { open_project(db, &project).await };
    let plain = open(project.clone()).await;
    let corpus = corpus();
    // Chunks that repeat or replace one another consolidate: count the memories kept.
    let mut kept = std::collections::HashSet::new();
    for memory in &corpus {
        let stored = plain.remember(memory.clone()).await.unwrap();
        kept.insert(stored.id.clone());
        kept.extend(stored.superseded);
    }
    // Another project's memories are in the keyword table's statistics, never in results.
    let other = open(format!("{project}-other")).await;
    let mut kept_other = std::collections::HashSet::new();
    for memory in corpus.iter().step_by(3) {
        let stored = other.remember(memory.clone()).await.unwrap();
        kept_other.insert(stored.id.clone());
        kept_other.extend(stored.superseded);
    }

    let mut resident = open(project.clone()).await;
    assert_eq!(resident.resident_keyword_count(), None);
    resident.enable_resident_keywords();
    let queries = queries(&corpus);
    // The first search loads the index in its own round trip; FTS5 answers it.
    let first = search_counted(&resident, &keyword(&queries[0]), requests, "loading").await;
    // The index holds every live memory of both projects.
    let total = live_count(&plain, &kept).await + live_count(&other, &kept_other).await;
    assert_eq!(resident.resident_keyword_count(), Some(total));
    assert_same(
        &first,
        &plain.search(&keyword(&queries[0])).await.unwrap(),
        "loading",
    );
    let mut with_hits = 0;
    for query in &queries {
        let got = search_counted(&resident, &keyword(query), requests, query).await;
        assert_same(&got, &plain.search(&keyword(query)).await.unwrap(), query);
        with_hits += usize::from(!got.hits.is_empty());
        // Keyword and graph together, as a search without an embedder runs.
        let hybrid = SearchQuery::new(query.as_str());
        let (a, b) = (
            resident.search(&hybrid).await.unwrap(),
            plain.search(&hybrid).await.unwrap(),
        );
        let ids = |r: &SearchResponse| {
            r.hits
                .iter()
                .map(|h| h.memory.id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&a), ids(&b), "hybrid {query}");
    }
    // The other project's searches: FTS5 ranks its rows alone, and the pick its memories
    // alone, with the same results.
    let mut resident_other = open(format!("{project}-other")).await;
    resident_other.enable_resident_keywords();
    resident_other.load_resident_keywords().await.unwrap();
    let mut other_hits = 0;
    for query in &queries {
        let got = search_counted(&resident_other, &keyword(query), requests, query).await;
        assert_same(&got, &other.search(&keyword(query)).await.unwrap(), query);
        other_hits += got.hits.len();
    }
    assert!(other_hits > queries.len(), "{other_hits}");
    let report = long_report(&corpus);
    let got = resident.search(&keyword(&report)).await.unwrap();
    assert!(!got.emphasized.is_empty(), "{:?}", got.tokens);
    assert!(!got.hits.is_empty());
    assert!(
        with_hits + 2 >= queries.len(),
        "{with_hits} of {} found anything",
        queries.len()
    );

    // Another writer's memory and forget: the next search sees both.
    let query = keyword("reciprocal rank fusion weights");
    let top = plain.search(&query).await.unwrap().hits[0]
        .memory
        .id
        .clone();
    assert!(plain.forget(&top).await.unwrap());
    let newcomer = plain
        .remember(NewMemory::new(
            MemoryType::Gotcha,
            "Reciprocal rank fusion needs its weights per query type: fusion weights",
        ))
        .await
        .unwrap();
    let got = search_counted(&resident, &query, requests, "after writes").await;
    assert_same(&got, &plain.search(&query).await.unwrap(), "after writes");
    // Not necessarily first: the searches above counted as uses, which raised the
    // confidence of the memories they showed when `forget` wrote.
    assert!(got.hits.iter().any(|h| h.memory.id == newcomer.id));
    assert!(got.hits.iter().all(|h| h.memory.id != top));
    assert_eq!(resident.resident_keyword_count(), Some(total));
    // Caught up: the pick answers, with the same results.
    let again = search_counted(&resident, &query, requests, "caught up").await;
    assert_same(&again, &got, "caught up");

    // A filter that leaves fewer than the keyword limit among the pick: FTS5's exact form.
    let filtered = SearchQuery {
        types: vec![MemoryType::Gotcha],
        ..keyword("fusion weights query")
    };
    let got = resident.search(&filtered).await.unwrap();
    assert!(!got.hits.is_empty());
    assert_same(&got, &plain.search(&filtered).await.unwrap(), "filtered");

    // The pick really answers: a row written into the keyword table behind the change
    // log's back (no memory change) is found by FTS5 but not by the resident index.
    let planted = &plain
        .search(&keyword("npm test command"))
        .await
        .unwrap()
        .hits[0]
        .memory
        .id;
    let fillers: Vec<String> = fillers(&plain).await;
    // The index catches up with the fillers (FTS5 answers this search).
    resident.search(&keyword("quartzlamp")).await.unwrap();
    db.transaction(&[Statement::with_params(
        "INSERT INTO memories_fts (rowid, memory_id, content, tags, related_files) \
         SELECT (key + 1) * 1099511627776 - 1, ?1, ?2, '', '' FROM projects WHERE project_id = ?3",
        vec![
            Value::from(planted.as_str()),
            Value::from("zyzzyvaquark"),
            Value::from(project.as_str()),
        ],
    )])
    .await
    .unwrap();
    let ghost = keyword("zyzzyvaquark quartzlamp");
    let fts5 = plain.search(&ghost).await.unwrap();
    assert_eq!(&fts5.hits[0].memory.id, planted);
    let picked = resident.search(&ghost).await.unwrap();
    assert!(picked.hits.iter().all(|h| &h.memory.id != planted));
    assert!(picked.hits.iter().all(|h| fillers.contains(&h.memory.id)));
    db.transaction(&[Statement::with_params(
        "DELETE FROM memories_fts WHERE memory_id = ?1 AND content = 'zyzzyvaquark'",
        vec![Value::from(planted.as_str())],
    )])
    .await
    .unwrap();
}

/// Thirty memories sharing a rare word, so that a query for it fills the pick.
async fn fillers<D: Database>(engram: &Engram<D>) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..30 {
        let text = format!("quartzlamp note {i}: lamp number {i} flickers");
        ids.push(
            engram
                .remember(NewMemory::new(MemoryType::Gotcha, text))
                .await
                .unwrap()
                .id,
        );
    }
    ids
}

#[tokio::test]
async fn resident_keywords_give_fts5s_results_over_http_in_one_round_trip() {
    let server = TestServer::start(ServerConfig::default()).expect("test server starts");
    let client = HranaClient::new(CountingTransport::default(), &server.url(), None);
    let transport = client.transport();
    resident_matches_fts5(&client, &|| Some(transport.requests.get())).await;
}

#[tokio::test]
async fn resident_keywords_give_fts5s_results_on_an_embedded_file() {
    let (_file, db) = open_db("resident-keywords").await;
    resident_matches_fts5(&db, &|| None).await;
}
