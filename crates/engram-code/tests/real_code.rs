//! Real code in all six languages, as published on registries (`scripts/fetch-corpora.sh`):
//! pytest (Python), rxjs (TypeScript), @tanstack/react-query (TS + TSX), express
//! (JavaScript), cobra (Go), tract-core (Rust). Every file is outlined and chunked; no
//! definition that fits the budget is split; graph edges are checked against facts verified
//! by reading those sources; and the incremental delta reproduces the full closure after
//! real edits.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use engram_code::{
    build_file_graph, build_graph, chunk_file, diff_graphs, full_closure, patch_graph,
    ChunkOptions, ClosureRow, CodeGraph, FileOutline, FileSet, Language, Outliner,
};

fn corpus(name: &str) -> PathBuf {
    let root = std::env::var_os("ENGRAM_CORPORA_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/engram/corpora")))
        .expect("HOME or ENGRAM_CORPORA_DIR");
    let top = name.split('/').take(2).collect::<Vec<_>>().join("/");
    let marker = if name.starts_with("go/") {
        root.join("go/.complete")
    } else {
        root.join(&top).join(".complete")
    };
    assert!(
        marker.exists(),
        "corpus {name} missing under {}: run scripts/fetch-corpora.sh",
        root.display()
    );
    root.join(name)
}

/// Supported files under `root`, relative paths with `/`, in path order.
fn load(root: &Path) -> Vec<(String, String)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("readable corpus")
            .map(|e| e.expect("entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(root, &path, out);
                continue;
            }
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .replace('\\', "/");
            if Language::from_path(&rel).is_some() {
                let text = std::fs::read_to_string(&path).expect("utf-8 source");
                out.push((rel, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

struct Indexed {
    files: Vec<(String, String)>,
    outlines: Vec<FileOutline>,
    graph: CodeGraph,
}

fn index(files: Vec<(String, String)>) -> Indexed {
    let mut outliner = Outliner::new();
    let outlines: Vec<FileOutline> = files
        .iter()
        .map(|(p, s)| outliner.outline(p, s).expect("supported language"))
        .collect();
    let set = FileSet::new(files.iter().map(|(p, _)| p.as_str()));
    let graph = build_graph(&outlines, &set);
    Indexed {
        files,
        outlines,
        graph,
    }
}

fn corpus_index(name: &str) -> Indexed {
    let files = load(&corpus(name));
    assert!(files.len() > 10, "{name}: only {} files", files.len());
    index(files)
}

fn has(g: &CodeGraph, kind: &str, from: &str, to: &str) -> bool {
    g.edges
        .iter()
        .any(|e| e.kind == kind && e.from == from && e.to == to)
}

fn assert_edges(g: &CodeGraph, facts: &[(&str, &str, &str)]) {
    for (kind, from, to) in facts {
        assert!(has(g, kind, from, to), "missing {kind} edge {from} -> {to}");
    }
}

const CORPORA: [&str; 6] = [
    "python/pytest-8.3.4/src",
    "typescript/rxjs-7.8.1/src",
    "tsx/react-query-5.62.0/src",
    "javascript/express-4.21.2/lib",
    "go/src",
    "rust/tract-core-0.23.9/src",
];

#[test]
fn every_file_outlines_and_chunks_without_splitting_a_definition_that_fits() {
    let options = ChunkOptions::default();
    let mut languages = std::collections::HashSet::new();
    for name in CORPORA {
        let indexed = corpus_index(name);
        let mut fitting = 0;
        for ((path, source), outline) in indexed.files.iter().zip(&indexed.outlines) {
            languages.insert(outline.language);
            let chunks = chunk_file(path, source, &options);
            assert!(!source.trim().is_empty() || chunks.is_empty());
            let lines: Vec<&str> = source.lines().collect();
            for d in &outline.definitions {
                let (start, end) = (d.start_line as usize, d.end_line as usize);
                let span: usize = lines[start - 1..end.min(lines.len())]
                    .iter()
                    .map(|l| l.len() + 1)
                    .sum();
                if span > options.max_chars || end - start + 1 > options.max_lines {
                    continue;
                }
                fitting += 1;
                assert!(
                    chunks
                        .iter()
                        .any(|c| c.start_line as usize <= start && c.end_line as usize >= end),
                    "{path}: {} {} (lines {start}-{end}, {span} bytes) was split",
                    d.kind,
                    d.qualified
                );
            }
            let mut last = 0;
            for c in &chunks {
                assert!(c.start_byte >= last, "{path}: chunks overlap");
                assert!(
                    source[last..c.start_byte].trim().is_empty(),
                    "{path}: text lost"
                );
                assert_eq!(&source[c.start_byte..c.end_byte], c.content);
                last = c.end_byte;
            }
            assert!(source[last..].trim().is_empty(), "{path}: tail lost");
        }
        assert!(fitting > 20, "{name}: only {fitting} definitions checked");
    }
    assert_eq!(languages.len(), 6, "languages seen: {languages:?}");
}

#[test]
fn python_pytest_edges() {
    let g = corpus_index("python/pytest-8.3.4/src").graph;
    assert_edges(
        &g,
        &[
            // `from _pytest.main import Session`, `from _pytest import nodes`
            ("imports", "file:_pytest/python.py", "file:_pytest/main.py"),
            ("imports", "file:_pytest/python.py", "file:_pytest/nodes.py"),
            // `class Module(nodes.File, PyCollector)`
            (
                "extends",
                "_pytest/python.py#class:Module",
                "_pytest/nodes.py#class:File",
            ),
            (
                "extends",
                "_pytest/python.py#class:Module",
                "_pytest/python.py#class:PyCollector",
            ),
            // cacheprovider.py:542 imports wrap_session inside the function and calls it.
            (
                "calls",
                "_pytest/cacheprovider.py#function:pytest_cmdline_main",
                "_pytest/main.py#function:wrap_session",
            ),
            (
                "calls",
                "_pytest/fixtures.py#function:showfixtures",
                "_pytest/main.py#function:wrap_session",
            ),
            (
                "contains",
                "_pytest/python.py#class:Module",
                "_pytest/python.py#method:Module.collect",
            ),
        ],
    );
}

#[test]
fn typescript_rxjs_edges() {
    let g = corpus_index("typescript/rxjs-7.8.1/src").graph;
    assert_edges(
        &g,
        &[
            // map.ts: `import { operate } from '../util/lift'` and two more.
            (
                "imports",
                "file:internal/operators/map.ts",
                "file:internal/util/lift.ts",
            ),
            (
                "imports",
                "file:internal/operators/map.ts",
                "file:internal/operators/OperatorSubscriber.ts",
            ),
            (
                "imports",
                "file:internal/operators/map.ts",
                "file:internal/types.ts",
            ),
            (
                "calls",
                "internal/operators/map.ts#function:map",
                "internal/util/lift.ts#function:operate",
            ),
            (
                "calls",
                "internal/operators/map.ts#function:map",
                "internal/operators/OperatorSubscriber.ts#function:createOperatorSubscriber",
            ),
            // `export class Subject<T> extends Observable<T> implements SubscriptionLike`
            (
                "extends",
                "internal/Subject.ts#class:Subject",
                "internal/Observable.ts#class:Observable",
            ),
            (
                "exports",
                "file:internal/operators/map.ts",
                "internal/operators/map.ts#function:map",
            ),
        ],
    );
}

#[test]
fn tsx_react_query_edges() {
    let g = corpus_index("tsx/react-query-5.62.0/src").graph;
    assert_edges(
        &g,
        &[
            (
                "imports",
                "file:HydrationBoundary.tsx",
                "file:QueryClientProvider.tsx",
            ),
            ("imports", "file:index.ts", "file:useQuery.ts"),
            // `const client = useQueryClient(queryClient)` in the component.
            (
                "calls",
                "HydrationBoundary.tsx#function:HydrationBoundary",
                "QueryClientProvider.tsx#function:useQueryClient",
            ),
        ],
    );
}

#[test]
fn javascript_express_edges() {
    let g = corpus_index("javascript/express-4.21.2/lib").graph;
    // express.js lines 18-22: require('./application'), './router/route', './router',
    // './request', './response'; line 79 './middleware/query'.
    assert_edges(
        &g,
        &[
            ("imports", "file:express.js", "file:application.js"),
            ("imports", "file:express.js", "file:router/index.js"),
            ("imports", "file:express.js", "file:router/route.js"),
            ("imports", "file:express.js", "file:request.js"),
            ("imports", "file:express.js", "file:response.js"),
            ("imports", "file:express.js", "file:middleware/query.js"),
            (
                "calls",
                "router/index.js#function:next",
                "router/index.js#function:matchLayer",
            ),
        ],
    );
    // `require('body-parser')` is a package outside the repository: no edge, no node.
    assert!(!g.nodes.iter().any(|n| n.path.contains("body-parser")));
}

#[test]
fn go_cobra_edges() {
    let g = corpus_index("go/src").graph;
    let c = "github.com/spf13/cobra";
    let id = |s: &str| format!("{c}/{s}");
    let facts = [
        // doc/man_docs.go: `import "github.com/spf13/cobra"` — every file of the package.
        (
            "imports",
            id("doc/man_docs.go").replace(c, &format!("file:{c}")),
            format!("file:{c}/command.go"),
        ),
        (
            "calls",
            id("doc/man_docs.go#function:GenManTree"),
            id("doc/man_docs.go#function:GenManTreeFromOpts"),
        ),
        // command.go:968 `_, err := c.ExecuteC()` inside `func (c *Command) Execute()`.
        (
            "calls",
            id("command.go#method:Command.Execute"),
            id("command.go#method:Command.ExecuteC"),
        ),
    ];
    for (kind, from, to) in &facts {
        assert!(
            has(&g, kind, from, to),
            "missing {kind} edge {from} -> {to}"
        );
    }
}

#[test]
fn rust_tract_core_edges() {
    let g = corpus_index("rust/tract-core-0.23.9/src").graph;
    assert_edges(
        &g,
        &[
            // lib.rs: `pub mod axes;` (a folder module) and `pub mod broadcast;`
            ("imports", "file:lib.rs", "file:axes/mod.rs"),
            ("imports", "file:lib.rs", "file:broadcast.rs"),
            // model/typed.rs: `impl Translate<…> for HashMap<…>`
            (
                "implements",
                "model/typed.rs#impl:Translate for HashMap",
                "model/translator.rs#trait:Translate",
            ),
            (
                "calls",
                "model/typed.rs#method:HashMap::translate_node",
                "model/typed.rs#method:TypedModel::check_consistency",
            ),
        ],
    );
}

fn apply(closure: &mut Vec<ClosureRow>, old: &CodeGraph, new: &CodeGraph, depth: u32) {
    let delta = diff_graphs(old, new, depth);
    let replaced: BTreeSet<&str> = delta.closure_ancestors.iter().map(String::as_str).collect();
    closure.retain(|r| !replaced.contains(r.ancestor.as_str()));
    closure.extend(delta.closure_rows);
    closure.sort_by(|a, b| (&a.ancestor, &a.descendant).cmp(&(&b.ancestor, &b.descendant)));
}

fn sorted(mut rows: Vec<ClosureRow>) -> Vec<ClosureRow> {
    rows.sort_by(|a, b| (&a.ancestor, &a.descendant).cmp(&(&b.ancestor, &b.descendant)));
    rows
}

/// Edits one file of a real repository in ways that move, add and remove dependency edges,
/// and checks that the stored closure patched by the delta equals a full recomputation.
#[test]
fn incremental_closure_equals_full_recomputation_after_real_edits() {
    for (name, path, edit) in [
        (
            "python/pytest-8.3.4/src",
            "_pytest/main.py",
            // wrap_session disappears: its callers lose their edge.
            ("def wrap_session(", "def wrap_session_renamed("),
        ),
        (
            "typescript/rxjs-7.8.1/src",
            "internal/operators/map.ts",
            ("import { operate } from '../util/lift';", ""),
        ),
        (
            "go/src",
            "github.com/spf13/cobra/command.go",
            ("_, err := c.ExecuteC()", "err := c.Find()"),
        ),
        (
            "rust/tract-core-0.23.9/src",
            "lib.rs",
            (
                "pub mod broadcast;",
                "pub mod broadcast;\npub mod batchify_again;",
            ),
        ),
    ] {
        let before = corpus_index(name);
        let mut files = before.files.clone();
        let file = files
            .iter_mut()
            .find(|(p, _)| p == path)
            .unwrap_or_else(|| panic!("{name}: no {path}"));
        assert!(file.1.contains(edit.0), "{path}: edit anchor missing");
        file.1 = file.1.replacen(edit.0, edit.1, 1);
        let after = index(files);
        let delta = diff_graphs(&before.graph, &after.graph, 3);
        assert!(!delta.is_empty(), "{name}: the edit changed nothing");
        let mut closure = sorted(full_closure(&before.graph, 3));
        apply(&mut closure, &before.graph, &after.graph, 3);
        let full = sorted(full_closure(&after.graph, 3));
        assert_eq!(closure.len(), full.len(), "{name}: row count");
        if let Some((a, b)) = closure.iter().zip(&full).find(|(a, b)| a != b) {
            panic!("{name}: patched closure differs: {a:?} vs {b:?}");
        }
        // Fewer than half the ancestors are recomputed (cobra is one dense package).
        let ancestors: BTreeSet<&str> = full.iter().map(|r| r.ancestor.as_str()).collect();
        assert!(
            delta.closure_ancestors.len() * 2 < ancestors.len(),
            "{name}: {} of {} ancestors recomputed",
            delta.closure_ancestors.len(),
            ancestors.len()
        );
    }
}

#[test]
fn a_renamed_definition_is_a_changed_symbol_and_moved_code_is_not() {
    let before = index(vec![
        (
            "a.py".into(),
            "def keep():\n    return 1\n\ndef old():\n    return keep()\n".into(),
        ),
        (
            "b.py".into(),
            "from a import old\n\ndef use():\n    return old()\n".into(),
        ),
    ]);
    let after = index(vec![
        (
            "a.py".into(),
            "\n\ndef keep():\n    return 1\n\ndef new():\n    return keep()\n".into(),
        ),
        (
            "b.py".into(),
            "from a import old\n\ndef use():\n    return old()\n".into(),
        ),
    ]);
    let delta = diff_graphs(&before.graph, &after.graph, 3);
    assert_eq!(delta.changed_symbols, vec!["a.py#function:old".to_owned()]);
    assert!(delta
        .removed_nodes
        .contains(&"a.py#function:old".to_owned()));
    // `keep` moved down two lines: updated in place, not a changed symbol.
    assert!(delta
        .upserted_nodes
        .iter()
        .any(|n| n.id == "a.py#function:keep" && n.start_line == 3));
    assert!(delta
        .removed_edges
        .iter()
        .any(|e| e.kind == "calls" && e.from == "b.py#function:use"));
}

/// When an edit keeps a file's definition names, rebuilding only that file's part of the
/// graph gives the same graph and the same delta as rebuilding everything.
#[test]
fn patching_one_file_equals_rebuilding_the_graph() {
    for (name, path, edit) in [
        (
            "python/pytest-8.3.4/src",
            "_pytest/main.py",
            (
                "return wrap_session(config, _main)",
                "return _main(config, None)",
            ),
        ),
        (
            "typescript/rxjs-7.8.1/src",
            "internal/operators/map.ts",
            (
                "return operate((source, subscriber) => {",
                "return operate((source, subscriber) => { hasLift(source);",
            ),
        ),
        (
            "go/src",
            "github.com/spf13/cobra/command.go",
            ("_, err := c.ExecuteC()", "err := c.Find()"),
        ),
        // Inside a body, no call changes: no edge changes, wrap_session's callers are its
        // direct dependents.
        (
            "python/pytest-8.3.4/src",
            "_pytest/main.py",
            (
                "session.exitstatus = ExitCode.OK",
                "session.exitstatus = ExitCode.OK  # edited",
            ),
        ),
    ] {
        let before = corpus_index(name);
        let mut files = before.files.clone();
        let file = files.iter_mut().find(|(p, _)| p == path).expect("file");
        assert!(file.1.contains(edit.0), "{path}: edit anchor missing");
        file.1 = file.1.replacen(edit.0, edit.1, 1);
        let after = index(files.clone());
        let full = diff_graphs(&before.graph, &after.graph, 3);

        let set = FileSet::new(files.iter().map(|(p, _)| p.as_str()));
        let scope: BTreeSet<&str> = BTreeSet::from([path]);
        let part = build_file_graph(&after.outlines, &set, &scope);
        let mut patched = before.graph.clone();
        let delta = patch_graph(&mut patched, part, &scope, 3);

        let mut a = patched.edges.clone();
        let mut b = after.graph.edges.clone();
        a.sort_by(|x, y| (&x.from, &x.kind, &x.to).cmp(&(&y.from, &y.kind, &y.to)));
        b.sort_by(|x, y| (&x.from, &x.kind, &x.to).cmp(&(&y.from, &y.kind, &y.to)));
        assert!(a == b, "{name}: patched edges differ");
        let mut a = patched.nodes.clone();
        let mut b = after.graph.nodes.clone();
        a.sort_by(|x, y| x.id.cmp(&y.id));
        b.sort_by(|x, y| x.id.cmp(&y.id));
        assert!(a == b, "{name}: patched nodes differ");
        let body_only = edit.1.ends_with("# edited");
        assert_eq!(
            delta.added_edges.is_empty() && delta.removed_edges.is_empty(),
            body_only,
            "{name}: edges changed or not as expected"
        );
        if body_only {
            assert!(delta
                .dependents
                .iter()
                .any(|(s, d)| s == "_pytest/main.py#function:wrap_session"
                    && d == "_pytest/cacheprovider.py#function:pytest_cmdline_main"));
        }
        let sort_nodes = |mut v: Vec<engram_code::GraphNode>| {
            v.sort_by(|x, y| x.id.cmp(&y.id));
            v
        };
        assert_eq!(
            sort_nodes(delta.upserted_nodes),
            sort_nodes(full.upserted_nodes)
        );
        assert_eq!(delta.changed_symbols.len(), full.changed_symbols.len());
        let mut a = delta.dependents.clone();
        let mut b = full.dependents.clone();
        a.sort();
        b.sort();
        assert_eq!(a, b, "{name}: dependents of changed symbols");
        assert_eq!(delta.closure_ancestors, full.closure_ancestors, "{name}");
        assert!(
            sorted(delta.closure_rows) == sorted(full.closure_rows),
            "{name}"
        );
    }
}
