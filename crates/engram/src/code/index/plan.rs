//! Planning one index call: which files changed, what the graph becomes, which memories to
//! flag, and the statements that store it all — computed purely from the previous state
//! and the input, in the order of those stages.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use engram_code::{
    build_file_graph, content_hash, diff_graphs, node_path, patch_graph, CodeGraph, FileOutline,
    FileSet, GraphDelta, Language, Outliner, DEFAULT_CLOSURE_DEPTH,
};
use engram_lifecycle::stale::{CodeChange, Symbol, SymbolChange};
use engram_store::Statement;

use super::statements;
use super::{
    graph_of, signature, CodeState, IndexOptions, IndexProgress, IndexReport, Rename, SourceFile,
    MAX_FILE_BYTES,
};

/// The new state and the statements that store it.
pub(crate) struct Plan {
    pub state: CodeState,
    pub report: IndexReport,
    pub statements: Vec<Statement>,
    /// What changed that memories may cite: moved and deleted files, changed symbols.
    pub change: CodeChange,
}

/// What the parse stage found among the files handed in.
struct Scan<'a> {
    /// Supported files of acceptable size, changed or not.
    looked_at: Vec<&'a str>,
    /// Files not indexed before, with their content hash.
    new_paths: Vec<(String, String)>,
    /// Indexed files whose content changed.
    changed_files: Vec<String>,
    /// The outlines of the new and changed files.
    parsed: Vec<FileOutline>,
    /// Their sizes in bytes.
    sizes: HashMap<&'a str, usize>,
}

/// The graph after the call, what changed in it, and its file links.
pub(super) struct Rebuilt {
    pub graph: CodeGraph,
    pub delta: GraphDelta,
    pub links: BTreeSet<(String, String)>,
}

impl Plan {
    /// Plans the re-index of `files` against `old` (consumed: its outlines are reused).
    pub fn new(
        old: CodeState,
        files: &[SourceFile],
        options: &IndexOptions,
        project: &str,
        now: i64,
        progress: &mut dyn FnMut(IndexProgress),
        outliner: &mut Outliner,
    ) -> Plan {
        let CodeState {
            generation,
            mut outlines,
            graph: old_graph,
            links: old_links,
        } = old;
        let mut report = IndexReport::default();
        let scan = scan(files, &outlines, outliner, progress, &mut report);
        let deleted = deletions(&scan, &mut outlines, options, &mut report);
        let file_rows = statements::file_rows(&scan.parsed, &scan.sizes);
        let local =
            deleted.is_empty() && scan.new_paths.is_empty() && signatures_kept(&scan, &outlines);
        let scope: BTreeSet<String> = scan.parsed.iter().map(|o| o.path.clone()).collect();
        let definitions = definitions_of(&old_graph, scan.changed_files.iter().chain(&deleted));
        for outline in scan.parsed {
            outlines.insert(outline.path.clone(), outline);
        }
        let rebuilt = if local {
            patch(&outlines, &scope, old_graph, &old_links)
        } else {
            rebuild(&outlines, &old_graph)
        };
        let change = code_change(&deleted, &report, &rebuilt.delta, definitions);
        record_graph(&mut report, &rebuilt);
        let writes = statements::Writes {
            project,
            now,
            generation: generation + 1,
            files: outlines.len(),
            deleted: &deleted,
            file_rows,
            looked_at: &scan.looked_at,
            old_links: &old_links,
        };
        let statements = writes.statements(&rebuilt);
        let Rebuilt { graph, links, .. } = rebuilt;
        Plan {
            state: CodeState {
                generation: generation + 1,
                outlines,
                graph,
                links,
            },
            report,
            statements,
            change,
        }
    }

    /// The state after the call and its report.
    pub fn finish(self) -> (CodeState, IndexReport) {
        (self.state, self.report)
    }
}

/// The parse stage: each supported file of acceptable size is hashed, and outlined when it
/// is new or its content changed; progress is reported after each file.
fn scan<'a>(
    files: &'a [SourceFile],
    outlines: &BTreeMap<String, FileOutline>,
    outliner: &mut Outliner,
    progress: &mut dyn FnMut(IndexProgress),
    report: &mut IndexReport,
) -> Scan<'a> {
    let mut scan = Scan {
        looked_at: Vec::new(),
        new_paths: Vec::new(),
        changed_files: Vec::new(),
        parsed: Vec::new(),
        sizes: HashMap::new(),
    };
    let total = files.len() as u64;
    for (done, file) in files.iter().enumerate() {
        progress(IndexProgress {
            files_done: done as u64,
            files_total: total,
            lines_parsed: report.lines_parsed,
        });
        if Language::from_path(&file.path).is_none() {
            report.unsupported += 1;
            continue;
        }
        if file.content.len() > MAX_FILE_BYTES {
            report.too_large.push(file.path.clone());
            continue;
        }
        report.files += 1;
        scan.looked_at.push(&file.path);
        let hash = content_hash(&file.content);
        match outlines.get(&file.path) {
            Some(o) if o.hash == hash => {
                report.unchanged += 1;
                continue;
            }
            Some(_) => {
                report.changed += 1;
                scan.changed_files.push(file.path.clone());
            }
            None => {
                report.added += 1;
                scan.new_paths.push((file.path.clone(), hash));
            }
        }
        if let Some(outline) = outliner.outline(&file.path, &file.content) {
            report.lines_parsed += u64::from(outline.lines);
            scan.sizes.insert(&file.path, file.content.len());
            scan.parsed.push(outline);
        }
    }
    progress(IndexProgress {
        files_done: total,
        files_total: total,
        lines_parsed: report.lines_parsed,
    });
    scan
}

/// The files gone from the graph (removed, missing from a complete call, or now too large
/// or unsupported), taken out of `outlines`; a deleted file whose exact content reappears
/// under a new path is reported as moved.
fn deletions(
    scan: &Scan<'_>,
    outlines: &mut BTreeMap<String, FileOutline>,
    options: &IndexOptions,
    report: &mut IndexReport,
) -> BTreeSet<String> {
    let given: BTreeSet<&str> = scan.looked_at.iter().copied().collect();
    let mut deleted: BTreeSet<String> = options
        .removed
        .iter()
        .filter(|p| outlines.contains_key(*p) && !given.contains(p.as_str()))
        .cloned()
        .collect();
    if options.complete {
        deleted.extend(
            outlines
                .keys()
                .filter(|p| !given.contains(p.as_str()))
                .cloned(),
        );
    }
    for path in &deleted {
        let Some(hash) = outlines.get(path).map(|o| &o.hash) else {
            continue;
        };
        if let Some((to, _)) = scan.new_paths.iter().find(|(_, h)| h == hash) {
            if !report.renamed.iter().any(|r| &r.to == to) {
                report.renamed.push(Rename {
                    from: path.clone(),
                    to: to.clone(),
                });
            }
        }
    }
    report.deleted = (deleted.len() - report.renamed.len()) as u64;
    report.added -= report.renamed.len() as u64;
    for path in &deleted {
        outlines.remove(path);
    }
    deleted
}

/// Whether every changed file still defines the same names: other files' edges can only
/// change when the set of files or those names change.
fn signatures_kept(scan: &Scan<'_>, outlines: &BTreeMap<String, FileOutline>) -> bool {
    scan.parsed.iter().all(|o| {
        outlines
            .get(&o.path)
            .is_some_and(|before| signature(before) == signature(o))
    })
}

/// Only the changed files' part of the graph rebuilt, and so only their links.
fn patch(
    outlines: &BTreeMap<String, FileOutline>,
    scope: &BTreeSet<String>,
    mut graph: CodeGraph,
    old_links: &BTreeSet<(String, String)>,
) -> Rebuilt {
    let scope: BTreeSet<&str> = scope.iter().map(String::as_str).collect();
    let files = FileSet::new(outlines.keys().map(String::as_str));
    let part = build_file_graph(outlines.values(), &files, &scope);
    let delta = patch_graph(&mut graph, part, &scope, DEFAULT_CLOSURE_DEPTH);
    let mut links = graph.file_links_from(&scope);
    links.extend(
        old_links
            .iter()
            .filter(|(from, _)| !scope.contains(from.as_str()))
            .cloned(),
    );
    Rebuilt {
        graph,
        delta,
        links,
    }
}

/// The whole graph rebuilt from the outlines and diffed against the old one.
fn rebuild(outlines: &BTreeMap<String, FileOutline>, old_graph: &CodeGraph) -> Rebuilt {
    let graph = graph_of(outlines);
    let delta = diff_graphs(old_graph, &graph, DEFAULT_CLOSURE_DEPTH);
    let links = graph.file_links();
    Rebuilt {
        graph,
        delta,
        links,
    }
}

/// The definitions `files` had in `graph` (before the call), by file.
fn definitions_of<'a>(
    graph: &CodeGraph,
    files: impl Iterator<Item = &'a String>,
) -> BTreeMap<String, Vec<Symbol>> {
    let files: BTreeSet<&str> = files.map(String::as_str).collect();
    let mut definitions: BTreeMap<String, Vec<Symbol>> = BTreeMap::new();
    for node in &graph.nodes {
        if node.kind != "file" && files.contains(node.path.as_str()) {
            definitions
                .entry(node.path.clone())
                .or_default()
                .push(Symbol {
                    id: node.id.clone(),
                    qualified: node.label.clone(),
                });
        }
    }
    definitions
}

/// What the call changed that memories may cite. A moved file's definitions are not
/// changed symbols: they live on under the new path.
fn code_change(
    deleted: &BTreeSet<String>,
    report: &IndexReport,
    delta: &GraphDelta,
    definitions: BTreeMap<String, Vec<Symbol>>,
) -> CodeChange {
    let renamed: BTreeMap<String, String> = report
        .renamed
        .iter()
        .map(|r| (r.from.clone(), r.to.clone()))
        .collect();
    let removed: BTreeSet<&str> = delta.removed_nodes.iter().map(String::as_str).collect();
    let symbols = delta
        .changed_symbols
        .iter()
        .filter(|id| !renamed.contains_key(node_path(id)))
        .map(|id| {
            let change = if removed.contains(id.as_str()) {
                SymbolChange::Removed
            } else {
                SymbolChange::Changed
            };
            (id.clone(), change)
        })
        .collect();
    CodeChange {
        deleted: deleted
            .iter()
            .filter(|p| !renamed.contains_key(*p))
            .cloned()
            .collect(),
        renamed,
        symbols,
        definitions,
    }
}

/// The graph's size and what changed in it, into the report.
fn record_graph(report: &mut IndexReport, rebuilt: &Rebuilt) {
    let (graph, delta) = (&rebuilt.graph, &rebuilt.delta);
    report.changed_symbols = delta.changed_symbols.clone();
    report.nodes = graph.nodes.len() as u64;
    report.edges = graph.edges.len() as u64;
    report.nodes_written = delta.upserted_nodes.len() as u64;
    report.nodes_removed = delta.removed_nodes.len() as u64;
    report.edges_added = delta.added_edges.len() as u64;
    report.edges_removed = delta.removed_edges.len() as u64;
    report.closure_ancestors = delta.closure_ancestors.len() as u64;
    report.closure_rows_written = delta.closure_rows.len() as u64;
}
