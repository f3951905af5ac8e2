//! The statements one index call writes, in the order the transaction needs them: the
//! state row first (it counts the closure rows about to be replaced), then files, nodes,
//! edges, closure rows, stale marks, file links and the closure count. Bulk
//! rows go a few hundred per statement.

use std::collections::{BTreeSet, HashMap};

use engram_code::{FileOutline, DEFAULT_CLOSURE_DEPTH};
use engram_store::{Statement, Value};
use serde::Serialize;

use super::plan::Rebuilt;
use crate::code::sql;

/// Rows per bulk statement: at most 8 × 400 parameters, far below SQLite's limit, and a
/// request body of reasonable size over HTTP.
const ROWS_PER_STATEMENT: usize = 400;

/// What the statements of one index call are made from, besides the rebuilt graph.
pub(super) struct Writes<'a> {
    pub project: &'a str,
    pub now: i64,
    pub generation: i64,
    /// Files in the index after the call.
    pub files: usize,
    pub deleted: &'a BTreeSet<String>,
    /// The new and changed files' rows (`file_rows`).
    pub file_rows: Vec<serde_json::Value>,
    pub looked_at: &'a [&'a str],
    pub old_links: &'a BTreeSet<(String, String)>,
}

/// The rows of `code_files` for the outlines just parsed.
pub(super) fn file_rows(
    parsed: &[FileOutline],
    sizes: &HashMap<&str, usize>,
) -> Vec<serde_json::Value> {
    parsed
        .iter()
        .map(|o| {
            serde_json::json!({
                "path": o.path, "language": o.language, "hash": o.hash, "lines": o.lines,
                "bytes": sizes.get(o.path.as_str()).copied().unwrap_or_default(),
                "outline": json(o),
            })
        })
        .collect()
}

impl Writes<'_> {
    /// Every statement of the call, in transaction order.
    pub fn statements(self, rebuilt: &Rebuilt) -> Vec<Statement> {
        let mut statements = vec![self.state(rebuilt)];
        self.files(&mut statements);
        self.graph(&mut statements, rebuilt);
        self.links(&mut statements, &rebuilt.links);
        statements.push(Statement::with_params(
            sql::ADD_CLOSURE_COUNT,
            vec![
                self.p(),
                Value::Integer(rebuilt.delta.closure_rows.len() as i64),
            ],
        ));
        statements
    }

    fn p(&self) -> Value {
        Value::from(self.project)
    }

    fn p_now(&self) -> Vec<Value> {
        vec![self.p(), Value::Integer(self.now)]
    }

    /// The state row; first, since it counts the closure rows about to be replaced.
    fn state(&self, rebuilt: &Rebuilt) -> Statement {
        Statement::with_params(
            sql::UPSERT_STATE,
            vec![
                self.p(),
                Value::Integer(self.generation),
                Value::Integer(self.now),
                Value::Integer(self.files as i64),
                Value::Integer(rebuilt.graph.nodes.len() as i64),
                Value::Integer(rebuilt.graph.edges.len() as i64),
                Value::Integer(i64::from(DEFAULT_CLOSURE_DEPTH)),
                Value::from(json(&rebuilt.delta.closure_ancestors)),
            ],
        )
    }

    /// Deleted files out, new and changed files in.
    fn files(&self, statements: &mut Vec<Statement>) {
        let deleted_paths: Vec<serde_json::Value> =
            self.deleted.iter().map(|p| p.as_str().into()).collect();
        keys(statements, sql::DELETE_FILES, deleted_paths, vec![self.p()]);
        keys(
            statements,
            sql::UPSERT_FILES,
            self.file_rows.clone(),
            self.p_now(),
        );
    }

    /// The graph's delta: nodes, edges and closure rows, then the stale marks of the
    /// files just looked at cleared.
    fn graph(&self, statements: &mut Vec<Statement>, rebuilt: &Rebuilt) {
        let delta = &rebuilt.delta;
        let ids = |ids: &[String]| ids.iter().map(|id| id.as_str().into()).collect();
        keys(
            statements,
            sql::DELETE_NODES,
            ids(&delta.removed_nodes),
            vec![self.p()],
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
        values(statements, sql::upsert_nodes, node_rows, self.p_now());
        let removed_edges = delta
            .removed_edges
            .iter()
            .map(|e| serde_json::json!([e.from, e.kind, e.to]))
            .collect();
        keys(statements, sql::DELETE_EDGES, removed_edges, vec![self.p()]);
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
        values(statements, sql::upsert_edges, edge_rows, self.p_now());
        keys(
            statements,
            sql::DELETE_CLOSURE,
            ids(&delta.closure_ancestors),
            vec![self.p()],
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
            statements,
            sql::insert_closure,
            closure_rows,
            vec![self.p()],
        );
        let looked: Vec<serde_json::Value> = self.looked_at.iter().map(|p| (*p).into()).collect();
        keys(
            statements,
            sql::CLEAR_STALE_NODES,
            looked.clone(),
            vec![self.p()],
        );
        keys(statements, sql::CLEAR_STALE_EDGES, looked, vec![self.p()]);
    }

    /// File links gone out and new ones in. New links start live; those touching a file
    /// still marked stale take its mark, and the files just looked at lose theirs.
    fn links(&self, statements: &mut Vec<Statement>, links: &BTreeSet<(String, String)>) {
        keys(
            statements,
            sql::DELETE_FILE_LINKS,
            self.old_links
                .difference(links)
                .map(|(a, b)| serde_json::json!([a, b]))
                .collect(),
            vec![self.p()],
        );
        let added_links: Vec<&(String, String)> = links.difference(self.old_links).collect();
        values(
            statements,
            sql::insert_file_links,
            added_links
                .iter()
                .map(|(a, b)| vec![Value::from(a.as_str()), Value::from(b.as_str())])
                .collect(),
            vec![self.p()],
        );
        let mut refresh: BTreeSet<&str> = self.looked_at.iter().copied().collect();
        refresh.extend(
            added_links
                .iter()
                .flat_map(|(a, b)| [a.as_str(), b.as_str()]),
        );
        keys(
            statements,
            sql::REFRESH_STALE_LINKS,
            refresh.into_iter().map(Into::into).collect(),
            self.p_now(),
        );
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

/// `value` as JSON text.
pub(super) fn json<T: Serialize + ?Sized>(value: &T) -> String {
    // Plain strings and numbers: serializing cannot fail.
    serde_json::to_string(value).unwrap_or_else(|_| "[]".to_owned())
}
