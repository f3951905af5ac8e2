//! Rows as the export writes them (JSON objects keyed by column) and the statements that
//! store them back. Column names in an export are checked against the lists here: no name
//! from a file reaches SQL unless it is one of them.

use std::collections::BTreeMap;

use engram_core::secrets::SecretScanner;
use engram_core::{Memory, MemoryType, ValidationError};
use engram_store::{Rows, Statement, Value};
use serde_json::{Map, Value as Json};

use super::{ExportLoaded, ProjectExport};
use crate::sql;

/// Every column of `memories`.
pub const MEMORY_TABLE_COLUMNS: [&str; 44] = [
    "id",
    "project_id",
    "type",
    "content",
    "confidence",
    "tags",
    "related_files",
    "related_modules",
    "created_at",
    "last_accessed_at",
    "access_count",
    "session_id",
    "commit_sha",
    "scope",
    "visibility",
    "phase",
    "work_unit_ref",
    "methodology",
    "source",
    "target_node_id",
    "impacted_node_ids",
    "relations",
    "decay_half_life_days",
    "provenance_session_ids",
    "needs_review",
    "user_verified",
    "pinned",
    "contaminated",
    "secret_scan_skipped",
    "citation_text",
    "deprecated",
    "deprecated_at",
    "stale_at",
    "chunk_type",
    "chunk_start_line",
    "chunk_end_line",
    "context_prefix",
    "embedding_model_id",
    "occurrences",
    "superseded_by",
    "stale_reason",
    "content_key",
    "updated_at",
    "uncorrected_uses",
];
/// Every column of `memory_history` (its `id` orders the entries; a load numbers them anew).
pub const HISTORY_COLUMNS: [&str; 10] = [
    "id",
    "memory_id",
    "project_id",
    "action",
    "before",
    "after",
    "reason",
    "actor",
    "related_id",
    "at",
];
/// Every column of `memory_origins`.
pub const ORIGIN_COLUMNS: [&str; 8] = [
    "project_id",
    "file",
    "rule_key",
    "memory_id",
    "line",
    "end_line",
    "section",
    "rule_text",
];
/// The columns people and agents write text into: what the scanner reads on the way out.
const TEXT_COLUMNS: [&str; 8] = [
    "content",
    "citation_text",
    "context_prefix",
    "stale_reason",
    "before",
    "after",
    "reason",
    "rule_text",
];

/// Rows as JSON objects keyed by column.
pub fn objects(rows: &Rows) -> Vec<Map<String, Json>> {
    rows.rows
        .iter()
        .map(|row| {
            rows.columns
                .iter()
                .zip(row)
                .map(|(column, value)| (column.clone(), json_of(value)))
                .collect()
        })
        .collect()
}

fn json_of(value: &Value) -> Json {
    match value {
        Value::Null => Json::Null,
        Value::Integer(i) => Json::from(*i),
        Value::Float(f) => Json::from(*f),
        Value::Text(t) => Json::from(t.as_str()),
        // No exported table holds bytes; a blob is written as its bytes.
        Value::Blob(b) => Json::from(b.clone()),
    }
}

/// Redacts the secrets in an object's text columns; how many it found.
pub fn redact(object: &mut Map<String, Json>, scanner: &SecretScanner) -> u64 {
    let mut found = 0;
    for column in TEXT_COLUMNS {
        if let Some(Json::String(text)) = object.get_mut(column) {
            found += scanner.redact_in_place(text).len() as u64;
        }
    }
    found
}

/// The statements that store an export, and what they store.
pub struct Plan {
    /// Every memory's id.
    pub ids: Vec<String>,
    /// The statements, for one transaction.
    pub statements: Vec<Statement>,
    /// The counts.
    pub loaded: ExportLoaded,
}

impl Plan {
    /// Checks every row of `export` and plans storing it in `project`.
    pub fn of(export: &ProjectExport, project: &str) -> Result<Plan, ValidationError> {
        let mut plan = Plan {
            ids: Vec::with_capacity(export.memories.len()),
            statements: Vec::new(),
            loaded: ExportLoaded::default(),
        };
        for (i, memory) in export.memories.iter().enumerate() {
            plan.memory(&format!("memories[{i}]"), memory, project)?;
        }
        for (i, entry) in export.history.iter().enumerate() {
            let skip = ["id"];
            let insert = insert(
                "memory_history",
                &format!("history[{i}]"),
                entry,
                &HISTORY_COLUMNS,
                &skip,
                project,
            )?;
            plan.statements.push(insert);
            plan.loaded.history += 1;
        }
        for (i, origin) in export.origins.iter().enumerate() {
            let insert = insert(
                "memory_origins",
                &format!("origins[{i}]"),
                origin,
                &ORIGIN_COLUMNS,
                &[],
                project,
            )?;
            plan.statements.push(insert);
            plan.loaded.origins += 1;
        }
        Ok(plan)
    }

    /// One memory: its row, its keyword row when live, its file and module links.
    fn memory(
        &mut self,
        at: &str,
        memory: &Map<String, Json>,
        project: &str,
    ) -> Result<(), ValidationError> {
        let text = |column: &str| -> Result<&str, ValidationError> {
            memory
                .get(column)
                .and_then(Json::as_str)
                .ok_or_else(|| ValidationError::field(format!("{at}.{column}"), "is required text"))
        };
        let id = text("id")?.to_owned();
        let content = text("content")?;
        MemoryType::parse(text("type")?)
            .ok_or_else(|| ValidationError::field(format!("{at}.type"), "is not a memory type"))?;
        let list = |column: &str| -> Result<Vec<String>, ValidationError> {
            match memory.get(column) {
                None | Some(Json::Null) => Ok(Vec::new()),
                Some(Json::String(json)) => serde_json::from_str(json).map_err(|_| {
                    ValidationError::field(
                        format!("{at}.{column}"),
                        "is not a JSON array of strings",
                    )
                }),
                Some(_) => Err(ValidationError::field(
                    format!("{at}.{column}"),
                    "is not text",
                )),
            }
        };
        let (tags, files, modules) = (
            list("tags")?,
            list("related_files")?,
            list("related_modules")?,
        );
        let live = memory.get("deprecated").and_then(Json::as_i64).unwrap_or(0) == 0;
        self.statements.push(insert(
            "memories",
            at,
            memory,
            &MEMORY_TABLE_COLUMNS,
            &[],
            project,
        )?);
        let (id_value, project_value) = (Value::from(id.as_str()), Value::from(project));
        if live {
            self.statements.push(Statement::with_params(
                sql::INSERT_FTS,
                vec![
                    id_value.clone(),
                    Value::from(content),
                    Value::from(tags.join(" ")),
                    Value::from(files.join(" ")),
                    project_value.clone(),
                ],
            ));
            self.statements.push(Statement::with_params(
                sql::INSERT_KEYWORD_ROW,
                vec![id_value.clone(), project_value.clone()],
            ));
        }
        for (links, list) in [
            (sql::INSERT_MEMORY_FILES, &files),
            (sql::INSERT_MEMORY_MODULES, &modules),
        ] {
            if !list.is_empty() {
                let json = serde_json::to_string(list).unwrap_or_else(|_| "[]".into());
                self.statements.push(Statement::with_params(
                    links,
                    vec![project_value.clone(), id_value.clone(), Value::from(json)],
                ));
            }
        }
        self.ids.push(id);
        self.loaded.memories += 1;
        Ok(())
    }
}

/// `INSERT INTO table (columns of row) VALUES (…)`: every key must be one of `known`;
/// those in `skip` are left out, and `project_id` is `project`.
fn insert(
    table: &str,
    at: &str,
    row: &Map<String, Json>,
    known: &[&str],
    skip: &[&str],
    project: &str,
) -> Result<Statement, ValidationError> {
    let mut columns = Vec::with_capacity(row.len());
    let mut values = Vec::with_capacity(row.len());
    for (key, value) in row {
        let Some(column) = known.iter().find(|c| **c == key.as_str()) else {
            return Err(ValidationError::field(
                format!("{at}.{key}"),
                "is not a column engram knows",
            ));
        };
        if skip.contains(column) {
            continue;
        }
        columns.push(*column);
        values.push(if *column == "project_id" {
            Value::from(project)
        } else {
            value_of(value).ok_or_else(|| {
                ValidationError::field(
                    format!("{at}.{key}"),
                    "must be text, a number, a boolean or null",
                )
            })?
        });
    }
    if !columns.contains(&"project_id") {
        columns.push("project_id");
        values.push(Value::from(project));
    }
    let marks: Vec<String> = (1..=columns.len()).map(|i| format!("?{i}")).collect();
    Ok(Statement::with_params(
        format!(
            "INSERT INTO {table} ({}) VALUES ({})",
            columns.join(", "),
            marks.join(", ")
        ),
        values,
    ))
}

fn value_of(json: &Json) -> Option<Value> {
    Some(match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::from(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => Value::Float(n.as_f64()?),
        },
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(_) | Json::Object(_) => return None,
    })
}

/// The live memories as Markdown: a heading per module (a memory's first; "Across the
/// project" for those with none), then per type in [`MemoryType::ALL`] order.
pub fn markdown(project: &str, memories: &[Memory]) -> String {
    let mut modules: BTreeMap<&str, Vec<&Memory>> = BTreeMap::new();
    for memory in memories {
        let module = memory.related_modules.first().map_or("", String::as_str);
        modules.entry(module).or_default().push(memory);
    }
    let mut text = format!(
        "# What engram remembers about {project}\n\n{} memories.\n",
        memories.len()
    );
    for (module, listed) in &modules {
        let heading = if module.is_empty() {
            "Across the project"
        } else {
            module
        };
        text.push_str(&format!("\n## {heading}\n"));
        for memory_type in MemoryType::ALL.iter().copied() {
            let of_type: Vec<&&Memory> = listed
                .iter()
                .filter(|m| m.memory_type == memory_type)
                .collect();
            if of_type.is_empty() {
                continue;
            }
            text.push_str(&format!("\n### {memory_type}\n\n"));
            for memory in of_type {
                text.push_str(&line(memory));
            }
        }
    }
    text
}

fn line(memory: &Memory) -> String {
    let content = memory
        .content
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut details = vec![
        format!("confidence {:.2}", memory.confidence),
        memory.source.as_str().to_owned(),
    ];
    if !memory.related_files.is_empty() {
        details.insert(0, format!("files: {}", memory.related_files.join(", ")));
    }
    if memory.flags.user_verified {
        details.push("verified".into());
    }
    if memory.flags.pinned {
        details.push("pinned".into());
    }
    if memory.flags.needs_review {
        details.push("needs review".into());
    }
    let short: String = memory.id.chars().take(8).collect();
    format!("- {content} ({}; `{short}`)\n", details.join("; "))
}
