//! What changed between two versions of a code graph, as the writes that bring a stored
//! graph and its closure from the old version to the new one. Incremental re-indexing
//! rebuilds the graph in memory (cheap: outlines are kept) and writes only this delta.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::Serialize;

use crate::closure::{is_dependency, ClosureRow, DependencyIndex};
use crate::graph::node_path;
use crate::{CodeGraph, GraphEdge, GraphNode};

/// The writes from one graph version to the next.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GraphDelta {
    /// Nodes to insert, or to update in place (same id, new lines or text).
    pub upserted_nodes: Vec<GraphNode>,
    /// Ids of nodes that no longer exist.
    pub removed_nodes: Vec<String>,
    /// Ids of definitions whose text changed or that were removed (not files, not nodes
    /// that only moved): the symbols whose memories need review.
    pub changed_symbols: Vec<String>,
    /// `(changed symbol, node that depends on it directly)`, in either version.
    pub dependents: Vec<(String, String)>,
    /// Edges to insert (or re-weight).
    pub added_edges: Vec<GraphEdge>,
    /// Edges that no longer exist.
    pub removed_edges: Vec<GraphEdge>,
    /// Ancestors whose closure rows are replaced by [`GraphDelta::closure_rows`].
    pub closure_ancestors: Vec<String>,
    /// The new closure rows of those ancestors.
    pub closure_rows: Vec<ClosureRow>,
}

impl GraphDelta {
    /// True when nothing is to be written.
    pub fn is_empty(&self) -> bool {
        self.upserted_nodes.is_empty()
            && self.removed_nodes.is_empty()
            && self.added_edges.is_empty()
            && self.removed_edges.is_empty()
            && self.closure_ancestors.is_empty()
    }
}

type EdgeKey<'a> = (&'a str, &'a str, &'a str);

fn key(e: &GraphEdge) -> EdgeKey<'_> {
    (e.from.as_str(), e.kind.as_str(), e.to.as_str())
}

/// Compares two sets of nodes and edges (whole graphs, or the parts of two graphs that
/// originate in the same files); returns the delta without closure, and the targets of
/// changed dependency edges.
fn compare<'a>(
    old_nodes: impl Iterator<Item = &'a GraphNode> + Clone,
    new_nodes: impl Iterator<Item = &'a GraphNode> + Clone,
    old_edges: impl Iterator<Item = &'a GraphEdge> + Clone,
    new_edges: impl Iterator<Item = &'a GraphEdge> + Clone,
) -> (GraphDelta, BTreeSet<String>) {
    let mut delta = GraphDelta::default();
    let before: HashMap<&str, &GraphNode> = old_nodes.clone().map(|n| (n.id.as_str(), n)).collect();
    let after: BTreeSet<&str> = new_nodes.clone().map(|n| n.id.as_str()).collect();
    for node in new_nodes {
        match before.get(node.id.as_str()) {
            Some(b) if *b == node => {}
            Some(b) => {
                if b.hash != node.hash && node.kind != "file" {
                    delta.changed_symbols.push(node.id.clone());
                }
                delta.upserted_nodes.push(node.clone());
            }
            None => delta.upserted_nodes.push(node.clone()),
        }
    }
    for node in old_nodes {
        if !after.contains(node.id.as_str()) {
            delta.removed_nodes.push(node.id.clone());
            if node.kind != "file" {
                delta.changed_symbols.push(node.id.clone());
            }
        }
    }
    let old_keys: HashMap<EdgeKey, f64> = old_edges.clone().map(|e| (key(e), e.weight)).collect();
    let new_keys: BTreeSet<EdgeKey> = new_edges.clone().map(key).collect();
    let mut changed_targets = BTreeSet::new();
    for e in new_edges {
        if old_keys.get(&key(e)).is_none_or(|w| *w != e.weight) {
            delta.added_edges.push(e.clone());
            if is_dependency(&e.kind) {
                changed_targets.insert(e.to.clone());
            }
        }
    }
    for e in old_edges {
        if !new_keys.contains(&key(e)) {
            delta.removed_edges.push(e.clone());
            if is_dependency(&e.kind) {
                changed_targets.insert(e.to.clone());
            }
        }
    }
    (delta, changed_targets)
}

/// Completes a delta from its node and edge changes, given the new version's edges: the
/// direct dependents of changed symbols (in either version) and the closure rows to
/// replace. The closure is recomputed only for ancestors a changed dependency edge can lie
/// under: for an edge ending at `b`, `b` itself and what `b` depends on within
/// `max_depth - 1` hops in either version; removed nodes are listed too, which empties
/// their rows. One index over the new edges plus the removed ones serves both versions:
/// walks up from changed targets see every old and new path, closures skip the removed
/// edges. When no dependency edge changed (an edit inside bodies) no index is built.
fn complete(
    mut delta: GraphDelta,
    targets: &BTreeSet<String>,
    new_edges: &[GraphEdge],
    max_depth: u32,
) -> GraphDelta {
    let changed: BTreeSet<&str> = delta.changed_symbols.iter().map(String::as_str).collect();
    let dependents: BTreeSet<(String, String)> = new_edges
        .iter()
        .chain(&delta.removed_edges)
        .filter(|e| is_dependency(&e.kind) && e.from != e.to && changed.contains(e.to.as_str()))
        .map(|e| (e.to.clone(), e.from.clone()))
        .collect();
    delta.dependents = dependents.into_iter().collect();
    if targets.is_empty() && delta.removed_nodes.is_empty() {
        return delta;
    }
    let index = DependencyIndex::new(new_edges.iter().chain(&delta.removed_edges));
    let mut found = BTreeSet::new();
    for target in targets {
        index.upstream(target, max_depth.saturating_sub(1), &mut found);
    }
    let removed: BTreeSet<&str> = delta.removed_nodes.iter().map(String::as_str).collect();
    found.extend(removed.iter().copied());
    let skip: HashSet<(&str, &str, &str)> = delta
        .removed_edges
        .iter()
        .map(|e| (e.from.as_str(), e.kind.as_str(), e.to.as_str()))
        .collect();
    let mut rows = Vec::new();
    for ancestor in found.iter().filter(|a| !removed.contains(*a)) {
        rows.extend(index.closure_without(ancestor, max_depth, &skip));
    }
    let ancestors: Vec<String> = found.into_iter().map(str::to_owned).collect();
    drop(index);
    delta.closure_rows = rows;
    delta.closure_ancestors = ancestors;
    delta
}

/// The delta from `old` to `new`, with closure rows up to `max_depth`; only the ancestors a
/// changed dependency edge can lie under are recomputed.
pub fn diff_graphs(old: &CodeGraph, new: &CodeGraph, max_depth: u32) -> GraphDelta {
    let (delta, targets) = compare(
        old.nodes.iter(),
        new.nodes.iter(),
        old.edges.iter(),
        new.edges.iter(),
    );
    complete(delta, &targets, &new.edges, max_depth)
}

/// Replaces the part of `graph` that originates in the files of `scope` with `part` (from
/// [`crate::build_file_graph`]) and returns the same delta [`diff_graphs`] would, touching
/// only those files' nodes and edges. Valid when no other file's edges can have changed:
/// the set of files and the names each changed file defines are the same as before.
pub fn patch_graph(
    graph: &mut CodeGraph,
    part: CodeGraph,
    scope: &BTreeSet<&str>,
    max_depth: u32,
) -> GraphDelta {
    let inside = |id: &str| scope.contains(node_path(id));
    let (delta, targets) = compare(
        graph
            .nodes
            .iter()
            .filter(|n| scope.contains(n.path.as_str())),
        part.nodes.iter(),
        graph.edges.iter().filter(|e| inside(&e.from)),
        part.edges.iter(),
    );
    graph.nodes.retain(|n| !scope.contains(n.path.as_str()));
    graph.edges.retain(|e| !inside(&e.from));
    graph.nodes.extend(part.nodes);
    graph.edges.extend(part.edges);
    complete(delta, &targets, &graph.edges, max_depth)
}
