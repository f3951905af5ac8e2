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

/// Ancestors whose rows may pass through a changed edge in `index`'s graph, and the
/// direct dependents of the changed symbols there.
fn affected(
    index: &DependencyIndex,
    delta: &mut GraphDelta,
    changed_targets: &BTreeSet<String>,
    max_depth: u32,
    ancestors: &mut BTreeSet<String>,
) {
    let mut found = BTreeSet::new();
    for target in changed_targets {
        index.upstream(target, max_depth.saturating_sub(1), &mut found);
    }
    ancestors.extend(found.into_iter().map(str::to_owned));
    for symbol in &delta.changed_symbols {
        for row in index.closure_of(symbol, 1) {
            let pair = (symbol.clone(), row.descendant);
            if !delta.dependents.contains(&pair) {
                delta.dependents.push(pair);
            }
        }
    }
}

fn finish(
    mut delta: GraphDelta,
    new_index: &DependencyIndex,
    new_ids: impl Fn(&str) -> bool,
    mut ancestors: BTreeSet<String>,
    max_depth: u32,
) -> GraphDelta {
    ancestors.extend(delta.removed_nodes.iter().cloned());
    for ancestor in ancestors {
        if new_ids(&ancestor) {
            delta
                .closure_rows
                .extend(new_index.closure_of(&ancestor, max_depth));
        }
        delta.closure_ancestors.push(ancestor);
    }
    delta
}

/// The delta from `old` to `new`, with closure rows up to `max_depth`.
///
/// The closure is recomputed only for ancestors a changed dependency edge can lie under:
/// for an edge ending at `b`, `b` itself and what `b` depends on within `max_depth - 1` hops,
/// in either version (a removed edge shortens paths of the old graph, an added one of the
/// new). Removed nodes are recomputed too, which empties their rows.
pub fn diff_graphs(old: &CodeGraph, new: &CodeGraph, max_depth: u32) -> GraphDelta {
    let (mut delta, targets) = compare(
        old.nodes.iter(),
        new.nodes.iter(),
        old.edges.iter(),
        new.edges.iter(),
    );
    let mut ancestors = BTreeSet::new();
    affected(
        &DependencyIndex::new(&old.edges),
        &mut delta,
        &targets,
        max_depth,
        &mut ancestors,
    );
    let new_index = DependencyIndex::new(&new.edges);
    affected(&new_index, &mut delta, &targets, max_depth, &mut ancestors);
    let ids: BTreeSet<&str> = new.nodes.iter().map(|n| n.id.as_str()).collect();
    finish(
        delta,
        &new_index,
        |id| ids.contains(id),
        ancestors,
        max_depth,
    )
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
    let (mut delta, targets) = compare(
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
    if targets.is_empty() && delta.removed_nodes.is_empty() {
        // No dependency edge changed (an edit inside bodies): the closure stands; only the
        // direct dependents of changed symbols are needed, and a scan finds them without
        // indexing the whole graph.
        let changed: BTreeSet<&str> = delta.changed_symbols.iter().map(String::as_str).collect();
        let mut dependents: Vec<(String, String)> = graph
            .edges
            .iter()
            .filter(|e| is_dependency(&e.kind) && changed.contains(e.to.as_str()))
            .map(|e| (e.to.clone(), e.from.clone()))
            .collect();
        dependents.sort();
        dependents.dedup();
        delta.dependents = dependents;
        return delta;
    }
    // One index over the new edges plus the removed ones serves both versions: walks up
    // from changed targets see every old and new path; closures skip the removed edges.
    let removed_edges = std::mem::take(&mut delta.removed_edges);
    let index = DependencyIndex::new(graph.edges.iter().chain(&removed_edges));
    let mut ancestors = BTreeSet::new();
    affected(&index, &mut delta, &targets, max_depth, &mut ancestors);
    ancestors.extend(delta.removed_nodes.iter().cloned());
    let skip: HashSet<(&str, &str, &str)> = removed_edges
        .iter()
        .map(|e| (e.from.as_str(), e.kind.as_str(), e.to.as_str()))
        .collect();
    let removed: BTreeSet<&str> = delta.removed_nodes.iter().map(String::as_str).collect();
    let mut rows = Vec::new();
    for ancestor in &ancestors {
        if !removed.contains(ancestor.as_str()) {
            rows.extend(index.closure_without(ancestor, max_depth, &skip));
        }
    }
    drop(index);
    delta.closure_rows = rows;
    delta.closure_ancestors = ancestors.into_iter().collect();
    delta.removed_edges = removed_edges;
    delta
}
