//! Questions agents ask of the code graph: what a change impacts (with the memories attached
//! to each impacted node), what a file depends on, and a file's 1-hop neighbourhood. Each is
//! one storage round trip over the closure table and the indexes on it.

use std::collections::{BTreeMap, HashMap};

use engram_store::{Database, Rows, Statement, StoreError, Value};
use serde::Serialize;

use super::sql;
use crate::{Engram, EngramError};

/// Most memories returned with one impact report.
const MAX_ATTACHED_MEMORIES: u32 = 100;

/// A node reached from a query's target, with how.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkedNode {
    /// Node id (`file:src/a.ts`, `src/a.ts#function:f`).
    pub id: String,
    /// `file`, `function`, `method`, `class`, …
    pub kind: String,
    /// Path for files, qualified name for definitions.
    pub label: String,
    /// The file it is in.
    pub path: String,
    /// First line.
    pub start_line: u32,
    /// Last line.
    pub end_line: u32,
    /// Hops from the target (0 for the target's own nodes).
    pub depth: u32,
    /// Product of the edge weights along the path.
    pub total_weight: f64,
    /// Node ids along the path, from the changed node to this one.
    pub path_ids: Vec<String>,
    /// Edge kinds along the path.
    pub edge_kinds: Vec<String>,
    /// The node's file changed since it was indexed (see [`Engram::mark_stale`]).
    pub stale: bool,
}

/// A file reached from a query's target.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RelatedFile {
    /// The file.
    pub path: String,
    /// Fewest hops to any of its nodes.
    pub depth: u32,
    /// Heaviest path weight to any of its nodes.
    pub weight: f64,
    /// How many of its nodes were reached.
    pub nodes: u32,
}

/// A memory attached to a node or file of an impact report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachedMemory {
    /// The memory's id.
    pub id: String,
    /// Its type.
    #[serde(rename = "type")]
    pub memory_type: String,
    /// Its content.
    pub content: String,
    /// Its confidence.
    pub confidence: f64,
    /// Already flagged for review.
    pub needs_review: bool,
    /// The node id (its `targetNodeId`) or file path (one of its `relatedFiles`) it is
    /// attached through.
    pub attached_to: String,
    /// Hops from the target to what it is attached to.
    pub depth: u32,
}

/// What a change to a target impacts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImpactReport {
    /// The target as asked.
    pub target: String,
    /// The nodes the target named (a file brings all of its definitions). Empty when the
    /// target is unknown.
    pub targets: Vec<LinkedNode>,
    /// Nodes that depend on the target, nearest and heaviest first, each once.
    pub impacted: Vec<LinkedNode>,
    /// The impacted nodes grouped by file.
    pub files: Vec<RelatedFile>,
    /// Memories about the target or anything impacted.
    pub memories: Vec<AttachedMemory>,
}

/// A file next to another in the graph.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Neighbour {
    /// The neighbouring file.
    pub path: String,
    /// `depends_on` (the asked files use it), `dependent` (it uses them), or `both`.
    pub direction: String,
    /// Sum of the weights of the edges between them.
    pub weight: f64,
}

/// Decodes a closure row joined with the node at its `id` end. `other` is the node at the
/// other end; the path runs from the ancestor to the descendant, so it is reversed when
/// `id` is the ancestor (dependencies).
fn linked(row: &[Value], id_is_ancestor: bool) -> Result<LinkedNode, StoreError> {
    let [other, id, depth, via, kinds, weight, kind, label, file, start, end, stale] = row else {
        return Err(StoreError::Decode("graph row shape".into()));
    };
    let list = |v: &Value, what: &str| -> Result<Vec<String>, StoreError> {
        serde_json::from_str(v.as_text(what)?)
            .map_err(|e| StoreError::Decode(format!("{what}: {e}")))
    };
    let depth = depth.as_i64("depth")?.max(0) as u32;
    let (id, other) = (id.as_text("id")?, other.as_text("id")?);
    let mut path_ids = vec![if id_is_ancestor { id } else { other }.to_owned()];
    if depth > 0 {
        path_ids.extend(list(via, "via")?);
        path_ids.push(if id_is_ancestor { other } else { id }.to_owned());
    }
    Ok(LinkedNode {
        id: id.to_owned(),
        kind: kind.as_text("type")?.to_owned(),
        label: label.as_text("label")?.to_owned(),
        path: file
            .as_opt_text("file_path")?
            .unwrap_or_default()
            .to_owned(),
        start_line: start.as_i64("start_line")?.max(0) as u32,
        end_line: end.as_i64("end_line")?.max(0) as u32,
        depth,
        total_weight: weight.as_f64("total_weight")?,
        path_ids,
        edge_kinds: list(kinds, "edge_types")?,
        stale: !matches!(stale, Value::Null),
    })
}

/// Keeps each node once (rows come nearest and heaviest first) and groups them by file.
fn dedupe(
    rows: &Rows,
    id_is_ancestor: bool,
) -> Result<(Vec<LinkedNode>, Vec<RelatedFile>), StoreError> {
    let mut seen = HashMap::new();
    let mut nodes = Vec::new();
    for row in &rows.rows {
        let node = linked(row, id_is_ancestor)?;
        if seen.insert(node.id.clone(), ()).is_none() {
            nodes.push(node);
        }
    }
    let mut files: BTreeMap<&str, RelatedFile> = BTreeMap::new();
    for n in &nodes {
        let f = files.entry(n.path.as_str()).or_insert(RelatedFile {
            path: n.path.clone(),
            depth: n.depth,
            weight: n.total_weight,
            nodes: 0,
        });
        f.depth = f.depth.min(n.depth);
        f.weight = f.weight.max(n.total_weight);
        f.nodes += 1;
    }
    let mut files: Vec<RelatedFile> = files.into_values().collect();
    files.sort_by(|a, b| {
        (a.depth, b.weight, &a.path)
            .partial_cmp(&(b.depth, a.weight, &b.path))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    Ok((nodes, files))
}

fn results(out: Vec<Result<Rows, engram_store::SqlError>>) -> Result<Vec<Rows>, StoreError> {
    out.into_iter()
        .map(|r| r.map_err(StoreError::Sql))
        .collect()
}

impl<D: Database> Engram<D> {
    /// What a change to `target` impacts, up to `max_depth` hops (the closure stores 3):
    /// every dependent node once with its shortest path and weight, grouped by file, and
    /// the memories attached to the target or to anything impacted (through their
    /// `targetNodeId` or `relatedFiles`). `target` is a file path, a node id
    /// (`src/auth.ts#function:verifyJwt`) or a qualified name (`Store.get`). One round trip.
    pub async fn analyze_impact(
        &self,
        target: &str,
        max_depth: u32,
    ) -> Result<ImpactReport, EngramError> {
        let target = target.trim();
        if target.is_empty() {
            return Err(engram_core::ValidationError::field("target", "must not be empty").into());
        }
        let params = || {
            vec![
                Value::from(self.config.project_id.as_str()),
                Value::from(target),
                Value::Integer(i64::from(max_depth)),
            ]
        };
        let mut out = results(
            self.db
                .pipeline(&[
                    Statement::with_params(sql::targets(), params()[..2].to_vec()),
                    Statement::with_params(sql::impacted(), params()),
                    Statement::with_params(sql::impacted_memories(MAX_ATTACHED_MEMORIES), params()),
                ])
                .await?,
        )?
        .into_iter();
        let (targets, _) = dedupe(&out.next().unwrap_or_default(), false)?;
        let (impacted, files) = dedupe(&out.next().unwrap_or_default(), false)?;
        let memories = attach(&out.next().unwrap_or_default(), &targets, &impacted)?;
        Ok(ImpactReport {
            target: target.to_owned(),
            targets,
            impacted,
            files,
            memories,
        })
    }

    /// What `file` depends on, up to `max_depth` hops: the nodes of other files its own
    /// nodes reach through imports, calls, extends and implements, nearest first, and those
    /// nodes grouped by file. One round trip.
    pub async fn dependencies(
        &self,
        file: &str,
        max_depth: u32,
    ) -> Result<(Vec<LinkedNode>, Vec<RelatedFile>), EngramError> {
        let out = results(
            self.db
                .pipeline(&[Statement::with_params(
                    sql::DEPENDENCIES,
                    vec![
                        Value::from(self.config.project_id.as_str()),
                        Value::from(file),
                        Value::Integer(i64::from(max_depth)),
                    ],
                )])
                .await?,
        )?;
        Ok(dedupe(&out.into_iter().next().unwrap_or_default(), true)?)
    }

    /// Files one live dependency edge away from `files`, in either direction, heaviest
    /// first: the neighbourhood retrieval boosts. One round trip.
    pub async fn neighbours(&self, files: &[String]) -> Result<Vec<Neighbour>, EngramError> {
        let list = serde_json::to_string(files).unwrap_or_else(|_| "[]".into());
        let out = results(
            self.db
                .pipeline(&[Statement::with_params(
                    sql::NEIGHBOURS,
                    vec![
                        Value::from(self.config.project_id.as_str()),
                        Value::from(list),
                    ],
                )])
                .await?,
        )?;
        let mut by_path: BTreeMap<String, Neighbour> = BTreeMap::new();
        for row in &out.into_iter().next().unwrap_or_default().rows {
            let [path, direction, weight] = row.as_slice() else {
                return Err(StoreError::Decode("neighbour row shape".into()).into());
            };
            let path = path
                .as_opt_text("file_path")?
                .unwrap_or_default()
                .to_owned();
            let direction = direction.as_text("direction")?.to_owned();
            let weight = weight.as_f64("weight")?;
            by_path
                .entry(path.clone())
                .and_modify(|n| {
                    n.weight += weight;
                    if n.direction != direction {
                        n.direction = "both".into();
                    }
                })
                .or_insert(Neighbour {
                    path,
                    direction,
                    weight,
                });
        }
        let mut list: Vec<Neighbour> = by_path.into_values().collect();
        list.sort_by(|a, b| {
            b.weight
                .partial_cmp(&a.weight)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| a.path.cmp(&b.path))
        });
        Ok(list)
    }
}

/// Decodes attached memories and says what each hangs on: its target node if that was
/// reached, else the nearest reached file among its related files.
fn attach(
    rows: &Rows,
    targets: &[LinkedNode],
    impacted: &[LinkedNode],
) -> Result<Vec<AttachedMemory>, StoreError> {
    let mut node_depth: HashMap<&str, u32> = HashMap::new();
    let mut file_depth: HashMap<&str, u32> = HashMap::new();
    for n in targets.iter().chain(impacted) {
        node_depth.entry(n.id.as_str()).or_insert(n.depth);
        let d = file_depth.entry(n.path.as_str()).or_insert(n.depth);
        *d = (*d).min(n.depth);
    }
    let mut out = Vec::new();
    for row in &rows.rows {
        let [id, kind, content, confidence, review, target, files] = row.as_slice() else {
            return Err(StoreError::Decode("memory row shape".into()));
        };
        let files: Vec<String> = serde_json::from_str(files.as_text("related_files")?)
            .map_err(|e| StoreError::Decode(format!("related_files: {e}")))?;
        let by_node = target
            .as_opt_text("target_node_id")?
            .and_then(|t| node_depth.get(t).map(|d| (t.to_owned(), *d)));
        let by_file = || {
            files
                .iter()
                .filter_map(|f| file_depth.get(f.as_str()).map(|d| (f.clone(), *d)))
                .min_by_key(|(_, d)| *d)
        };
        let Some((attached_to, depth)) = by_node.or_else(by_file) else {
            continue;
        };
        out.push(AttachedMemory {
            id: id.as_text("id")?.to_owned(),
            memory_type: kind.as_text("type")?.to_owned(),
            content: content.as_text("content")?.to_owned(),
            confidence: confidence.as_f64("confidence")?,
            needs_review: review.as_i64("needs_review")? != 0,
            attached_to,
            depth,
        });
    }
    out.sort_by(|a, b| a.depth.cmp(&b.depth).then_with(|| a.id.cmp(&b.id)));
    Ok(out)
}
