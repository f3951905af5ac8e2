//! Decoding memories from result rows.

use engram_core::{
    ChunkMeta, Memory, MemoryScope, MemorySource, MemoryType, Phase, TrustFlags, Visibility,
};
use engram_store::{StoreError, Value};

/// Columns of [`crate::sql::MEMORY_COLUMNS`]; a query's extra columns (scores) follow them.
pub const MEMORY_COLUMN_COUNT: usize = 38;

/// The memory columns by name, in the order [`crate::sql::MEMORY_COLUMNS`] selects them;
/// the decoder finds each column's place here, so the two cannot drift apart unnoticed.
pub const MEMORY_COLUMN_NAMES: [&str; MEMORY_COLUMN_COUNT] = [
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
    "scope",
    "visibility",
    "phase",
    "source",
    "session_id",
    "commit_sha",
    "provenance_session_ids",
    "work_unit_ref",
    "methodology",
    "relations",
    "decay_half_life_days",
    "needs_review",
    "user_verified",
    "pinned",
    "contaminated",
    "secret_scan_skipped",
    "citation_text",
    "chunk_type",
    "chunk_start_line",
    "chunk_end_line",
    "context_prefix",
    "embedding_model_id",
    "deprecated",
    "target_node_id",
    "occurrences",
    "superseded_by",
    "stale_reason",
];

/// The place of column `name` in a memory row, found at compile time (an unknown name
/// does not compile).
const fn column(name: &str) -> usize {
    let mut i = 0;
    while i < MEMORY_COLUMN_COUNT {
        if same(MEMORY_COLUMN_NAMES[i].as_bytes(), name.as_bytes()) {
            return i;
        }
        i += 1;
    }
    panic!("not a memory column")
}

const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Column `i` of `row` as a count: a negative or absent value counts as none.
pub(crate) fn count_at(row: &[Value], i: usize, what: &str) -> Result<u64, StoreError> {
    match row.get(i) {
        Some(value) => Ok(u64::try_from(value.as_i64(what)?).unwrap_or(0)),
        None => Ok(0),
    }
}

/// Column `i` of `row` as text, `None` when it is NULL or absent.
pub(crate) fn text_at(row: &[Value], i: usize, what: &str) -> Result<Option<String>, StoreError> {
    match row.get(i) {
        Some(value) => Ok(value.as_opt_text(what)?.map(str::to_owned)),
        None => Ok(None),
    }
}

/// Column `name` of `row` and its name (for errors), the index computed at compile time.
macro_rules! at {
    ($row:expr, $name:literal) => {{
        const AT: usize = column($name);
        (&$row[AT], $name)
    }};
}

/// One column of a row and its name.
type Cell<'a> = (&'a Value, &'static str);

/// Decodes the first [`MEMORY_COLUMN_COUNT`] values of `row` (laid out as [`crate::sql::MEMORY_COLUMNS`]).
pub fn memory_from_row(row: &[Value]) -> Result<Memory, StoreError> {
    if row.len() < MEMORY_COLUMN_COUNT {
        return Err(StoreError::Decode(format!(
            "memory row has {} columns, expected {MEMORY_COLUMN_COUNT}",
            row.len()
        )));
    }
    let chunk = match opt_text(at!(row, "chunk_type"))? {
        None => None,
        Some(chunk_type) => Some(ChunkMeta {
            chunk_type,
            start_line: int(at!(row, "chunk_start_line"))? as u32,
            end_line: int(at!(row, "chunk_end_line"))? as u32,
            context_prefix: opt_text(at!(row, "context_prefix"))?,
        }),
    };
    let work_unit_ref = at!(row, "work_unit_ref");
    Ok(Memory {
        id: text(at!(row, "id"))?,
        project_id: text(at!(row, "project_id"))?,
        memory_type: parse(at!(row, "type"), MemoryType::parse)?,
        content: text(at!(row, "content"))?,
        confidence: float(at!(row, "confidence"))?,
        tags: json(at!(row, "tags"))?,
        related_files: json(at!(row, "related_files"))?,
        related_modules: json(at!(row, "related_modules"))?,
        created_at: text(at!(row, "created_at"))?,
        last_accessed_at: text(at!(row, "last_accessed_at"))?,
        access_count: int(at!(row, "access_count"))?.max(0) as u64,
        scope: parse(at!(row, "scope"), MemoryScope::parse)?,
        visibility: parse(at!(row, "visibility"), Visibility::parse)?,
        phase: match opt_text(at!(row, "phase"))? {
            Some(_) => Some(parse(at!(row, "phase"), Phase::parse)?),
            None => None,
        },
        source: parse(at!(row, "source"), MemorySource::parse)?,
        session_id: opt_text(at!(row, "session_id"))?,
        commit_sha: opt_text(at!(row, "commit_sha"))?,
        provenance_session_ids: json(at!(row, "provenance_session_ids"))?,
        work_unit_ref: match opt_text(work_unit_ref)? {
            Some(_) => Some(json(work_unit_ref)?),
            None => None,
        },
        methodology: opt_text(at!(row, "methodology"))?,
        relations: json(at!(row, "relations"))?,
        decay_half_life_days: match at!(row, "decay_half_life_days") {
            (Value::Null, _) => None,
            cell => Some(float(cell)?),
        },
        flags: TrustFlags {
            needs_review: flag(at!(row, "needs_review"))?,
            user_verified: flag(at!(row, "user_verified"))?,
            pinned: flag(at!(row, "pinned"))?,
            contaminated: flag(at!(row, "contaminated"))?,
            secret_scan_skipped: flag(at!(row, "secret_scan_skipped"))?,
        },
        citation_text: opt_text(at!(row, "citation_text"))?,
        chunk,
        embedding_model_id: opt_text(at!(row, "embedding_model_id"))?,
        deprecated: flag(at!(row, "deprecated"))?,
        target_node_id: opt_text(at!(row, "target_node_id"))?,
        occurrences: int(at!(row, "occurrences"))?.clamp(1, i64::from(u32::MAX)) as u32,
        superseded_by: opt_text(at!(row, "superseded_by"))?,
        stale_reason: opt_text(at!(row, "stale_reason"))?,
    })
}

fn text((value, name): Cell<'_>) -> Result<String, StoreError> {
    value.as_text(name).map(str::to_owned)
}

fn opt_text((value, name): Cell<'_>) -> Result<Option<String>, StoreError> {
    value.as_opt_text(name).map(|t| t.map(str::to_owned))
}

fn int((value, name): Cell<'_>) -> Result<i64, StoreError> {
    value.as_i64(name)
}

fn float((value, name): Cell<'_>) -> Result<f64, StoreError> {
    value.as_f64(name)
}

fn flag(cell: Cell<'_>) -> Result<bool, StoreError> {
    int(cell).map(|v| v != 0)
}

fn parse<T>((value, name): Cell<'_>, parse: fn(&str) -> Option<T>) -> Result<T, StoreError> {
    let text = value.as_text(name)?;
    parse(text).ok_or_else(|| StoreError::Decode(format!("{name}: unknown value {text:?}")))
}

fn json<T: serde::de::DeserializeOwned>((value, name): Cell<'_>) -> Result<T, StoreError> {
    serde_json::from_str(value.as_text(name)?)
        .map_err(|e| StoreError::Decode(format!("{name}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decoder_names_agree_with_the_selected_columns() {
        let selected: Vec<&str> = crate::sql::MEMORY_COLUMNS
            .split(',')
            .map(|c| c.trim().trim_start_matches("m."))
            .collect();
        assert_eq!(selected, MEMORY_COLUMN_NAMES);
        assert_eq!(column("id"), 0);
        assert_eq!(column("stale_reason"), MEMORY_COLUMN_COUNT - 1);
    }
}
