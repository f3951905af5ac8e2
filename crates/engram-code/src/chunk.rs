//! AST chunking: split a file at definition boundaries so no function that fits the budget
//! is ever cut, group small neighbours up to the budget, and fall back to line chunks for
//! files that are not code (or do not parse).
//!
//! The file is flattened into *atoms*: nodes that fit the budget, found by descending only
//! into nodes that do not (a big class is opened to its methods, a big function to its
//! statements; a single token larger than the budget is cut at line ends). Comments and Rust
//! attributes are glued to the atom after them, so a doc comment stays with its function. Consecutive atoms are
//! then merged while the merged span fits, but never across the edge of a definition that
//! had to be opened — the parts of one big class stay among themselves.

use serde::Serialize;
use tree_sitter::{Node, Parser};

use crate::syntax::{definition_kind, definition_name, is_leading, is_type_container};
use crate::Language;

/// Chunk size limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkOptions {
    /// Most characters (bytes of UTF-8) in a chunk, unless one line alone is longer.
    pub max_chars: usize,
    /// Most lines in a line-based (fallback) chunk.
    pub max_lines: usize,
}

impl Default for ChunkOptions {
    /// 1,500 characters (about 400 word pieces of code: under two embedding windows) and
    /// 100 lines for files without syntax.
    fn default() -> Self {
        ChunkOptions {
            max_chars: 1500,
            max_lines: 100,
        }
    }
}

/// One chunk of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Chunk {
    /// The file's path, as the host gave it.
    pub path: String,
    /// The language, or `None` for line-chunked files.
    pub language: Option<Language>,
    /// `function`, `method`, `class`, `impl`, `trait`, `interface`, `type`, `module`,
    /// `macro`, `constant` (one definition or part of one), `functions`/`methods`/… (several
    /// of one kind), `block` (top-level code or mixed definitions), or `lines` (fallback).
    pub kind: String,
    /// The definition's name (`Type.method` / `Type::method` for methods), or the names of
    /// the definitions grouped in the chunk, comma-separated.
    pub name: Option<String>,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// Byte range in the file.
    pub start_byte: usize,
    /// End of the byte range (exclusive).
    pub end_byte: usize,
    /// The chunk's text.
    pub content: String,
    /// Prepended at embed time: file, kind, name, lines.
    pub context_prefix: String,
}

/// Chunks `source` (the contents of `path`). Supported languages are chunked by syntax;
/// everything else — and code with more than 10 % of its bytes in parse errors — by lines.
pub fn chunk_file(path: &str, source: &str, options: &ChunkOptions) -> Vec<Chunk> {
    let budget = options.max_chars.max(1);
    let spans = Language::from_path(path)
        .and_then(|language| syntax_spans(language, source, budget).map(|s| (language, s)));
    let lines = LineIndex::new(source);
    match spans {
        Some((language, spans)) => spans
            .into_iter()
            .map(|s| make_chunk(path, Some(language), source, &lines, s))
            .collect(),
        None => line_spans(source, budget, options.max_lines.max(1))
            .into_iter()
            .map(|s| make_chunk(path, None, source, &lines, s))
            .collect(),
    }
}

/// A byte range with what it is.
struct Span {
    start: usize,
    end: usize,
    kind: String,
    name: Option<String>,
}

#[derive(Debug, Clone)]
struct Atom {
    start: usize,
    end: usize,
    /// Kind and (qualified) name when the atom is a definition.
    definition: Option<(&'static str, Option<String>)>,
    leading: bool,
    /// Which opened definition the atom belongs to (0: the file itself).
    scope: usize,
}

/// The definition an opened scope stands for.
#[derive(Clone)]
struct Scope {
    kind: Option<&'static str>,
    name: Option<String>,
    in_type: bool,
    container: Option<String>,
}

struct Flattener<'a> {
    language: Language,
    source: &'a str,
    budget: usize,
    atoms: Vec<Atom>,
    scopes: Vec<Scope>,
}

fn syntax_spans(language: Language, source: &str, budget: usize) -> Option<Vec<Span>> {
    let mut parser = Parser::new();
    parser.set_language(&language.grammar()).ok()?;
    let tree = parser.parse(source, None)?;
    let root = tree.root_node();
    if root.has_error() && error_bytes(root) * 10 > source.len() {
        return None;
    }
    let mut flat = Flattener {
        language,
        source,
        budget,
        atoms: Vec::new(),
        scopes: vec![Scope {
            kind: None,
            name: None,
            in_type: false,
            container: None,
        }],
    };
    flat.descend(root, 0, 0);
    Some(flat.merge())
}

fn error_bytes(node: Node) -> usize {
    // An explicit stack: erroneous input can nest deeper than the call stack allows.
    let mut total = 0;
    let mut stack = vec![node];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            total += node.byte_range().len().max(1);
        } else if node.has_error() {
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
    }
    total
}

impl Flattener<'_> {
    fn separator(&self) -> &'static str {
        if self.language == Language::Rust {
            "::"
        } else {
            "."
        }
    }

    /// Adds the children of `node` (which is in `scope`) as atoms, opening those that do
    /// not fit.
    fn descend(&mut self, node: Node, scope: usize, depth: usize) {
        let Scope {
            in_type, container, ..
        } = self.scopes[scope].clone();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        let mut covered = node.start_byte();
        for child in children {
            // Text a grammar leaves between children (rare, but never dropped).
            self.gap(covered, child.start_byte(), scope);
            covered = child.end_byte();
            let kind = definition_kind(self.language, child, in_type);
            let name = kind.and_then(|_| definition_name(child, self.source));
            let qualified = match (&container, &name) {
                (Some(c), Some(n)) => Some(format!("{c}{}{n}", self.separator())),
                _ => name.clone(),
            };
            let range = child.byte_range();
            if range.len() <= self.budget {
                self.atoms.push(Atom {
                    start: range.start,
                    end: range.end,
                    definition: kind.map(|k| (k, qualified)),
                    leading: is_leading(child),
                    scope,
                });
            } else if child.child_count() > 0 && depth < crate::MAX_SYNTAX_DEPTH {
                let child_scope = match kind {
                    // `export function f` / `@decorator def f`: the wrapper already opened
                    // this definition's scope.
                    Some(_) if is_wrapper(node) => scope,
                    Some(k) => {
                        let opens_type = is_type_container(k);
                        self.scopes.push(Scope {
                            kind: Some(k),
                            name: qualified,
                            in_type: opens_type,
                            container: if opens_type { name } else { container.clone() },
                        });
                        self.scopes.len() - 1
                    }
                    None => scope,
                };
                self.descend(child, child_scope, depth + 1);
            } else {
                // One token larger than the budget (a long string), or a subtree nested
                // too deep to walk: cut at line ends.
                self.gap(range.start, range.end, scope);
            }
        }
        self.gap(covered, node.end_byte(), scope);
    }

    /// Adds the non-blank text in `[from, to)` as plain atoms, cut at line ends to fit.
    fn gap(&mut self, from: usize, to: usize, scope: usize) {
        if to <= from || self.source[from..to].trim().is_empty() {
            return;
        }
        for (start, end) in cut_lines(self.source, from, to, self.budget) {
            self.atoms.push(Atom {
                start,
                end,
                definition: None,
                leading: false,
                scope,
            });
        }
    }

    /// Greedily merges atoms into spans of at most `budget` bytes.
    fn merge(self) -> Vec<Span> {
        let mut spans = Vec::new();
        let mut group: Vec<Atom> = Vec::new();
        let mut pending_comments: Vec<Atom> = Vec::new();
        let mut units: Vec<Vec<Atom>> = Vec::new();
        for atom in self.atoms {
            if atom.leading {
                pending_comments.push(atom);
                continue;
            }
            // Glue the comments right before the atom that fit with it; earlier ones stand
            // alone.
            let comments = std::mem::take(&mut pending_comments);
            let glue_from = comments
                .iter()
                .position(|c| c.scope == atom.scope && atom.end - c.start <= self.budget)
                .unwrap_or(comments.len());
            let mut unit = Vec::new();
            for (i, comment) in comments.into_iter().enumerate() {
                if i < glue_from {
                    units.push(vec![comment]);
                } else {
                    unit.push(comment);
                }
            }
            unit.push(atom);
            units.push(unit);
        }
        units.extend(pending_comments.into_iter().map(|c| vec![c]));
        for unit in units {
            let (start, end, scope) = (unit[0].start, unit[unit.len() - 1].end, unit[0].scope);
            let fits = group
                .first()
                .is_some_and(|g| g.scope == scope && end - g.start <= self.budget);
            if !fits && !group.is_empty() {
                spans.push(describe(&self.scopes, std::mem::take(&mut group)));
            }
            debug_assert!(start <= end);
            group.extend(unit);
        }
        if !group.is_empty() {
            spans.push(describe(&self.scopes, group));
        }
        spans
    }
}

/// Nodes that wrap one definition (`export_statement`, `decorated_definition`).
fn is_wrapper(node: Node) -> bool {
    matches!(node.kind(), "export_statement" | "decorated_definition")
}

/// Kind and name of a merged group of atoms.
fn describe(scopes: &[Scope], atoms: Vec<Atom>) -> Span {
    let start = atoms[0].start;
    let end = atoms[atoms.len() - 1].end;
    let definitions: Vec<&(&'static str, Option<String>)> =
        atoms.iter().filter_map(|a| a.definition.as_ref()).collect();
    let scope = &scopes[atoms[0].scope];
    let names = |defs: &[&(&'static str, Option<String>)]| {
        let names: Vec<&str> = defs.iter().filter_map(|(_, n)| n.as_deref()).collect();
        (!names.is_empty()).then(|| names.join(", "))
    };
    let (kind, name) = match definitions.as_slice() {
        [] => match scope.kind {
            Some(kind) => (kind.to_owned(), scope.name.clone()),
            None => ("block".to_owned(), None),
        },
        [(kind, name)] => ((*kind).to_owned(), name.clone()),
        defs => {
            let first = defs[0].0;
            if defs.iter().all(|(k, _)| *k == first) {
                (plural(first), names(defs))
            } else {
                ("block".to_owned(), names(defs))
            }
        }
    };
    Span {
        start,
        end,
        kind,
        name,
    }
}

fn plural(kind: &str) -> String {
    match kind {
        "class" => "classes".to_owned(),
        "impl" => "impls".to_owned(),
        other => format!("{other}s"),
    }
}

/// Cuts `[start, end)` at line ends into pieces of at most `budget` bytes (a longer line is
/// cut at character boundaries).
fn cut_lines(source: &str, start: usize, end: usize, budget: usize) -> Vec<(usize, usize)> {
    let mut pieces = Vec::new();
    let mut piece_start = start;
    let mut last_break = start;
    let text = &source[start..end];
    for (offset, c) in text.char_indices() {
        let at = start + offset;
        let after = at + c.len_utf8();
        if after - piece_start > budget {
            let cut = if last_break > piece_start {
                last_break
            } else {
                at
            };
            if cut > piece_start {
                pieces.push((piece_start, cut));
                piece_start = cut;
            }
        }
        if c == '\n' {
            last_break = after;
        }
    }
    if end > piece_start {
        pieces.push((piece_start, end));
    }
    pieces
}

/// Line chunks for files without syntax: whole lines, at most `budget` bytes and
/// `max_lines` lines each.
fn line_spans(source: &str, budget: usize, max_lines: usize) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut start = 0;
    let mut lines = 0;
    let mut pos = 0;
    for line in source.split_inclusive('\n') {
        let end = pos + line.len();
        if lines > 0 && (end - start > budget || lines >= max_lines) {
            spans.push((start, pos));
            start = pos;
            lines = 0;
        }
        lines += 1;
        pos = end;
    }
    if pos > start {
        spans.push((start, pos));
    }
    spans
        .into_iter()
        .flat_map(|(s, e)| cut_lines(source, s, e, budget))
        .filter(|(s, e)| !source[*s..*e].trim().is_empty())
        .map(|(start, end)| Span {
            start,
            end,
            kind: "lines".to_owned(),
            name: None,
        })
        .collect()
}

/// Byte offset → line number.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(source: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(source.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// The 1-based line holding byte `offset`.
    fn line(&self, offset: usize) -> u32 {
        (self.starts.partition_point(|&s| s <= offset)) as u32
    }
}

fn make_chunk(
    path: &str,
    language: Option<Language>,
    source: &str,
    lines: &LineIndex,
    span: Span,
) -> Chunk {
    let start_line = lines.line(span.start);
    let end_line = lines.line(span.end.saturating_sub(1).max(span.start));
    let context_prefix = engram_core::context::chunk_prefix(
        path,
        &span.kind,
        span.name.as_deref(),
        start_line,
        end_line,
    );
    Chunk {
        path: path.to_owned(),
        language,
        kind: span.kind,
        name: span.name,
        start_line,
        end_line,
        start_byte: span.start,
        end_byte: span.end,
        content: source[span.start..span.end].to_owned(),
        context_prefix,
    }
}
