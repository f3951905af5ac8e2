//! The code graph on real engines: the libSQL test server over HTTP and an embedded libSQL
//! file (rusqlite runs the same suite in `sqlite.rs`; the two SQLite builds cannot share a
//! binary). Indexing, impact analysis with attached memories, dependencies,
//! neighbours, staleness, incremental re-index (changed, renamed, deleted files, memories
//! flagged for review), and agreement between an incrementally maintained graph and one
//! indexed from scratch. Then a real repository (pytest) on the embedded file.

use std::path::{Path, PathBuf};

use crate::common::{nonce, temp_db, CountingTransport};
use engram::{
    Database, Engram, EngramConfig, Host, IndexOptions, MemoryType, NewMemory, SourceFile,
};
use engram_conformance::code_graph::{assert_same_graph, code_graph_suite, repo, USERS};
use engram_hrana::HranaClient;
use engram_libsql::LocalDatabase;
use engram_store::Statement;
use engram_testserver::{ServerConfig, TestServer};

async fn open<D: Database>(db: D, project: &str) -> Engram<D> {
    let config = EngramConfig {
        project_id: project.to_owned(),
    };
    Engram::open(db, config, Host::native())
        .await
        .expect("open")
}

#[tokio::test]
async fn code_graph_on_the_test_server_over_http() {
    let server = TestServer::start(ServerConfig::default()).expect("test server starts");
    let db = HranaClient::new(CountingTransport::default(), &server.url(), None);
    let transport = db.transport();
    let project = format!("code-{}", nonce());
    let engram = open(&db, &project).await;
    let fresh = open(&db, &format!("{project}-fresh")).await;
    code_graph_suite(&engram, &fresh).await;
    // Each query is one HTTP request.
    let before = transport.requests.get();
    engram.analyze_impact("query", 3).await.unwrap();
    engram.dependencies("src/db.ts", 3).await.unwrap();
    engram.neighbours(&["src/db.ts".into()]).await.unwrap();
    assert_eq!(transport.requests.get() - before, 3);
    // A re-index of an unchanged file reads the generation and writes: two requests.
    let before = transport.requests.get();
    engram
        .index_files(
            &[SourceFile::new("src/db.ts", repo(USERS)[0].content.clone())],
            &IndexOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(transport.requests.get() - before, 2);
}

#[tokio::test]
async fn code_graph_on_an_embedded_libsql_file() {
    let path = temp_db("code-libsql");
    let db = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
    let engram = open(&db, "code").await;
    let fresh = open(&db, "code-fresh").await;
    code_graph_suite(&engram, &fresh).await;
}

fn corpus(name: &str) -> PathBuf {
    let root = std::env::var_os("ENGRAM_CORPORA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/engram/corpora")
        });
    let dir = root.join(name);
    assert!(
        dir.exists(),
        "{} missing: run scripts/fetch-corpora.sh",
        dir.display()
    );
    dir
}

fn read_tree(root: &Path) -> Vec<SourceFile> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<SourceFile>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(root, &path, out);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push(SourceFile::new(rel, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

/// pytest 4.4.1 indexed, then 4.5.0 over it: a memory targeting a definition 4.5.0
/// removed and one naming a definition whose text changed are flagged stale with the
/// reason; one targeting an unchanged definition of a changed file is not.
#[tokio::test]
async fn a_real_release_flags_memories_of_removed_and_changed_symbols() {
    let old = read_tree(&corpus("swebench/pytest-4.4.1/src"));
    let new = read_tree(&corpus("swebench/pytest-4.5.0/src"));
    let graph = |files: &[SourceFile]| {
        engram_code::graph_of_files(files.iter().map(|f| (f.path.as_str(), f.content.as_str())))
    };
    let (before, after) = (graph(&old), graph(&new));
    let hash_after: std::collections::HashMap<&str, &str> = after
        .nodes
        .iter()
        .map(|n| (n.id.as_str(), n.hash.as_str()))
        .collect();
    let files_after: std::collections::HashSet<&str> =
        after.nodes.iter().map(|n| n.path.as_str()).collect();
    let definitions = || before.nodes.iter().filter(|n| n.kind != "file");
    let removed = definitions()
        .find(|n| !hash_after.contains_key(n.id.as_str()) && files_after.contains(n.path.as_str()))
        .expect("4.5.0 removes a definition of a file it keeps");
    let unique_in_file = |n: &engram_code::GraphNode| {
        let short = n.label.rsplit('.').next().unwrap_or(&n.label);
        definitions()
            .filter(|d| d.path == n.path && d.label.rsplit('.').next() == Some(short))
            .count()
            == 1
    };
    let changed = definitions()
        .find(|n| {
            hash_after.get(n.id.as_str()).is_some_and(|h| *h != n.hash)
                && n.kind == "function"
                && unique_in_file(n)
        })
        .expect("4.5.0 changes a function");
    let unchanged = definitions()
        .find(|n| n.path == changed.path && hash_after.get(n.id.as_str()) == Some(&n.hash.as_str()))
        .expect("the changed file keeps a definition as it was");

    let path = temp_db("stale-pytest");
    let db = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
    let engram = open(&db, "pytest-stale").await;
    let all = IndexOptions {
        complete: true,
        ..IndexOptions::default()
    };
    engram.index_files(&old, &all).await.unwrap();
    let targeting = |node: &engram_code::GraphNode, text: String| NewMemory {
        target_node_id: Some(node.id.clone()),
        related_files: vec![node.path.clone()],
        ..NewMemory::new(MemoryType::Gotcha, text)
    };
    let on_removed = engram
        .remember(targeting(
            removed,
            format!("{} is called from a plugin hook", removed.label),
        ))
        .await
        .unwrap()
        .id;
    let on_unchanged = engram
        .remember(targeting(
            unchanged,
            format!("{} is called from a plugin hook", unchanged.label),
        ))
        .await
        .unwrap()
        .id;
    let short = changed.label.rsplit('.').next().unwrap_or(&changed.label);
    let naming = NewMemory {
        related_files: vec![changed.path.clone()],
        ..NewMemory::new(
            MemoryType::Gotcha,
            format!("`{short}()` must stay cheap: it runs for every collected item"),
        )
    };
    let naming = engram.remember(naming).await.unwrap().id;

    let report = engram.index_files(&new, &all).await.unwrap();
    let reason = |id: &str| {
        report
            .flagged
            .iter()
            .find(|f| f.id == id)
            .map(|f| f.reason.clone())
    };
    assert_eq!(
        reason(&on_removed),
        Some(format!("symbol removed: {}", removed.id))
    );
    assert_eq!(
        reason(&naming),
        Some(format!("symbol changed: {}", changed.id))
    );
    assert_eq!(reason(&on_unchanged), None, "{:?}", report.flagged);
    let stale = engram.get(&naming).await.unwrap().unwrap();
    assert!(stale.flags.needs_review);
    assert_eq!(stale.stale_reason, reason(&naming));
    assert!(
        !engram
            .get(&on_unchanged)
            .await
            .unwrap()
            .unwrap()
            .flags
            .needs_review
    );
}

/// pytest's sources on an embedded libSQL file: the impact of `wrap_session` is what a
/// reader finds by grep, and a one-file edit re-indexes incrementally to the same graph a
/// scratch index builds.
#[tokio::test]
async fn real_repository_on_an_embedded_libsql_file() {
    let files = read_tree(&corpus("python/pytest-8.3.4/src"));
    let path = temp_db("code-pytest");
    let db = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
    let engram = open(&db, "pytest").await;
    let all = IndexOptions {
        complete: true,
        ..IndexOptions::default()
    };
    let report = engram.index_files(&files, &all).await.unwrap();
    assert!(
        report.files > 60 && report.lines_parsed > 30_000,
        "{report:?}"
    );
    let impact = engram
        .analyze_impact("_pytest/main.py#function:wrap_session", 1)
        .await
        .unwrap();
    let callers: Vec<&str> = impact.impacted.iter().map(|n| n.id.as_str()).collect();
    // grep -n "wrap_session(" src/_pytest/*.py: main.py:330, cacheprovider.py:544,
    // fixtures.py:1799 and 1870.
    for caller in [
        "_pytest/main.py#function:pytest_cmdline_main",
        "_pytest/cacheprovider.py#function:pytest_cmdline_main",
        "_pytest/fixtures.py#function:show_fixtures_per_test",
        "_pytest/fixtures.py#function:showfixtures",
    ] {
        assert!(
            callers.contains(&caller),
            "{caller} missing from {callers:?}"
        );
    }

    let mut edited = files.clone();
    let main = edited
        .iter_mut()
        .find(|f| f.path == "_pytest/main.py")
        .unwrap();
    main.content = main.content.replacen(
        "return wrap_session(config, _main)",
        "return _main(config, None)",
        1,
    );
    let one = engram.index_files(&edited, &all).await.unwrap();
    assert_eq!((one.changed, one.unchanged), (1, report.files - 1));
    assert!(one
        .changed_symbols
        .contains(&"_pytest/main.py#function:pytest_cmdline_main".to_owned()));
    let fresh = open(&db, "pytest-fresh").await;
    fresh.index_files(&edited, &all).await.unwrap();
    assert_same_graph(
        &engram,
        &fresh,
        &[
            "_pytest/main.py",
            "_pytest/nodes.py#class:Node",
            "wrap_session",
        ],
    )
    .await;

    // The file links the indexer maintained through an incremental edit and a stale mark
    // are the ones the schema migration derives from the stored edges and nodes.
    engram
        .mark_stale(&["_pytest/nodes.py".into()])
        .await
        .unwrap();
    let maintained = file_links(&db, "pytest").await;
    let stale = maintained.iter().filter(|l| l.2).count();
    assert!(maintained.len() > 300, "{}", maintained.len());
    assert!(stale > 10 && stale < maintained.len() / 4, "{stale}");
    assert!(maintained
        .iter()
        .filter(|l| l.2)
        .all(|(a, b, _)| a == "_pytest/nodes.py" || b == "_pytest/nodes.py"));
    db.transaction(&[
        Statement::new("DELETE FROM graph_file_links"),
        Statement::new("DELETE FROM schema_migrations WHERE version = 7"),
    ])
    .await
    .unwrap();
    open(&db, "pytest").await;
    assert_eq!(file_links(&db, "pytest").await, maintained);
}

/// The stored file links of `project`: (from, to, stale), sorted.
async fn file_links<D: Database>(db: &D, project: &str) -> Vec<(String, String, bool)> {
    let rows = db
        .transaction(&[Statement::with_params(
            "SELECT file_a, file_b, stale_at IS NOT NULL FROM graph_file_links \
WHERE project_id = ?1 ORDER BY file_a, file_b",
            vec![project.into()],
        )])
        .await
        .unwrap();
    rows[0]
        .rows
        .iter()
        .map(|r| {
            (
                r[0].as_text("a").unwrap().to_owned(),
                r[1].as_text("b").unwrap().to_owned(),
                r[2].as_i64("stale").unwrap() == 1,
            )
        })
        .collect()
}

/// pytest's sources indexed to the test server over HTTP: the whole graph is larger than
/// the server accepts in one request (sent whole, it is refused), so it goes
/// in pieces on one stream, still one transaction, and reads back as the embedded file's.
#[tokio::test]
async fn a_real_repository_indexes_to_a_server_in_pieces() {
    let files = read_tree(&corpus("python/pytest-8.3.4/src"));
    let all = IndexOptions {
        complete: true,
        ..IndexOptions::default()
    };
    let server = TestServer::start(ServerConfig::default()).expect("test server starts");
    let whole = HranaClient::new(engram_hrana::ReqwestTransport::new(), &server.url(), None)
        .with_max_request_bytes(usize::MAX);
    let refused = open(&whole, "pytest-whole")
        .await
        .index_files(&files, &all)
        .await;
    // The server refuses the body (HTTP 413, or a reset before the body is read).
    let error = refused.expect_err("a single request is refused");
    let text = error.to_string();
    assert!(
        text.contains("413") || text.contains("could not reach"),
        "{text}"
    );

    let db = HranaClient::new(CountingTransport::default(), &server.url(), None);
    let engram = open(&db, "pytest-pieces").await;
    let before = db.transport().requests.get();
    let report = engram.index_files(&files, &all).await.unwrap();
    assert!(report.files > 60, "{report:?}");
    assert!(db.transport().requests.get() - before > 3, "not split");
    let impact = engram
        .analyze_impact("_pytest/main.py#function:wrap_session", 1)
        .await
        .unwrap();
    assert!(impact.impacted.len() >= 4, "{impact:?}");

    let path = temp_db("code-pytest-pieces");
    let file = LocalDatabase::open(path.to_str().unwrap()).await.unwrap();
    let local = open(&file, "pytest-pieces").await;
    local.index_files(&files, &all).await.unwrap();
    assert_same_graph(&engram, &local, &[]).await;
}

/// A statement that fails in a later piece rolls back the pieces before it.
#[tokio::test]
async fn a_transaction_in_pieces_is_all_or_nothing() {
    let server = TestServer::start(ServerConfig::default()).expect("test server starts");
    let db = HranaClient::new(engram_hrana::ReqwestTransport::new(), &server.url(), None)
        .with_max_request_bytes(4096);
    db.transaction(&[Statement::new(
        "CREATE TABLE pieces (n INTEGER PRIMARY KEY, pad TEXT)",
    )])
    .await
    .unwrap();
    let insert = |n: i64| {
        Statement::with_params(
            "INSERT INTO pieces (n, pad) VALUES (?1, ?2)",
            vec![n.into(), "x".repeat(500).into()],
        )
    };
    let mut statements: Vec<Statement> = (0..40).map(insert).collect();
    statements.push(insert(7)); // a duplicate key, in the last piece
    assert!(db.transaction(&statements).await.is_err());
    assert_eq!(count_pieces(&db).await, engram_store::Value::from(0i64));
    statements.pop();
    let rows = db.transaction(&statements).await.unwrap();
    assert_eq!(rows.len(), 40);
    assert_eq!(count_pieces(&db).await, engram_store::Value::from(40i64));
}

async fn count_pieces<D: Database>(db: &D) -> engram_store::Value {
    let rows = db
        .transaction(&[Statement::new("SELECT count(*) FROM pieces")])
        .await
        .unwrap();
    rows[0].rows[0][0].clone()
}
