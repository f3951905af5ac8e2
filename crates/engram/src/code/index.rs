//! Incremental indexing of a repository's code: the host hands in file contents, engram
//! outlines only what changed (by content hash), rebuilds the graph in memory from the kept
//! outlines, and writes the delta — nodes, edges, closure rows — in one transaction, flagging
//! the memories of changed symbols for review.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use engram_code::{
    build_file_graph, build_graph, content_hash, diff_graphs, node_path, patch_graph, CodeGraph,
    FileOutline, FileSet, Language, Outliner, DEFAULT_CLOSURE_DEPTH,
};
use engram_core::ValidationError;
use engram_store::{Rows, Statement, StoreError, Value};
use serde::{Deserialize, Serialize};

use super::sql;

/// Largest file indexed; bigger ones (generated or vendored code) are skipped and reported.
pub const MAX_FILE_BYTES: usize = 1 << 20;
/// Longest accepted path.
pub const MAX_PATH_CHARS: usize = 1024;
/// Rows per bulk statement: at most 8 × 400 parameters, far below SQLite's limit, and a
/// request body of reasonable size over HTTP.
const ROWS_PER_STATEMENT: usize = 400;

/// A file handed in by the host: a path relative to the repository root, with `/`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceFile {
    /// Relative path (`src/auth/tokens.ts`).
    pub path: String,
    /// The file's text.
    pub content: String,
}

impl SourceFile {
    /// A file at `path` with `content`.
    pub fn new(path: impl Into<String>, content: impl Into<String>) -> Self {
        SourceFile {
            path: path.into(),
            content: content.into(),
        }
    }
}

/// How to read the files of one [`crate::Engram::index_files`] call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct IndexOptions {
    /// The files are the whole repository: indexed files missing from them were deleted.
    pub complete: bool,
    /// Paths deleted since the last call (for partial calls).
    pub removed: Vec<String>,
}

/// A file that moved: deleted at `from`, added at `to` with the same content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rename {
    /// The old path.
    pub from: String,
    /// The new path.
    pub to: String,
}

/// A memory flagged for review by a re-index, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FlaggedMemory {
    /// The memory.
    pub id: String,
    /// `symbol changed: <node>`, `depends on changed symbol: <node>`, or
    /// `file changed: <path>`.
    pub reason: String,
}

/// What one [`crate::Engram::index_files`] call did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexReport {
    /// Supported files handed in.
    pub files: u64,
    /// Of those, unchanged since the last index (skipped).
    pub unchanged: u64,
    /// New files.
    pub added: u64,
    /// Files whose content changed.
    pub changed: u64,
    /// Files deleted (renames excluded).
    pub deleted: u64,
    /// Files that moved.
    pub renamed: Vec<Rename>,
    /// Files in languages without a grammar (not part of the graph).
    pub unsupported: u64,
    /// Files over [`MAX_FILE_BYTES`], skipped.
    pub too_large: Vec<String>,
    /// Lines parsed by this call.
    pub lines_parsed: u64,
    /// Nodes in the graph after the call.
    pub nodes: u64,
    /// Edges in the graph after the call.
    pub edges: u64,
    /// Nodes inserted or updated.
    pub nodes_written: u64,
    /// Nodes removed.
    pub nodes_removed: u64,
    /// Edges inserted or re-weighted.
    pub edges_added: u64,
    /// Edges removed.
    pub edges_removed: u64,
    /// Ancestors whose closure rows were recomputed.
    pub closure_ancestors: u64,
    /// Closure rows written.
    pub closure_rows_written: u64,
    /// Definitions whose text changed or that disappeared.
    pub changed_symbols: Vec<String>,
    /// Memories flagged for review.
    pub flagged: Vec<FlaggedMemory>,
}

/// Progress of the parse phase of an index call, reported after each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexProgress {
    /// Files looked at so far.
    pub files_done: u64,
    /// Files handed in.
    pub files_total: u64,
    /// Lines parsed so far (unchanged files are not parsed).
    pub lines_parsed: u64,
}

/// What an instance remembers between calls: the outlines and graph of the generation it
/// last read or wrote, so a one-file re-index neither reloads nor reparses the repository.
#[derive(Debug, Clone, Default)]
pub(crate) struct CodeState {
    pub generation: i64,
    pub outlines: BTreeMap<String, FileOutline>,
    pub graph: CodeGraph,
    /// The graph's [`CodeGraph::file_links`], as stored: kept so a re-index diffs against
    /// them without recomputing them from every edge (4–7 ms on pytest).
    pub links: BTreeSet<(String, String)>,
}

impl CodeState {
    /// Decodes the stored files (`SELECT_FILES` rows) into a state of `generation`.
    pub fn from_rows(generation: i64, rows: &Rows) -> Result<Self, StoreError> {
        let mut outlines = BTreeMap::new();
        for row in &rows.rows {
            let [path, _hash, outline] = row.as_slice() else {
                return Err(StoreError::Decode("code_files row shape".into()));
            };
            let outline: FileOutline = serde_json::from_str(outline.as_text("outline")?)
                .map_err(|e| StoreError::Decode(format!("outline of {path:?}: {e}")))?;
            outlines.insert(path.as_text("path")?.to_owned(), outline);
        }
        let graph = graph_of(&outlines);
        Ok(CodeState {
            generation,
            outlines,
            links: graph.file_links(),
            graph,
        })
    }
}

/// What other files' edges can see of a file: its definitions' names, kinds, containers
/// and visibility (not their lines or text).
fn signature(outline: &FileOutline) -> Vec<(&str, &str, &str, Option<&str>, bool)> {
    let mut names: Vec<_> = outline
        .definitions
        .iter()
        .map(|d| {
            (
                d.kind.as_str(),
                d.name.as_str(),
                d.qualified.as_str(),
                d.container.as_deref(),
                d.exported,
            )
        })
        .collect();
    names.sort_unstable();
    names
}

fn graph_of(outlines: &BTreeMap<String, FileOutline>) -> CodeGraph {
    let files = FileSet::new(outlines.keys().map(String::as_str));
    build_graph(outlines.values(), &files)
}

/// Checks the host's input: relative `/` paths, no `..`, no duplicates.
pub(crate) fn validate(
    files: &[SourceFile],
    options: &IndexOptions,
) -> Result<(), ValidationError> {
    let mut seen = BTreeSet::new();
    let paths = files
        .iter()
        .enumerate()
        .map(|(i, f)| (format!("files[{i}].path"), &f.path))
        .chain(
            options
                .removed
                .iter()
                .enumerate()
                .map(|(i, p)| (format!("removed[{i}]"), p)),
        );
    for (field, path) in paths {
        let problem = if path.is_empty() {
            Some("must not be empty")
        } else if path.chars().count() > MAX_PATH_CHARS {
            Some("is longer than 1024 characters")
        } else if path.starts_with('/') || path.contains('\\') || path.contains('\0') {
            Some("must be relative to the repository root, with / separators")
        } else if path
            .split('/')
            .any(|s| s == ".." || s == "." || s.is_empty())
        {
            Some("must not contain empty, . or .. segments")
        } else if field.starts_with("files") && !seen.insert(path.as_str()) {
            Some("appears twice")
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(ValidationError::field(field, problem));
        }
    }
    Ok(())
}

/// The new state and the statements that store it: computed purely from the previous
/// state and the input.
pub(crate) struct Plan {
    pub state: CodeState,
    pub report: IndexReport,
    pub statements: Vec<Statement>,
    /// Memories to flag: node ids and file paths, with the reason for each.
    reasons: HashMap<String, String>,
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
            generation: old_generation,
            mut outlines,
            graph: old_graph,
            links: old_links,
        } = old;
        let mut report = IndexReport::default();
        let mut sizes: HashMap<&str, usize> = HashMap::new();
        let mut looked_at: Vec<&str> = Vec::new();
        let mut new_paths: Vec<(String, String)> = Vec::new();
        let mut changed_files: Vec<String> = Vec::new();
        let mut parsed: Vec<FileOutline> = Vec::new();
        for (done, file) in files.iter().enumerate() {
            progress(IndexProgress {
                files_done: done as u64,
                files_total: files.len() as u64,
                lines_parsed: report.lines_parsed,
            });
            let Some(_) = Language::from_path(&file.path) else {
                report.unsupported += 1;
                continue;
            };
            if file.content.len() > MAX_FILE_BYTES {
                report.too_large.push(file.path.clone());
                continue;
            }
            report.files += 1;
            looked_at.push(&file.path);
            let hash = content_hash(&file.content);
            match outlines.get(&file.path) {
                Some(o) if o.hash == hash => {
                    report.unchanged += 1;
                    continue;
                }
                Some(_) => {
                    report.changed += 1;
                    changed_files.push(file.path.clone());
                }
                None => {
                    report.added += 1;
                    new_paths.push((file.path.clone(), hash));
                }
            }
            if let Some(outline) = outliner.outline(&file.path, &file.content) {
                report.lines_parsed += u64::from(outline.lines);
                sizes.insert(&file.path, file.content.len());
                parsed.push(outline);
            }
        }
        progress(IndexProgress {
            files_done: files.len() as u64,
            files_total: files.len() as u64,
            lines_parsed: report.lines_parsed,
        });
        // Files too large or unsupported now count as gone from the graph.
        let given: BTreeSet<&str> = looked_at.iter().copied().collect();
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
        // A deleted file whose exact content reappears under a new path moved.
        for path in &deleted {
            let Some(hash) = outlines.get(path).map(|o| &o.hash) else {
                continue;
            };
            if let Some((to, _)) = new_paths.iter().find(|(_, h)| h == hash) {
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
        let file_rows: Vec<serde_json::Value> = parsed
            .iter()
            .map(|o| {
                serde_json::json!({
                    "path": o.path, "language": o.language, "hash": o.hash, "lines": o.lines,
                    "bytes": sizes.get(o.path.as_str()).copied().unwrap_or_default(),
                    "outline": json(o),
                })
            })
            .collect();
        // Other files' edges can only change when the set of files or the names a changed
        // file defines change; otherwise only the changed files' part of the graph is
        // rebuilt.
        let local = deleted.is_empty()
            && new_paths.is_empty()
            && parsed.iter().all(|o| {
                outlines
                    .get(&o.path)
                    .is_some_and(|before| signature(before) == signature(o))
            });
        let scope: BTreeSet<String> = parsed.iter().map(|o| o.path.clone()).collect();
        for outline in parsed {
            outlines.insert(outline.path.clone(), outline);
        }
        let (graph, delta, links) = if local {
            let scope: BTreeSet<&str> = scope.iter().map(String::as_str).collect();
            let files = FileSet::new(outlines.keys().map(String::as_str));
            let part = build_file_graph(outlines.values(), &files, &scope);
            let mut graph = old_graph;
            let delta = patch_graph(&mut graph, part, &scope, DEFAULT_CLOSURE_DEPTH);
            // Only the edges out of the scope were rebuilt, so only its links can change.
            let mut links = graph.file_links_from(&scope);
            links.extend(
                old_links
                    .iter()
                    .filter(|(from, _)| !scope.contains(from.as_str()))
                    .cloned(),
            );
            (graph, delta, links)
        } else {
            let graph = graph_of(&outlines);
            let delta = diff_graphs(&old_graph, &graph, DEFAULT_CLOSURE_DEPTH);
            let links = graph.file_links();
            (graph, delta, links)
        };

        // Why each memory would be flagged, keyed by node id or file path.
        let mut reasons: HashMap<String, String> = HashMap::new();
        for path in changed_files.iter().chain(&deleted) {
            let why = match report.renamed.iter().find(|r| &r.from == path) {
                Some(r) => format!("file renamed to {}", r.to),
                None if deleted.contains(path) => format!("file deleted: {path}"),
                None => format!("file changed: {path}"),
            };
            reasons.insert(path.clone(), why);
        }
        let mut flag_paths: BTreeSet<String> =
            changed_files.iter().chain(&deleted).cloned().collect();
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
        report.changed_symbols = delta.changed_symbols.clone();
        report.nodes = graph.nodes.len() as u64;
        report.edges = graph.edges.len() as u64;
        report.nodes_written = delta.upserted_nodes.len() as u64;
        report.nodes_removed = delta.removed_nodes.len() as u64;
        report.edges_added = delta.added_edges.len() as u64;
        report.edges_removed = delta.removed_edges.len() as u64;
        report.closure_ancestors = delta.closure_ancestors.len() as u64;
        report.closure_rows_written = delta.closure_rows.len() as u64;

        let p = || Value::from(project);
        let generation = old_generation + 1;
        // First: it counts the closure rows about to be replaced.
        let mut statements = vec![Statement::with_params(
            sql::UPSERT_STATE,
            vec![
                p(),
                Value::Integer(generation),
                Value::Integer(now),
                Value::Integer(outlines.len() as i64),
                Value::Integer(graph.nodes.len() as i64),
                Value::Integer(graph.edges.len() as i64),
                Value::Integer(i64::from(DEFAULT_CLOSURE_DEPTH)),
                Value::from(json(&delta.closure_ancestors)),
            ],
        )];
        let now_params = || vec![p(), Value::Integer(now)];
        let deleted_paths: Vec<serde_json::Value> =
            deleted.iter().map(|p| p.as_str().into()).collect();
        keys(&mut statements, sql::DELETE_FILES, deleted_paths, vec![p()]);
        keys(&mut statements, sql::UPSERT_FILES, file_rows, now_params());
        keys(
            &mut statements,
            sql::DELETE_NODES,
            delta
                .removed_nodes
                .iter()
                .map(|id| id.as_str().into())
                .collect(),
            vec![p()],
        );
        let node_rows: Vec<Vec<Value>> = delta
            .upserted_nodes
            .iter()
            .map(|n| {
                vec![
                    Value::from(n.id.as_str()),
                    Value::from(n.kind.as_str()),
                    Value::from(n.label.as_str()),
                    Value::from(n.path.as_str()),
                    Value::from(n.language.as_str()),
                    Value::Integer(i64::from(n.start_line)),
                    Value::Integer(i64::from(n.end_line)),
                    Value::from(n.hash.as_str()),
                ]
            })
            .collect();
        values(
            &mut statements,
            sql::upsert_nodes,
            node_rows,
            vec![p(), Value::Integer(now)],
        );
        keys(
            &mut statements,
            sql::DELETE_EDGES,
            delta
                .removed_edges
                .iter()
                .map(|e| serde_json::json!([e.from, e.kind, e.to]))
                .collect(),
            vec![p()],
        );
        let edge_rows: Vec<Vec<Value>> = delta
            .added_edges
            .iter()
            .map(|e| {
                vec![
                    Value::from(e.from.as_str()),
                    Value::from(e.kind.as_str()),
                    Value::from(e.to.as_str()),
                    Value::Float(e.weight),
                ]
            })
            .collect();
        values(
            &mut statements,
            sql::upsert_edges,
            edge_rows,
            vec![p(), Value::Integer(now)],
        );
        keys(
            &mut statements,
            sql::DELETE_CLOSURE,
            delta
                .closure_ancestors
                .iter()
                .map(|id| id.as_str().into())
                .collect(),
            vec![p()],
        );
        let closure_rows: Vec<Vec<Value>> = delta
            .closure_rows
            .iter()
            .map(|r| {
                let via = r
                    .path
                    .get(1..r.path.len().saturating_sub(1))
                    .unwrap_or_default();
                vec![
                    Value::from(r.ancestor.as_str()),
                    Value::from(r.descendant.as_str()),
                    Value::Integer(i64::from(r.depth)),
                    Value::from(json(via)),
                    Value::from(json(&r.edge_kinds)),
                    Value::Float(r.total_weight),
                ]
            })
            .collect();
        values(
            &mut statements,
            sql::insert_closure,
            closure_rows,
            vec![p()],
        );
        let looked: Vec<serde_json::Value> = looked_at.iter().map(|p| (*p).into()).collect();
        keys(
            &mut statements,
            sql::CLEAR_STALE_NODES,
            looked.clone(),
            vec![p()],
        );
        keys(
            &mut statements,
            sql::CLEAR_STALE_EDGES,
            looked.clone(),
            vec![p()],
        );
        keys(
            &mut statements,
            sql::DELETE_FILE_LINKS,
            old_links
                .difference(&links)
                .map(|(a, b)| serde_json::json!([a, b]))
                .collect(),
            vec![p()],
        );
        let added_links: Vec<&(String, String)> = links.difference(&old_links).collect();
        values(
            &mut statements,
            sql::insert_file_links,
            added_links
                .iter()
                .map(|(a, b)| vec![Value::from(a.as_str()), Value::from(b.as_str())])
                .collect(),
            vec![p()],
        );
        // New links start live; those touching a file still marked stale take its mark,
        // and the files just looked at lose theirs.
        let mut refresh: BTreeSet<&str> = looked_at.iter().copied().collect();
        refresh.extend(
            added_links
                .iter()
                .flat_map(|(a, b)| [a.as_str(), b.as_str()]),
        );
        keys(
            &mut statements,
            sql::REFRESH_STALE_LINKS,
            refresh.into_iter().map(Into::into).collect(),
            vec![p(), Value::Integer(now)],
        );
        if !reasons.is_empty() {
            let nodes: Vec<&str> = reasons.keys().map(String::as_str).collect();
            let paths: Vec<&str> = flag_paths.iter().map(String::as_str).collect();
            statements.push(Statement::with_params(
                sql::FLAG_MEMORIES,
                vec![p(), Value::from(json(&nodes)), Value::from(json(&paths))],
            ));
        }
        statements.push(Statement::with_params(
            sql::ADD_CLOSURE_COUNT,
            vec![p(), Value::Integer(delta.closure_rows.len() as i64)],
        ));
        Plan {
            state: CodeState {
                generation,
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

/// Appends statements taking `leading` parameters and one JSON array of `items` (keys to
/// delete, files to upsert), a few hundred items per statement.
fn keys(
    statements: &mut Vec<Statement>,
    sql: &'static str,
    items: Vec<serde_json::Value>,
    leading: Vec<Value>,
) {
    for part in items.chunks(ROWS_PER_STATEMENT) {
        let mut params = leading.clone();
        params.push(Value::from(json(part)));
        statements.push(Statement::with_params(sql, params));
    }
}

/// Appends multi-row inserts of `rows` (each `leading` parameters first), a few hundred rows
/// per statement.
fn values(
    statements: &mut Vec<Statement>,
    sql: fn(usize) -> String,
    rows: Vec<Vec<Value>>,
    leading: Vec<Value>,
) {
    for part in rows.chunks(ROWS_PER_STATEMENT) {
        let mut params = leading.clone();
        params.extend(part.iter().flatten().cloned());
        statements.push(Statement::with_params(sql(part.len()), params));
    }
}

fn json<T: Serialize + ?Sized>(value: &T) -> String {
    // Plain strings and numbers: serializing cannot fail.
    serde_json::to_string(value).unwrap_or_else(|_| "[]".to_owned())
}
