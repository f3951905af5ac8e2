//! Incremental indexing of a repository's code: the host hands in file contents, engram
//! outlines only what changed (by content hash), rebuilds the graph in memory from the kept
//! outlines, and writes the delta — nodes, edges, closure rows — in one transaction, flagging
//! the memories of changed symbols for review.

use std::collections::{BTreeMap, BTreeSet};

use engram_code::{build_graph, CodeGraph, FileOutline, FileSet};
use engram_core::ValidationError;
use engram_store::{Rows, StoreError};
use serde::{Deserialize, Serialize};

mod plan;
mod statements;

pub(crate) use self::plan::Plan;

/// Largest file indexed; bigger ones (generated or vendored code) are skipped and reported.
pub const MAX_FILE_BYTES: usize = 1 << 20;
/// Longest accepted path.
pub const MAX_PATH_CHARS: usize = 1024;

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
    /// `symbol changed: <node>`, `symbol removed: <node>`, or `file deleted: <path>`.
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
