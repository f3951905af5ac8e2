//! The retrieval pipeline on the libSQL test server over HTTP and on an embedded libSQL
//! file: the same scenario gives the same rankings, and every search is exactly one HTTP
//! request (rusqlite runs the scenario in `sqlite.rs`).

mod common;
mod file_db;

use common::{nonce, CountingTransport, FakeWordEmbedder};
use engram::{Engram, EngramConfig, Host, SearchQuery};
use engram_conformance::retrieval::retrieval_suite;
use engram_hrana::HranaClient;
use engram_testserver::{ServerConfig, TestServer};
use file_db::{open_db, open_engram, remove_db};

#[tokio::test]
async fn retrieval_agrees_over_http_and_on_a_file_in_one_round_trip() {
    let server = TestServer::start(ServerConfig::default()).expect("test server starts");
    let client = HranaClient::new(CountingTransport::default(), &server.url(), None);
    let config = EngramConfig {
        project_id: format!("retrieval-{}", nonce()),
    };
    let remote = Engram::open(&client, config, Host::native())
        .await
        .expect("open");
    let over_http = retrieval_suite(&remote).await;

    let (path, db) = open_db("retrieval").await;
    let local = open_engram(&db).await;
    let on_file = retrieval_suite(&local).await;
    assert_eq!(over_http, on_file);

    let transport = client.transport();
    for text in [
        "why is getUser slow",
        "pool",
        "handlers block in src/routes.ts",
    ] {
        let before = transport.requests.get();
        let mut query = SearchQuery::new(text);
        query.context.recent_files = vec!["src/users.ts".into()];
        query.phase = Some(engram::Phase::Implement);
        remote.search(&query).await.expect("search");
        assert_eq!(transport.requests.get() - before, 1, "{text}");
    }
    remove_db(db, path);
}

/// Every lookup of the candidate statement goes through an index: the plan never scans a
/// stored table (only the FTS5 match, the vector scan, JSON arrays and the statement's own
/// small intermediate results), and never searches a composite key by its project column
/// alone. A wrong join order here costs a scan of the project's memories or graph per
/// candidate, which is how 10K-memory searches once took 8 ms.
#[tokio::test]
async fn the_candidate_statement_reaches_every_table_by_index() {
    let (path, db) = open_db("plan").await;
    let engram = open_engram(&db).await;
    // The statement's aliases for stored tables. (No embedder: the exact dense path reads
    // every live memory of the project by design. With resident vectors, the dense path
    // and the vector change log are reached by index; only the exact fallback, `allv`,
    // scans, behind a LIMIT that is 0 unless needed.)
    let stored = [
        "m", "mf", "n", "nfrom", "nto", "ge", "co", "v", "e", "c", "ce", "cm",
    ];
    let mut resident = open_engram(&db)
        .await
        .with_embedder(Box::new(FakeWordEmbedder));
    resident
        .enable_resident_vectors()
        .expect("resident vectors");
    for (engram, text) in [
        (&engram, "why is getUser slow"),
        (&engram, "how do we deploy"),
        (&engram, "handlers block in src/routes.ts"),
        (&resident, "why is getUser slow"),
        (&resident, "handlers block in src/routes.ts"),
    ] {
        let mut query = SearchQuery::new(text);
        query.context.recent_files = vec!["src/users.ts".into()];
        let plan = engram.search_plan(&query).await.expect("plan");
        assert!(plan.iter().any(|l| l.contains("memories_fts")), "{plan:#?}");
        if engram.uses_resident_vectors() {
            assert!(plan.iter().any(|l| l.starts_with("SEARCH e ")), "{plan:#?}");
            assert!(plan.iter().any(|l| l.starts_with("SEARCH c ")), "{plan:#?}");
        }
        for line in &plan {
            let scanned = line.strip_prefix("SCAN ").and_then(|r| r.split(' ').next());
            assert!(
                !scanned.is_some_and(|alias| stored.contains(&alias)),
                "{text}: {line}\n{plan:#?}"
            );
            assert!(
                !line.ends_with("(project_id=?)"),
                "{text}: {line}\n{plan:#?}"
            );
            if line.starts_with("SEARCH m ") {
                assert!(
                    line.ends_with("(id=?)") || line.contains("target_node_id=?"),
                    "{text}: memories reached by {line}"
                );
            }
        }
    }
    remove_db(db, path);
}

/// A term in at least half the memories ranks nothing under FTS5's BM25 (its idf is
/// clamped to 1e-6), so the keyword path leaves it out of the MATCH, and that changes no
/// result: the rarer term's memory ranks first, memories that only share the common term
/// are still found when the rarer terms match fewer than the limit, and a query made only
/// of common terms matches them all.
#[tokio::test]
async fn leaving_out_common_terms_changes_no_result() {
    let (path, db) = open_db("common-terms").await;
    let engram = open_engram(&db).await;
    for text in [
        "deploying the widget service needs a restart",
        "widgets render slowly in the dashboard",
        "the widget cache is flushed on login",
        "postgres vacuum runs nightly",
    ] {
        engram
            .remember(engram::NewMemory::new(engram::MemoryType::Gotcha, text))
            .await
            .expect("remember");
    }
    let keyword = |text: &str| {
        let mut query = SearchQuery::new(text);
        query.mode = engram::SearchMode::Keyword;
        query
    };
    // "widgets" is indexed as "widget", which 3 of the 4 memories contain.
    let found = engram
        .search(&keyword("widgets postgres"))
        .await
        .expect("search");
    let contents: Vec<&str> = found
        .hits
        .iter()
        .map(|h| h.memory.content.as_str())
        .collect();
    assert_eq!(contents.len(), 4, "{contents:?}");
    assert_eq!(contents[0], "postgres vacuum runs nightly");
    let only_common = engram.search(&keyword("widgets")).await.expect("search");
    assert_eq!(only_common.hits.len(), 3, "{:?}", only_common.hits);
    remove_db(db, path);
}
