//! Decoding memories from result rows.

use engram_core::{
    ChunkMeta, Memory, MemoryScope, MemorySource, MemoryType, Phase, TrustFlags, Visibility,
};
use engram_store::{StoreError, Value};

/// Columns of [`crate::sql::MEMORY_COLUMNS`]; a query's extra columns (scores) follow them.
pub const MEMORY_COLUMN_COUNT: usize = 35;

/// Decodes the first [`MEMORY_COLUMN_COUNT`] values of `row` (laid out as [`crate::sql::MEMORY_COLUMNS`]).
pub fn memory_from_row(row: &[Value]) -> Result<Memory, StoreError> {
    if row.len() < MEMORY_COLUMN_COUNT {
        return Err(StoreError::Decode(format!(
            "memory row has {} columns, expected {MEMORY_COLUMN_COUNT}",
            row.len()
        )));
    }
    let text = |i: usize, what: &str| row[i].as_text(what).map(str::to_owned);
    let opt_text = |i: usize, what: &str| row[i].as_opt_text(what).map(|t| t.map(str::to_owned));
    let flag = |i: usize, what: &str| row[i].as_i64(what).map(|v| v != 0);
    let chunk = match row[28].as_opt_text("chunk_type")? {
        None => None,
        Some(chunk_type) => Some(ChunkMeta {
            chunk_type: chunk_type.to_owned(),
            start_line: row[29].as_i64("chunk_start_line")? as u32,
            end_line: row[30].as_i64("chunk_end_line")? as u32,
            context_prefix: opt_text(31, "context_prefix")?,
        }),
    };
    Ok(Memory {
        id: text(0, "id")?,
        project_id: text(1, "project_id")?,
        memory_type: parse(row[2].as_text("type")?, MemoryType::parse, "type")?,
        content: text(3, "content")?,
        confidence: row[4].as_f64("confidence")?,
        tags: json(&row[5], "tags")?,
        related_files: json(&row[6], "related_files")?,
        related_modules: json(&row[7], "related_modules")?,
        created_at: text(8, "created_at")?,
        last_accessed_at: text(9, "last_accessed_at")?,
        access_count: row[10].as_i64("access_count")?.max(0) as u64,
        scope: parse(row[11].as_text("scope")?, MemoryScope::parse, "scope")?,
        visibility: parse(
            row[12].as_text("visibility")?,
            Visibility::parse,
            "visibility",
        )?,
        phase: match row[13].as_opt_text("phase")? {
            Some(p) => Some(parse(p, Phase::parse, "phase")?),
            None => None,
        },
        source: parse(row[14].as_text("source")?, MemorySource::parse, "source")?,
        session_id: opt_text(15, "session_id")?,
        commit_sha: opt_text(16, "commit_sha")?,
        provenance_session_ids: json(&row[17], "provenance_session_ids")?,
        work_unit_ref: match row[18].as_opt_text("work_unit_ref")? {
            Some(_) => Some(json(&row[18], "work_unit_ref")?),
            None => None,
        },
        methodology: opt_text(19, "methodology")?,
        relations: json(&row[20], "relations")?,
        decay_half_life_days: match &row[21] {
            Value::Null => None,
            v => Some(v.as_f64("decay_half_life_days")?),
        },
        flags: TrustFlags {
            needs_review: flag(22, "needs_review")?,
            user_verified: flag(23, "user_verified")?,
            pinned: flag(24, "pinned")?,
            contaminated: flag(25, "contaminated")?,
            secret_scan_skipped: flag(26, "secret_scan_skipped")?,
        },
        citation_text: opt_text(27, "citation_text")?,
        chunk,
        embedding_model_id: opt_text(32, "embedding_model_id")?,
        deprecated: flag(33, "deprecated")?,
        target_node_id: opt_text(34, "target_node_id")?,
    })
}

fn parse<T>(text: &str, parse: fn(&str) -> Option<T>, what: &str) -> Result<T, StoreError> {
    parse(text).ok_or_else(|| StoreError::Decode(format!("{what}: unknown value {text:?}")))
}

fn json<T: serde::de::DeserializeOwned>(value: &Value, what: &str) -> Result<T, StoreError> {
    serde_json::from_str(value.as_text(what)?)
        .map_err(|e| StoreError::Decode(format!("{what}: {e}")))
}
