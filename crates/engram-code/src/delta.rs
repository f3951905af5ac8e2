//! What changed between two versions of a code graph, as the writes that bring a stored
//! graph and its closure from the old version to the new one. Incremental re-indexing
//! rebuilds the graph in memory (cheap: outlines are kept) and writes only this delta.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::closure::{is_dependency, ClosureRow, DependencyIndex};
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

/// The delta from `old` to `new`, with closure rows up to `max_depth`.
///
/// The closure is recomputed only for ancestors a changed dependency edge can lie under:
/// for an edge ending at `b`, `b` itself and what `b` depends on within `max_depth - 1` hops,
/// in either version (a removed edge shortens paths of the old graph, an added one of the
/// new). Removed nodes are recomputed too, which empties their rows.
pub fn diff_graphs(old: &CodeGraph, new: &CodeGraph, max_depth: u32) -> GraphDelta {
    let mut delta = GraphDelta::default();
    let old_nodes: HashMap<&str, &GraphNode> =
        old.nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let new_ids: BTreeSet<&str> = new.nodes.iter().map(|n| n.id.as_str()).collect();
    for node in &new.nodes {
        match old_nodes.get(node.id.as_str()) {
            Some(before) if *before == node => {}
            Some(before) => {
                if before.hash != node.hash && node.kind != "file" {
                    delta.changed_symbols.push(node.id.clone());
                }
                delta.upserted_nodes.push(node.clone());
            }
            None => delta.upserted_nodes.push(node.clone()),
        }
    }
    for node in &old.nodes {
        if !new_ids.contains(node.id.as_str()) {
            delta.removed_nodes.push(node.id.clone());
            if node.kind != "file" {
                delta.changed_symbols.push(node.id.clone());
            }
        }
    }
    let old_edges: HashMap<EdgeKey, &GraphEdge> = old.edges.iter().map(|e| (key(e), e)).collect();
    let new_edges: HashMap<EdgeKey, &GraphEdge> = new.edges.iter().map(|e| (key(e), e)).collect();
    let mut changed_targets: BTreeSet<&str> = BTreeSet::new();
    for e in &new.edges {
        if old_edges.get(&key(e)).is_none_or(|o| o.weight != e.weight) {
            delta.added_edges.push(e.clone());
            if is_dependency(&e.kind) {
                changed_targets.insert(e.to.as_str());
            }
        }
    }
    for e in &old.edges {
        if !new_edges.contains_key(&key(e)) {
            delta.removed_edges.push(e.clone());
            if is_dependency(&e.kind) {
                changed_targets.insert(e.to.as_str());
            }
        }
    }
    let old_index = DependencyIndex::new(&old.edges);
    let new_index = DependencyIndex::new(&new.edges);
    let mut ancestors: BTreeSet<&str> = BTreeSet::new();
    let hops = max_depth.saturating_sub(1);
    for target in changed_targets {
        old_index.upstream(target, hops, &mut ancestors);
        new_index.upstream(target, hops, &mut ancestors);
    }
    ancestors.extend(delta.removed_nodes.iter().map(String::as_str));
    for ancestor in ancestors {
        delta.closure_ancestors.push(ancestor.to_owned());
        if new_ids.contains(ancestor) {
            delta
                .closure_rows
                .extend(new_index.closure_of(ancestor, max_depth));
        }
    }
    delta
}
