//! The retrieval pipeline on the libSQL test server over HTTP and on an embedded libSQL
//! file: the same scenario gives the same rankings, and every search is exactly one HTTP
//! request (rusqlite runs the scenario in `sqlite.rs`).

use crate::common::{nonce, CountingTransport, FakeWordEmbedder};
use crate::file_db::{open_db, open_engram};
use engram::{Engram, EngramConfig, Host, SearchQuery};
use engram_conformance::retrieval::retrieval_suite;
use engram_hrana::HranaClient;
use engram_store::Database;
use engram_testserver::{ServerConfig, TestServer};

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

    let (_file, db) = open_db("retrieval").await;
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
}

/// Every lookup of the candidate statement goes through an index: the plan never scans a
/// stored table (only the FTS5 match, the vector scan, JSON arrays and the statement's own
/// small intermediate results), and never searches a composite key by its project column
/// alone. A wrong join order here costs a scan of the project's memories or graph per
/// candidate, which is how 10K-memory searches once took 8 ms.
#[tokio::test]
async fn the_candidate_statement_reaches_every_table_by_index() {
    let (_file, db) = open_db("plan").await;
    let engram = open_engram(&db).await;
    // The statement's aliases for stored tables. (No embedder: the exact dense path reads
    // every live memory of the project by design. With resident vectors, the dense path
    // and the vector change log are reached by index; only the exact fallback, `allv`,
    // scans, behind a LIMIT that is 0 unless needed.)
    let stored = [
        "m", "mf", "n", "nfrom", "nto", "ge", "l", "co", "v", "e", "c", "ce", "cm", "k", "nl",
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
        // With filters, every path's filter holds more conditions (and subqueries), and
        // the exact forms may start from the memories of a type, a file or a module.
        let mut typed = query.clone();
        typed.types = vec![engram::MemoryType::Gotcha];
        typed.exclude_ids = vec!["m-0".into()];
        let mut filed = typed.clone();
        filed.files = vec!["src/users.ts".into()];
        let mut moduled = query.clone();
        moduled.modules = vec!["src/users".into()];
        for query in [query, typed, filed, moduled] {
            let plan = engram.search_plan(&query).await.expect("plan");
            assert!(plan.iter().any(|l| l.contains("memories_fts")), "{plan:#?}");
            // FTS5 gets the project's rowid bounds with the MATCH (`M…><` in its plan).
            for line in plan
                .iter()
                .filter(|l| l.contains("memories_fts VIRTUAL TABLE"))
            {
                let index = line.rsplit(':').next().unwrap_or_default();
                assert!(
                    index.starts_with('M') && index.contains('>') && index.contains('<'),
                    "{line}"
                );
            }
            let narrowed =
                !(query.types.is_empty() && query.files.is_empty() && query.modules.is_empty());
            if narrowed {
                // The narrowed forms find their memories' keyword rows by memory.
                assert!(plan.iter().any(|l| l.starts_with("SEARCH k ")), "{plan:#?}");
            }
            if !(query.files.is_empty() && query.modules.is_empty()) {
                // A file's or a module's memories come from its index.
                assert!(
                    plan.iter()
                        .any(|l| l.starts_with("SEARCH nl USING PRIMARY KEY (project_id=? AND ")),
                    "{plan:#?}"
                );
            }
            if engram.uses_resident_vectors() {
                assert!(plan.iter().any(|l| l.starts_with("SEARCH e ")), "{plan:#?}");
                assert!(plan.iter().any(|l| l.starts_with("SEARCH c ")), "{plan:#?}");
                // Hybrid searches read the boost's file adjacency.
                assert!(plan.iter().any(|l| l.starts_with("SEARCH l ")), "{plan:#?}");
            }
            for line in &plan {
                let scanned = line.strip_prefix("SCAN ").and_then(|r| r.split(' ').next());
                assert!(
                    !scanned.is_some_and(|alias| stored.contains(&alias)),
                    "{text}: {line}\n{plan:#?}"
                );
                // Every row of a project is too many; the project's own row is one.
                assert!(
                    !line.ends_with("(project_id=?)") || line.starts_with("SEARCH projects USING "),
                    "{text}: {line}\n{plan:#?}"
                );
                if line.starts_with("SEARCH m ") {
                    assert!(
                        line.ends_with("(id=?)")
                            || line.ends_with("(rowid=?)")
                            || line.contains("target_node_id=?")
                            || line.contains("idx_memories_type_conf (project_id=? AND type=?"),
                        "{text}: memories reached by {line}"
                    );
                }
            }
        }
    }
}

/// A term in at least half the memories ranks nothing under FTS5's BM25 (its idf is
/// clamped to 1e-6), so the keyword path leaves it out of the MATCH, and that changes no
/// result: the rarer term's memory ranks first, memories that only share the common term
/// are still found when the rarer terms match fewer than the limit, and a query made only
/// of common terms matches them all.
#[tokio::test]
async fn leaving_out_common_terms_changes_no_result() {
    let (_file, db) = open_db("common-terms").await;
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
}

/// The keyword path's shortcuts (common terms left out of the MATCH, the best matches
/// ranked before any join, the filtered scan only when too few survive) give a plain BM25
/// ranking of every match: over queries that mix common, middling and rare words, the
/// path's ranks and scores equal FTS5's.
#[tokio::test]
async fn the_keyword_path_ranks_as_fts5_bm25_ranks_every_match() {
    let (_file, db) = open_db("keyword-bm25").await;
    let engram = open_engram(&db).await;
    let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
    let mut below = move |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n as u64) as usize
    };
    let word = |class: &str, i: usize| {
        format!(
            "{class}{}",
            ["ka", "lo", "mi", "ne", "pu"][i % 5].repeat(1 + i / 5)
        )
    };
    for _ in 0..240 {
        let mut words = Vec::new();
        for _ in 0..6 + below(10) {
            // A given "com" word is in about 1 in 4 memories, a "mid" one in 1 in 7, a
            // "sem" one in 1 in 15 and a "rar" one in 1 in 50.
            words.push(match below(20) {
                0..=5 => word("com", below(10)),
                6..=11 => word("mid", below(20)),
                12..=16 => word("sem", below(40)),
                _ => word("rar", below(150)),
            });
        }
        // "omni" is in 3 memories in 5: left out of the MATCH.
        if below(5) < 3 {
            words.push("omni".to_owned());
        }
        engram
            .remember(engram::NewMemory::new(
                engram::MemoryType::Gotcha,
                words.join(" "),
            ))
            .await
            .expect("remember");
    }
    for _ in 0..60 {
        let mut words = vec![word("com", below(10)), word("com", below(10))];
        if below(2) == 0 {
            words.push("omni".to_owned());
        }
        for (class, kinds, most) in [("mid", 20, 2), ("sem", 40, 4), ("rar", 150, 2)] {
            for _ in 0..below(most + 1) {
                words.push(word(class, below(kinds)));
            }
        }
        let text = words.join(" ");
        let mut query = SearchQuery::new(text.as_str());
        query.mode = engram::SearchMode::Keyword;
        query.limit = 20;
        query.stages.diversity = false;
        let found = engram.search(&query).await.expect("search");
        let mut got: Vec<(u32, f64, String)> = found
            .hits
            .iter()
            .filter_map(|h| {
                let k = h.breakdown.keyword.as_ref()?;
                Some((k.rank, k.metric, h.memory.id.clone()))
            })
            .collect();
        got.sort_by_key(|g| g.0);

        let expression = engram_core::query::match_expression(&text).expect("expression");
        let reference = db
            .pipeline(&[engram_store::Statement::with_params(
                "SELECT memory_id, -bm25(memories_fts, 0.0, 1.0, 3.0, 2.0) AS s \
                 FROM memories_fts WHERE memories_fts MATCH ?1 ORDER BY s DESC, memory_id LIMIT 20",
                vec![engram_store::Value::from(expression)],
            )])
            .await
            .expect("reference")
            .remove(0)
            .expect("reference rows");
        let reference: Vec<(String, f64)> = reference
            .rows
            .iter()
            .map(|r| {
                (
                    r[0].as_text("id").expect("id").to_owned(),
                    r[1].as_f64("score").expect("score"),
                )
            })
            .collect();
        assert_eq!(got.len(), reference.len(), "{text}");
        // Terms in half the rows or more are left out of the MATCH (their idf is 1e-6), so
        // scores agree to 1e-5 and only memories tied within that may swap places.
        let last = reference.last().map_or(0.0, |r| r.1);
        for (i, ((rank, metric, id), (ref_id, ref_metric))) in
            got.iter().zip(&reference).enumerate()
        {
            // Competition ranks: one more than the hits that score higher (ties share).
            let above = got.iter().filter(|g| g.1 > *metric).count();
            assert_eq!(*rank as usize, above + 1, "{text}: position {i}");
            assert!(
                (metric - ref_metric).abs() < 1e-5,
                "{text}: rank {rank}: {metric} vs {ref_metric}"
            );
            if ref_metric - last > 1e-5 {
                assert!(
                    got.iter().any(|g| &g.2 == ref_id),
                    "{text}: {ref_id} missing"
                );
            }
            let _ = id;
        }
    }
}
