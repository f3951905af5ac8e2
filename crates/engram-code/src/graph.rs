//! The layer-1 code graph of a repository, assembled from file outlines: file and
//! definition nodes; `contains`, `exports`, `imports`, `calls`, `extends` and `implements`
//! edges. Names are resolved the way a reader would: the same file first, then the files it
//! imports, then a name that is unique in the repository (a weaker edge).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::{FileOutline, FileSet, Language};

/// Weight of an edge whose target was found in the same file or an imported one.
pub const RESOLVED_WEIGHT: f64 = 1.0;
/// Weight of an edge resolved only because the name is unique in the repository.
pub const GUESSED_WEIGHT: f64 = 0.5;

/// A node: a file or a definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphNode {
    /// `file:<path>` or `<path>#<kind>:<qualified name>`; stable across re-indexing.
    pub id: String,
    /// `file`, `function`, `method`, `class`, `interface`, `trait`, `impl`, `type`, `module`, …
    pub kind: String,
    /// The path for files, the qualified name for definitions.
    pub label: String,
    /// The file it is in.
    pub path: String,
    /// The file's language.
    pub language: Language,
    /// First line (1 for files).
    pub start_line: u32,
    /// Last line.
    pub end_line: u32,
    /// Hash of the node's text: the file's or the definition's.
    pub hash: String,
}

/// A directed edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphEdge {
    /// Source node id.
    pub from: String,
    /// Target node id.
    pub to: String,
    /// `contains`, `exports`, `imports`, `calls`, `extends` or `implements`.
    pub kind: String,
    /// [`RESOLVED_WEIGHT`] or [`GUESSED_WEIGHT`].
    pub weight: f64,
}

/// Nodes and edges of a set of files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CodeGraph {
    /// Nodes, files first, in path order.
    pub nodes: Vec<GraphNode>,
    /// Edges, deduplicated.
    pub edges: Vec<GraphEdge>,
}

impl CodeGraph {
    /// Edges of `kind` as `(from, to)` pairs, for inspection and tests.
    pub fn edges_of(&self, kind: &str) -> Vec<(&str, &str)> {
        self.edges
            .iter()
            .filter(|e| e.kind == kind)
            .map(|e| (e.from.as_str(), e.to.as_str()))
            .collect()
    }

    /// The pairs of distinct files joined by at least one edge, as `(file of the edge's
    /// source, file of its target)`; edges to ids that are not nodes of this graph are left
    /// out. Retrieval's neighbourhood boost asks which candidate files neighbour each
    /// other, and a repository has far fewer such pairs than edges (pytest: 1,398 pairs,
    /// 21,798 edges), so the pairs are stored beside the edges.
    pub fn file_links(&self) -> BTreeSet<(String, String)> {
        let files = self
            .nodes
            .iter()
            .map(|n| (n.id.as_str(), n.path.as_str()))
            .collect();
        links_of(&self.edges, &files)
    }

    /// The [`CodeGraph::file_links`] from the files in `sources`: what an incremental
    /// re-index recomputes when only those files' edges were rebuilt.
    pub fn file_links_from(&self, sources: &BTreeSet<&str>) -> BTreeSet<(String, String)> {
        // An id starts with its file's path (after `file:`), which rules out most edges
        // without a lookup; the nodes' own paths then decide.
        let edges: Vec<&GraphEdge> = self
            .edges
            .iter()
            .filter(|e| {
                let rest = e.from.strip_prefix("file:").unwrap_or(&e.from);
                sources.iter().any(|s| rest.starts_with(s))
            })
            .collect();
        let wanted: HashSet<&str> = edges
            .iter()
            .flat_map(|e| [e.from.as_str(), e.to.as_str()])
            .collect();
        let files = self
            .nodes
            .iter()
            .filter(|n| wanted.contains(n.id.as_str()))
            .map(|n| (n.id.as_str(), n.path.as_str()))
            .collect();
        let mut links = links_of(edges, &files);
        links.retain(|(from, _)| sources.contains(from.as_str()));
        links
    }
}

/// The pairs of distinct files `edges` join, `files` giving each node's file (edges to
/// other ids are left out).
fn links_of<'a>(
    edges: impl IntoIterator<Item = &'a GraphEdge>,
    files: &HashMap<&str, &'a str>,
) -> BTreeSet<(String, String)> {
    // Most edges repeat a pair: the pairs are found by reference, then copied once.
    let pairs: HashSet<(&str, &str)> = edges
        .into_iter()
        .filter_map(|e| {
            let from = *files.get(e.from.as_str())?;
            let to = *files.get(e.to.as_str())?;
            (from != to).then_some((from, to))
        })
        .collect();
    pairs
        .into_iter()
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect()
}

/// The id of a file node.
pub fn file_id(path: &str) -> String {
    format!("file:{path}")
}

/// The id of a definition node.
pub fn definition_id(path: &str, kind: &str, qualified: &str) -> String {
    format!("{path}#{kind}:{qualified}")
}

const TYPE_KINDS: [&str; 6] = ["class", "interface", "trait", "type", "impl", "module"];

/// Outlines `files` (path and contents; unsupported languages are left out) and builds
/// their graph: the one-call form hosts and test vectors use.
pub fn graph_of_files<'a, I>(files: I) -> CodeGraph
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    let mut outliner = crate::Outliner::new();
    let files: Vec<(&str, &str)> = files.into_iter().collect();
    let outlines: Vec<FileOutline> = files
        .iter()
        .filter_map(|(path, source)| outliner.outline(path, source))
        .collect();
    let set = FileSet::new(files.iter().map(|(path, _)| *path));
    build_graph(&outlines, &set)
}

/// The file a node id belongs to (`file:src/a.ts` and `src/a.ts#function:f` → `src/a.ts`).
pub fn node_path(id: &str) -> &str {
    match id.strip_prefix("file:") {
        Some(path) => path,
        None => id.split_once('#').map_or(id, |(path, _)| path),
    }
}

/// A definition by reference: its id is formatted only when an edge needs it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Def<'a> {
    path: &'a str,
    kind: &'a str,
    qualified: &'a str,
}

impl Def<'_> {
    fn id(&self) -> String {
        definition_id(self.path, self.kind, self.qualified)
    }
}

/// Builds the graph of `outlines`, resolving imports among `files` (usually the outlined
/// paths plus any others of the repository).
pub fn build_graph<'a, I>(outlines: I, files: &FileSet) -> CodeGraph
where
    I: IntoIterator<Item = &'a FileOutline>,
{
    build_graph_of(outlines, files, None)
}

/// The part of the graph of `outlines` that originates in the files of `scope`: their nodes
/// and every edge whose source is one of them, resolved against the whole repository
/// exactly as [`build_graph`] resolves it. Re-indexing a file whose definitions kept
/// their names rebuilds only this part.
pub fn build_file_graph<'a, I>(outlines: I, files: &FileSet, scope: &BTreeSet<&str>) -> CodeGraph
where
    I: IntoIterator<Item = &'a FileOutline>,
{
    build_graph_of(outlines, files, Some(scope))
}

fn build_graph_of<'a, I>(outlines: I, files: &FileSet, scope: Option<&BTreeSet<&str>>) -> CodeGraph
where
    I: IntoIterator<Item = &'a FileOutline>,
{
    let in_scope = |path: &str| scope.is_none_or(|s| s.contains(path));
    let mut graph = CodeGraph::default();
    // name → definitions, per file and repository-wide; ids are formatted only for the
    // edges emitted (a scoped rebuild indexes every definition but emits few edges).
    let mut by_name: HashMap<&str, Vec<Def>> = HashMap::new();
    let mut by_qualified: HashMap<(&str, &str), Vec<Def>> = HashMap::new();
    let mut seen: HashSet<Def> = HashSet::new();
    let mut sorted: Vec<&FileOutline> = outlines.into_iter().collect();
    sorted.sort_by(|a, b| a.path.cmp(&b.path));
    for o in sorted.iter().filter(|o| in_scope(&o.path)) {
        graph.nodes.push(GraphNode {
            id: file_id(&o.path),
            kind: "file".into(),
            label: o.path.clone(),
            path: o.path.clone(),
            language: o.language,
            start_line: 1,
            end_line: o.lines,
            hash: o.hash.clone(),
        });
    }
    // A scoped rebuild resolves only the names its files use; other definitions need no
    // index entry (nor the hashing).
    let needed: Option<HashSet<&str>> = scope.map(|_| {
        sorted
            .iter()
            .filter(|o| in_scope(&o.path))
            .flat_map(|o| {
                o.calls
                    .iter()
                    .map(|c| c.callee.as_str())
                    .chain(o.heritage.iter().map(|h| h.parent.as_str()))
            })
            .collect()
    });
    for o in &sorted {
        let scoped = in_scope(&o.path);
        for d in &o.definitions {
            // Go methods are named with their receiver (`Store.Get`); calls name the method.
            let short = d.name.rsplit('.').next().unwrap_or(&d.name);
            if !scoped && needed.as_ref().is_some_and(|n| !n.contains(short)) {
                continue;
            }
            let def = Def {
                path: &o.path,
                kind: &d.kind,
                qualified: &d.qualified,
            };
            if !seen.insert(def) {
                continue;
            }
            if scoped {
                graph.nodes.push(GraphNode {
                    id: def.id(),
                    kind: d.kind.clone(),
                    label: d.qualified.clone(),
                    path: o.path.clone(),
                    language: o.language,
                    start_line: d.start_line,
                    end_line: d.end_line,
                    hash: d.hash.clone(),
                });
            }
            by_name.entry(short).or_default().push(def);
            if d.kind == "impl" {
                // Methods of `impl Trait for Type` name `Type` as their container.
                let target = d.qualified.rsplit(" for ").next().unwrap_or(&d.qualified);
                by_qualified
                    .entry((o.path.as_str(), target))
                    .or_default()
                    .push(def);
            }
            by_qualified
                .entry((o.path.as_str(), d.qualified.as_str()))
                .or_default()
                .push(def);
        }
    }
    let mut edges: BTreeMap<(String, String, &'static str), f64> = BTreeMap::new();
    let mut add = |from: String, to: String, kind: &'static str, weight: f64| {
        let slot = edges.entry((from, to, kind)).or_insert(0.0);
        *slot = slot.max(weight);
    };
    // The type-like definition a container name refers to in a file.
    let container_id = |path: &str, qualified: &str| -> Option<String> {
        let candidates = by_qualified.get(&(path, qualified))?;
        TYPE_KINDS
            .iter()
            .find_map(|k| candidates.iter().find(|d| d.kind == *k))
            .map(Def::id)
    };
    let mut imported: HashMap<&str, BTreeSet<String>> = HashMap::new();
    for o in sorted.iter().filter(|o| in_scope(&o.path)) {
        let file = file_id(&o.path);
        for import in &o.imports {
            for target in files.resolve(&o.path, o.language, import) {
                if target != o.path {
                    add(file.clone(), file_id(&target), "imports", RESOLVED_WEIGHT);
                    imported.entry(o.path.as_str()).or_default().insert(target);
                }
            }
        }
        for d in &o.definitions {
            let id = definition_id(&o.path, &d.kind, &d.qualified);
            let parent = d
                .container
                .as_deref()
                .and_then(|c| container_id(&o.path, c))
                .filter(|p| *p != id)
                .unwrap_or_else(|| file.clone());
            add(parent, id.clone(), "contains", RESOLVED_WEIGHT);
            if d.exported && d.container.is_none() {
                add(file.clone(), id, "exports", RESOLVED_WEIGHT);
            }
        }
    }
    // Resolves a name used in `path` to definitions, with the edge weight.
    let resolve = |path: &str, name: &str, kinds: Option<&[&str]>| -> Vec<(String, f64)> {
        let Some(all) = by_name.get(name) else {
            return Vec::new();
        };
        let fits = |d: &&Def| kinds.is_none_or(|ks| ks.contains(&d.kind));
        let local: Vec<(String, f64)> = all
            .iter()
            .filter(fits)
            .filter(|d| d.path == path)
            .map(|d| (d.id(), RESOLVED_WEIGHT))
            .collect();
        if !local.is_empty() {
            return local;
        }
        let imports = imported.get(path);
        let via_imports: Vec<(String, f64)> = all
            .iter()
            .filter(fits)
            .filter(|d| imports.is_some_and(|i| i.contains(d.path)))
            .map(|d| (d.id(), RESOLVED_WEIGHT))
            .collect();
        if !via_imports.is_empty() {
            return via_imports;
        }
        let mut candidates = all.iter().filter(fits);
        match (candidates.next(), candidates.next()) {
            (Some(d), None) => vec![(d.id(), GUESSED_WEIGHT)],
            _ => Vec::new(),
        }
    };
    let callable: &[&str] = &["function", "method", "class", "type", "macro"];
    for o in sorted.iter().filter(|o| in_scope(&o.path)) {
        for call in &o.calls {
            let from = match &call.caller {
                Some(q) => by_qualified
                    .get(&(o.path.as_str(), q.as_str()))
                    .and_then(|c| c.iter().find(|d| d.kind != "impl"))
                    .map(Def::id)
                    .unwrap_or_else(|| file_id(&o.path)),
                None => file_id(&o.path),
            };
            for (to, weight) in resolve(&o.path, &call.callee, Some(callable)) {
                if to != from {
                    add(from.clone(), to, "calls", weight);
                }
            }
        }
        for h in &o.heritage {
            let Some(child) = container_id(&o.path, &h.child) else {
                continue;
            };
            let kind = if h.kind == "implements" {
                "implements"
            } else {
                "extends"
            };
            for (to, weight) in resolve(
                &o.path,
                &h.parent,
                Some(&["class", "interface", "trait", "type"]),
            ) {
                if to != child {
                    add(child.clone(), to, kind, weight);
                }
            }
        }
    }
    graph.edges = edges
        .into_iter()
        .map(|((from, to, kind), weight)| GraphEdge {
            from,
            to,
            kind: kind.to_owned(),
            weight,
        })
        .collect();
    graph
}
