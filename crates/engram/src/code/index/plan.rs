//! Planning one index call: which files changed, what the graph becomes, which memories to
//! flag, and the statements that store it all — computed purely from the previous state
//! and the input, in the order of those stages.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use engram_code::{
    build_file_graph, content_hash, diff_graphs, node_path, patch_graph, CodeGraph, FileOutline,
    FileSet, GraphDelta, Language, Outliner, DEFAULT_CLOSURE_DEPTH,
};
use engram_store::{Rows, Statement, StoreError};

use super::statements;
use super::{
    graph_of, signature, CodeState, FlaggedMemory, IndexOptions, IndexProgress, IndexReport,
    Rename, SourceFile, MAX_FILE_BYTES,
};

/// The new state and the statements that store it.
pub(crate) struct Plan {
    pub state: CodeState,
    pub report: IndexReport,
    pub statements: Vec<Statement>,
    /// Memories to flag: node ids and file paths, with the reason for each.
    reasons: HashMap<String, String>,
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
        for outline in scan.parsed {
            outlines.insert(outline.path.clone(), outline);
        }
        let rebuilt = if local {
            patch(&outlines, &scope, old_graph, &old_links)
        } else {
            rebuild(&outlines, &old_graph)
        };
        let (reasons, flag_paths) =
            flag_reasons(&scan.changed_files, &deleted, &report, &rebuilt.delta);
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
            reasons: &reasons,
            flag_paths: &flag_paths,
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
            reasons,
        }
    }

    /// Reads the flagged memories out of the transaction's results into the report.
    pub fn finish(mut self, results: &[Rows]) -> Result<(CodeState, IndexReport), StoreError> {
        let flag_results = results
            .iter()
            .filter(|r| r.columns.first().is_some_and(|c| c == "id"));
        for rows in flag_results {
            for row in &rows.rows {
                let id = row.first().map_or(Ok(""), |v| v.as_text("id"))?;
                let target = row
                    .get(1)
                    .map_or(Ok(None), |v| v.as_opt_text("target_node_id"))?;
                let files: Vec<String> = row
                    .get(2)
                    .and_then(|v| v.as_text("related_files").ok())
                    .and_then(|t| serde_json::from_str(t).ok())
                    .unwrap_or_default();
                let reason = target
                    .and_then(|t| self.reasons.get(t))
                    .or_else(|| files.iter().find_map(|f| self.reasons.get(f)))
                    .cloned()
                    .unwrap_or_else(|| "code changed".to_owned());
                self.report.flagged.push(FlaggedMemory {
                    id: id.to_owned(),
                    reason,
                });
            }
        }
        self.report.flagged.sort_by(|a, b| a.id.cmp(&b.id));
        Ok((self.state, self.report))
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

/// Why each memory would be flagged, keyed by node id or file path, and the files whose
/// memories are flagged.
fn flag_reasons(
    changed_files: &[String],
    deleted: &BTreeSet<String>,
    report: &IndexReport,
    delta: &GraphDelta,
) -> (HashMap<String, String>, BTreeSet<String>) {
    let mut reasons: HashMap<String, String> = HashMap::new();
    for path in changed_files.iter().chain(deleted) {
        let why = match report.renamed.iter().find(|r| &r.from == path) {
            Some(r) => format!("file renamed to {}", r.to),
            None if deleted.contains(path) => format!("file deleted: {path}"),
            None => format!("file changed: {path}"),
        };
        reasons.insert(path.clone(), why);
    }
    let mut flag_paths: BTreeSet<String> = changed_files.iter().chain(deleted).cloned().collect();
    for (symbol, dependent) in &delta.dependents {
        let why = format!("depends on changed symbol: {symbol}");
        let path = node_path(dependent).to_owned();
        reasons.entry(path.clone()).or_insert_with(|| why.clone());
        flag_paths.insert(path);
        reasons.entry(dependent.clone()).or_insert(why);
    }
    for symbol in &delta.changed_symbols {
        reasons.insert(symbol.clone(), format!("symbol changed: {symbol}"));
    }
    (reasons, flag_paths)
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
