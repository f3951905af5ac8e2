//! The impact closure of a code graph: for every node, the nodes that depend on it within a
//! bounded number of hops, with the shortest path, the edge kinds along it and its weight.
//! Stored as the `graph_closure` table, it turns "what breaks if I change X?" into one
//! indexed lookup instead of a graph walk per question.
//!
//! Direction: an edge `a → b` of a dependency kind (a imports, calls, extends or implements
//! b) means a change to `b` may impact `a`, so the closure row has `ancestor = b`,
//! `descendant = a`. `contains` and `exports` are structure, not dependency: a query about a
//! file or a class asks about the definitions inside it as well (see the hosts' queries).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::{CodeGraph, GraphEdge};

/// Edge kinds along which a change propagates.
pub const DEPENDENCY_KINDS: [&str; 4] = ["imports", "calls", "extends", "implements"];

/// The closure depth engram stores by default: deep enough for "what breaks" questions
/// (three hops), shallow enough that hub functions do not explode the table.
pub const DEFAULT_CLOSURE_DEPTH: u32 = 3;

/// One closure row: `descendant` depends on `ancestor` through `path`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClosureRow {
    /// The node depended upon (the one that changes).
    pub ancestor: String,
    /// A node that depends on it.
    pub descendant: String,
    /// Hops between them, ≥ 1.
    pub depth: u32,
    /// Node ids from `ancestor` to `descendant`, both included.
    pub path: Vec<String>,
    /// The kind of each hop's edge.
    pub edge_kinds: Vec<String>,
    /// Product of the edge weights along the path (1.0 when every hop was resolved through
    /// the same file or an import).
    pub total_weight: f64,
}

/// True for the edge kinds a change propagates along.
pub fn is_dependency(kind: &str) -> bool {
    DEPENDENCY_KINDS.contains(&kind)
}

/// A graph's dependency edges indexed both ways, for closure computation.
pub struct DependencyIndex<'g> {
    /// node → (dependent, edge kind, weight): who is impacted by a change to node.
    dependents: HashMap<&'g str, Vec<(&'g str, &'g str, f64)>>,
    /// node → nodes it depends on.
    dependencies: HashMap<&'g str, Vec<&'g str>>,
}

impl<'g> DependencyIndex<'g> {
    /// Indexes the dependency edges among `edges`.
    pub fn new<I: IntoIterator<Item = &'g GraphEdge>>(edges: I) -> Self {
        let mut dependents: HashMap<&str, Vec<(&str, &str, f64)>> = HashMap::new();
        let mut dependencies: HashMap<&str, Vec<&str>> = HashMap::new();
        for e in edges.into_iter().filter(|e| is_dependency(&e.kind)) {
            dependents.entry(e.to.as_str()).or_default().push((
                e.from.as_str(),
                e.kind.as_str(),
                e.weight,
            ));
            dependencies
                .entry(e.from.as_str())
                .or_default()
                .push(e.to.as_str());
        }
        // Deterministic traversal order whatever the edge order was.
        for list in dependents.values_mut() {
            list.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        }
        for list in dependencies.values_mut() {
            list.sort_unstable();
            list.dedup();
        }
        DependencyIndex {
            dependents,
            dependencies,
        }
    }

    /// The closure rows with `ancestor` as ancestor, up to `max_depth` hops: per descendant
    /// the shortest path, and among equally short ones the heaviest (then the first in id
    /// order).
    pub fn closure_of(&self, ancestor: &str, max_depth: u32) -> Vec<ClosureRow> {
        self.closure_without(ancestor, max_depth, &HashSet::new())
    }

    /// [`DependencyIndex::closure_of`] as if the edges in `removed` (`(from, kind, to)`)
    /// were not indexed: one index over an old and a new edge set serves both.
    pub fn closure_without(
        &self,
        ancestor: &str,
        max_depth: u32,
        removed: &HashSet<(&str, &str, &str)>,
    ) -> Vec<ClosureRow> {
        struct Reach<'a> {
            path: Vec<&'a str>,
            kinds: Vec<&'a str>,
            weight: f64,
        }
        let mut rows = Vec::new();
        let mut visited: BTreeSet<&str> = BTreeSet::new();
        let Some((&root, _)) = self.dependents.get_key_value(ancestor) else {
            return rows;
        };
        visited.insert(root);
        let mut frontier: BTreeMap<&str, Reach> = BTreeMap::new();
        frontier.insert(
            root,
            Reach {
                path: vec![root],
                kinds: Vec::new(),
                weight: 1.0,
            },
        );
        for depth in 1..=max_depth {
            let mut next: BTreeMap<&str, Reach> = BTreeMap::new();
            for (node, reach) in &frontier {
                let Some(list) = self.dependents.get(node) else {
                    continue;
                };
                for &(dependent, kind, weight) in list {
                    if visited.contains(dependent) || removed.contains(&(dependent, kind, *node)) {
                        continue;
                    }
                    let total = reach.weight * weight;
                    if next.get(dependent).is_some_and(|r| r.weight >= total) {
                        continue;
                    }
                    let mut path = reach.path.clone();
                    path.push(dependent);
                    let mut kinds = reach.kinds.clone();
                    kinds.push(kind);
                    next.insert(
                        dependent,
                        Reach {
                            path,
                            kinds,
                            weight: total,
                        },
                    );
                }
            }
            if next.is_empty() {
                break;
            }
            for (node, reach) in &next {
                visited.insert(node);
                rows.push(ClosureRow {
                    ancestor: root.to_owned(),
                    descendant: (*node).to_owned(),
                    depth,
                    path: reach.path.iter().map(|s| (*s).to_owned()).collect(),
                    edge_kinds: reach.kinds.iter().map(|s| (*s).to_owned()).collect(),
                    total_weight: reach.weight,
                });
            }
            frontier = next;
        }
        rows
    }

    /// `start` and every node it depends on within `hops` hops: the ancestors whose
    /// closure rows may pass through an edge ending at `start`.
    pub fn upstream(&self, start: &'g str, hops: u32, into: &mut BTreeSet<&'g str>) {
        // A walk of its own: a node another start reached with fewer hops left must still
        // be expanded from here.
        let mut seen: BTreeSet<&'g str> = BTreeSet::from([start]);
        let mut frontier = vec![start];
        for _ in 0..hops {
            let mut next = Vec::new();
            for node in frontier {
                for &dep in self.dependencies.get(node).into_iter().flatten() {
                    if seen.insert(dep) {
                        next.push(dep);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        into.extend(seen);
    }
}

/// The whole closure of `graph` up to `max_depth`, ancestors in id order.
pub fn full_closure(graph: &CodeGraph, max_depth: u32) -> Vec<ClosureRow> {
    let index = DependencyIndex::new(&graph.edges);
    let mut ancestors: Vec<&str> = index.dependents.keys().copied().collect();
    ancestors.sort_unstable();
    ancestors
        .into_iter()
        .flat_map(|a| index.closure_of(a, max_depth))
        .collect()
}
