//! The code-graph scenario every backend and host runs: indexing, impact analysis with
//! attached memories, dependencies, neighbours, staleness, incremental re-index (changed,
//! renamed, deleted files; memories made stale by a changed symbol or a deleted file,
//! memories following a renamed file) and agreement between an
//! incrementally maintained graph and the same files indexed from scratch. Panics on the
//! first broken expectation, like a test.

use engram::{Database, Engram, ImpactReport, IndexOptions, MemoryType, NewMemory, SourceFile};

/// The scenario's repository: three TypeScript files and a README, `users` as the
/// contents of `src/users.ts`.
pub fn repo(users: &str) -> Vec<SourceFile> {
    vec![
        SourceFile::new(
            "src/db.ts",
            "export function query(sql: string) { return sql; }\nexport class Pool { connect() { return query('x'); } }\n",
        ),
        SourceFile::new("src/users.ts", users),
        SourceFile::new(
            "src/routes.ts",
            "import { getUser } from './users';\nexport function handler() { return getUser(1); }\n",
        ),
        SourceFile::new("README.md", "# demo\n"),
    ]
}

/// `src/users.ts` as first indexed.
pub const USERS: &str = "import { query } from './db';\nexport function getUser(id: number) { return query('select ' + id); }\n";
/// `src/users.ts` after an edit to `getUser`.
pub const USERS_EDITED: &str = "import { query } from './db';\nexport function getUser(id: number) { return query('select * where id = ' + id); }\n";

fn ids(report: &ImpactReport) -> Vec<(&str, u32)> {
    report
        .impacted
        .iter()
        .map(|n| (n.id.as_str(), n.depth))
        .collect()
}

/// Runs the scenario on `engram` (an empty project) and `fresh` (another empty project on
/// the same database).
pub async fn code_graph_suite<D: Database>(engram: &Engram<D>, fresh: &Engram<D>) {
    let all = IndexOptions {
        complete: true,
        ..IndexOptions::default()
    };
    let report = engram.index_files(&repo(USERS), &all).await.unwrap();
    assert_eq!((report.files, report.added, report.unsupported), (3, 3, 1));
    assert!(report.closure_rows_written > 0);
    assert!(report.flagged.is_empty());

    let on_symbol = NewMemory {
        target_node_id: Some("src/users.ts#function:getUser".into()),
        ..NewMemory::new(
            MemoryType::Gotcha,
            "getUser must not be called before the pool connects",
        )
    };
    let on_symbol = engram.remember(on_symbol).await.unwrap().id;
    let on_file = NewMemory {
        related_files: vec!["src/routes.ts".into()],
        ..NewMemory::new(MemoryType::Pattern, "Route handlers return plain objects")
    };
    let on_file = engram.remember(on_file).await.unwrap().id;
    let by_name = NewMemory {
        related_files: vec!["src/users.ts".into()],
        ..NewMemory::new(
            MemoryType::Gotcha,
            "`getUser` builds its SQL by concatenation: pass numbers only",
        )
    };
    let naming = engram.remember(by_name).await.unwrap().id;
    let unrelated = NewMemory {
        related_files: vec!["src/other.py".into()],
        ..NewMemory::new(MemoryType::Gotcha, "Unrelated file")
    };
    engram.remember(unrelated).await.unwrap();

    // Who is impacted by a change to `query`: getUser calls it, handler calls getUser,
    // and the files importing db.ts / users.ts.
    let impact = engram
        .analyze_impact("src/db.ts#function:query", 3)
        .await
        .unwrap();
    let impacted = ids(&impact);
    assert!(
        impacted.contains(&("src/users.ts#function:getUser", 1)),
        "{impacted:?}"
    );
    assert!(
        impacted.contains(&("src/routes.ts#function:handler", 2)),
        "{impacted:?}"
    );
    assert!(
        impacted.contains(&("src/db.ts#method:Pool.connect", 1)),
        "{impacted:?}"
    );
    assert_eq!(
        impact.impacted[0].path_ids.first().map(String::as_str),
        Some("src/db.ts#function:query")
    );
    let handler = impact
        .impacted
        .iter()
        .find(|n| n.id == "src/routes.ts#function:handler")
        .unwrap();
    assert_eq!(
        handler.path_ids,
        vec![
            "src/db.ts#function:query",
            "src/users.ts#function:getUser",
            "src/routes.ts#function:handler"
        ]
    );
    assert_eq!(handler.edge_kinds, vec!["calls", "calls"]);
    let mut attached: Vec<(&str, &str, u32)> = impact
        .memories
        .iter()
        .map(|m| (m.id.as_str(), m.attached_to.as_str(), m.depth))
        .collect();
    // Memories at one depth come in no set order.
    attached.sort_by_key(|&(_, to, depth)| (depth, std::cmp::Reverse(to.len())));
    assert_eq!(
        attached,
        vec![
            (on_symbol.as_str(), "src/users.ts#function:getUser", 1),
            (naming.as_str(), "src/users.ts", 1),
            (on_file.as_str(), "src/routes.ts", 2)
        ]
    );
    // Depth bounds the answer.
    let shallow = engram
        .analyze_impact("src/db.ts#function:query", 1)
        .await
        .unwrap();
    assert!(shallow.impacted.iter().all(|n| n.depth == 1));
    // A file target covers its definitions; a qualified name works too.
    let by_file = engram.analyze_impact("src/db.ts", 3).await.unwrap();
    assert!(by_file.targets.len() >= 3);
    assert!(ids(&by_file).contains(&("file:src/users.ts", 1)));
    let by_name = engram.analyze_impact("getUser", 3).await.unwrap();
    assert_eq!(ids(&by_name)[0], ("src/routes.ts#function:handler", 1));
    let unknown = engram.analyze_impact("no/such/file.ts", 3).await.unwrap();
    assert!(unknown.targets.is_empty() && unknown.impacted.is_empty());

    let (deps, dep_files) = engram.dependencies("src/routes.ts", 3).await.unwrap();
    let dep_ids: Vec<(&str, u32)> = deps.iter().map(|n| (n.id.as_str(), n.depth)).collect();
    assert!(
        dep_ids.contains(&("src/users.ts#function:getUser", 1)),
        "{dep_ids:?}"
    );
    assert!(
        dep_ids.contains(&("src/db.ts#function:query", 2)),
        "{dep_ids:?}"
    );
    // Paths run from the depended-upon node to the file's own node.
    let query = deps.iter().find(|n| n.depth == 2).unwrap();
    assert_eq!(query.path_ids.first(), Some(&query.id));
    assert_eq!(query.path_ids.len(), 3);
    assert_eq!(dep_files[0].path, "src/users.ts");

    let around = engram.neighbours(&["src/users.ts".into()]).await.unwrap();
    let around: Vec<(&str, &str)> = around
        .iter()
        .map(|n| (n.path.as_str(), n.direction.as_str()))
        .collect();
    assert_eq!(
        around,
        vec![("src/db.ts", "depends_on"), ("src/routes.ts", "dependent")]
    );

    // Nothing changed: nothing written.
    let again = engram.index_files(&repo(USERS), &all).await.unwrap();
    assert_eq!(
        (again.unchanged, again.nodes_written, again.edges_added),
        (3, 0, 0)
    );
    assert_eq!(again.closure_rows_written, 0);

    // A file changes on disk: its edges go stale at once.
    assert!(engram.mark_stale(&["src/users.ts".into()]).await.unwrap() > 0);
    let around = engram.neighbours(&["src/db.ts".into()]).await.unwrap();
    assert!(
        around.iter().all(|n| n.path != "src/users.ts"),
        "{around:?}"
    );
    let impact = engram.analyze_impact("query", 3).await.unwrap();
    assert!(impact
        .impacted
        .iter()
        .any(|n| n.stale && n.path == "src/users.ts"));

    // Re-indexed with getUser's body edited: the symbol changed, so the memories attached
    // to it (by target, or by naming it in a memory about its file) are stale; the memory
    // about the file that calls it is not (its own code did not change). The graph's
    // staleness is cleared.
    let edited = engram.index_files(&repo(USERS_EDITED), &all).await.unwrap();
    assert_eq!((edited.changed, edited.unchanged), (1, 2));
    assert_eq!(
        edited.changed_symbols,
        vec!["src/users.ts#function:getUser"]
    );
    let flagged: Vec<(&str, &str)> = edited
        .flagged
        .iter()
        .map(|f| (f.id.as_str(), f.reason.as_str()))
        .collect();
    let mut expected = vec![
        (
            on_symbol.as_str(),
            "symbol changed: src/users.ts#function:getUser",
        ),
        (
            naming.as_str(),
            "symbol changed: src/users.ts#function:getUser",
        ),
    ];
    expected.sort();
    assert_eq!(flagged, expected);
    let stale = engram.get(&on_symbol).await.unwrap().unwrap();
    assert!(stale.flags.needs_review);
    assert_eq!(
        stale.stale_reason.as_deref(),
        Some("symbol changed: src/users.ts#function:getUser")
    );
    let history = engram.history(&naming).await.unwrap();
    assert_eq!(
        history.last().map(|e| (e.action, e.reason.as_str())),
        Some((
            engram::HistoryAction::Stale,
            "symbol changed: src/users.ts#function:getUser"
        ))
    );
    let caller = engram.get(&on_file).await.unwrap().unwrap();
    assert!(!caller.flags.needs_review && caller.stale_reason.is_none());
    let around = engram.neighbours(&["src/db.ts".into()]).await.unwrap();
    assert!(around.iter().any(|n| n.path == "src/users.ts"));
    let impact = engram.analyze_impact("query", 3).await.unwrap();
    assert!(impact.impacted.iter().all(|n| !n.stale));

    // users.ts moves to users/index.ts; `./users` still resolves to it.
    let moved_memory = NewMemory {
        related_files: vec!["src/users.ts".into()],
        ..NewMemory::new(MemoryType::Decision, "Users are looked up by numeric id")
    };
    let moved_memory = engram.remember(moved_memory).await.unwrap().id;
    let mut files = repo(USERS_EDITED);
    files[1].path = "src/users/index.ts".into();
    let moved = engram.index_files(&files, &all).await.unwrap();
    assert_eq!(moved.renamed.len(), 1);
    assert_eq!(
        (moved.renamed[0].from.as_str(), moved.renamed[0].to.as_str()),
        ("src/users.ts", "src/users/index.ts")
    );
    assert_eq!((moved.added, moved.deleted), (0, 0));
    // A move is not staleness: the memories' paths and targets follow the file.
    assert!(moved.flagged.is_empty(), "{:?}", moved.flagged);
    let followed = engram.get(&moved_memory).await.unwrap().unwrap();
    assert_eq!(followed.related_files, ["src/users/index.ts"]);
    assert!(!followed.flags.needs_review);
    assert_eq!(
        engram
            .history(&moved_memory)
            .await
            .unwrap()
            .last()
            .map(|e| e.action),
        Some(engram::HistoryAction::Renamed)
    );
    assert_eq!(
        engram
            .get(&on_symbol)
            .await
            .unwrap()
            .unwrap()
            .target_node_id
            .as_deref(),
        Some("src/users/index.ts#function:getUser")
    );
    let about_users = engram
        .memories_about_files(&["src/users/index.ts".into()], &[])
        .await
        .unwrap();
    assert!(about_users.iter().any(|m| m.id == moved_memory));
    let impact = engram.analyze_impact("query", 3).await.unwrap();
    assert!(ids(&impact).contains(&("src/users/index.ts#function:getUser", 1)));
    assert!(ids(&impact).contains(&("src/routes.ts#function:handler", 2)));

    // routes.ts is deleted (a partial call naming it).
    let removed = engram
        .index_files(
            &[],
            &IndexOptions {
                complete: false,
                removed: vec!["src/routes.ts".into()],
            },
        )
        .await
        .unwrap();
    assert_eq!(removed.deleted, 1);
    assert_eq!(
        removed
            .flagged
            .iter()
            .map(|f| (f.id.as_str(), f.reason.as_str()))
            .collect::<Vec<_>>(),
        [(on_file.as_str(), "file deleted: src/routes.ts")]
    );
    let impact = engram.analyze_impact("query", 3).await.unwrap();
    assert!(impact.impacted.iter().all(|n| n.path != "src/routes.ts"));

    // The incrementally maintained graph equals the final files indexed from scratch.
    let mut last = repo(USERS_EDITED);
    last[1].path = "src/users/index.ts".into();
    last.remove(2);
    fresh.index_files(&last, &all).await.unwrap();
    assert!(engram.code_index_status().await.unwrap().generation > 1);
    assert_same_graph(engram, fresh, &["src/db.ts", "query"]).await;

    // Bad input is refused before anything is written.
    let bad = engram
        .index_files(&[SourceFile::new("../etc/passwd.py", "x = 1\n")], &all)
        .await
        .unwrap_err();
    assert_eq!(bad.code(), "invalid_input");
    assert_eq!(bad.violations()[0].field, "files[0].path");
    let dup = vec![SourceFile::new("a.py", ""), SourceFile::new("a.py", "")];
    assert_eq!(
        engram
            .index_files(&dup, &all)
            .await
            .unwrap_err()
            .violations()[0]
            .field,
        "files[1].path"
    );
    let still = engram.analyze_impact("query", 3).await.unwrap();
    assert!(!still.impacted.is_empty());
}

/// Asserts that two projects hold the same graph: the same counts of files, nodes, edges and
/// closure rows, and the same impact of each of `targets` (which must impact something
/// in at least one project).
pub async fn assert_same_graph<A: Database, B: Database>(
    a: &Engram<A>,
    b: &Engram<B>,
    targets: &[&str],
) {
    let (x, y) = (
        a.code_index_status().await.unwrap(),
        b.code_index_status().await.unwrap(),
    );
    assert_eq!(
        (x.files, x.nodes, x.edges, x.closure_rows),
        (y.files, y.nodes, y.edges, y.closure_rows)
    );
    assert!(x.closure_rows > 0);
    for target in targets {
        let i = a.analyze_impact(target, 3).await.unwrap();
        let j = b.analyze_impact(target, 3).await.unwrap();
        assert!(!i.impacted.is_empty(), "{target}");
        assert_eq!(i.targets, j.targets, "{target}");
        assert_eq!(i.impacted, j.impacted, "{target}");
    }
}
