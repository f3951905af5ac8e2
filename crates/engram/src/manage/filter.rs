//! Which memories a listing or count covers, as one SQL condition with bound
//! parameters, and the keyset cursor that pages through them.

use engram_core::{MemoryScope, MemorySource, MemoryType, ValidationError, Visibility};
use engram_store::Value;
use serde::{Deserialize, Serialize};

/// Memories a filter matches by their lifecycle state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Live memories only (the default).
    #[default]
    Live,
    /// Retired ones only: forgotten, flagged wrong, superseded, pruned.
    Retired,
    /// Both.
    All,
}

/// What to list or count. Every field narrows; an empty filter is every live memory of
/// the project.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryFilter {
    /// Any of these types.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub types: Vec<MemoryType>,
    /// Any of these sources.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<MemorySource>,
    /// Any of these scopes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<MemoryScope>,
    /// Any of these visibilities.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub visibilities: Vec<Visibility>,
    /// About any of these files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// About any of these modules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<String>,
    /// With any of these tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Waiting for review, or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_review: Option<bool>,
    /// Stale (the code it cites changed), or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<bool>,
    /// Replaced by a newer memory, or not. `true` lists retired memories too unless
    /// `status` says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded: Option<bool>,
    /// Pinned, or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned: Option<bool>,
    /// Confirmed by a person, or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_verified: Option<bool>,
    /// Derived after untrusted input, or not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contaminated: Option<bool>,
    /// Live, retired or both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Stored at or after this time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_after: Option<String>,
    /// Stored before this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_before: Option<String>,
    /// Last changed at or after this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_after: Option<String>,
    /// Last changed before this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_before: Option<String>,
    /// Last handed to an agent at or after this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_after: Option<String>,
    /// Last handed to an agent before this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_before: Option<String>,
    /// Whose content contains this text (case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// The most values one list field of a filter takes.
const MAX_FILTER_VALUES: usize = 64;

/// The longest `text` a filter takes, in bytes.
const MAX_FILTER_TEXT: usize = 1024;

impl MemoryFilter {
    /// Parses and validates a filter from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<MemoryFilter, ValidationError> {
        engram_core::validate::from_json_checked(json, MemoryFilter::validate)
    }

    /// Checks every field, naming the ones that are wrong.
    pub fn validate(&self) -> Result<(), ValidationError> {
        let mut violations = Vec::new();
        let mut fail = |field: &str, problem: String| {
            violations.push(engram_core::Violation {
                field: field.to_owned(),
                problem,
            })
        };
        for (field, len) in [
            ("types", self.types.len()),
            ("sources", self.sources.len()),
            ("scopes", self.scopes.len()),
            ("visibilities", self.visibilities.len()),
            ("files", self.files.len()),
            ("modules", self.modules.len()),
            ("tags", self.tags.len()),
        ] {
            if len > MAX_FILTER_VALUES {
                fail(
                    field,
                    format!("must have at most {MAX_FILTER_VALUES} values"),
                );
            }
        }
        for (field, time) in self.times() {
            if let Some(time) = time {
                if engram_core::time::millis_from_rfc3339(time).is_none() {
                    fail(field, format!("{time:?} is not an RFC 3339 time"));
                }
            }
        }
        if let Some(text) = &self.text {
            if text.is_empty() || text.len() > MAX_FILTER_TEXT {
                fail("text", format!("must be 1 to {MAX_FILTER_TEXT} bytes"));
            }
        }
        if violations.is_empty() {
            Ok(())
        } else {
            Err(ValidationError { violations })
        }
    }

    fn times(&self) -> [(&'static str, Option<&String>); 6] {
        [
            ("createdAfter", self.created_after.as_ref()),
            ("createdBefore", self.created_before.as_ref()),
            ("updatedAfter", self.updated_after.as_ref()),
            ("updatedBefore", self.updated_before.as_ref()),
            ("usedAfter", self.used_after.as_ref()),
            ("usedBefore", self.used_before.as_ref()),
        ]
    }

    /// The lifecycle states it covers.
    pub fn effective_status(&self) -> Status {
        match (self.status, self.superseded) {
            (Some(status), _) => status,
            (None, Some(true)) => Status::All,
            (None, _) => Status::Live,
        }
    }

    /// The condition on `memories m` (after the project's, which is `?1`), with its
    /// parameters numbered from `?2`.
    pub(crate) fn condition(&self, params: &mut Vec<Value>) -> String {
        let mut clauses: Vec<String> = Vec::new();
        let bind = |params: &mut Vec<Value>, value: Value| -> String {
            params.push(value);
            format!("?{}", params.len())
        };
        match self.effective_status() {
            Status::Live => clauses.push("m.deprecated = 0".into()),
            Status::Retired => clauses.push("m.deprecated = 1".into()),
            Status::All => {}
        }
        let names = |list: &[&str]| json_list(list.iter().map(|s| (*s).to_owned()));
        let one_of = [
            (
                "m.type",
                names(&self.types.iter().map(|t| t.as_str()).collect::<Vec<_>>()),
            ),
            (
                "m.source",
                names(&self.sources.iter().map(|t| t.as_str()).collect::<Vec<_>>()),
            ),
            (
                "m.scope",
                names(&self.scopes.iter().map(|t| t.as_str()).collect::<Vec<_>>()),
            ),
            (
                "m.visibility",
                names(
                    &self
                        .visibilities
                        .iter()
                        .map(|t| t.as_str())
                        .collect::<Vec<_>>(),
                ),
            ),
        ];
        for (column, list) in one_of {
            if let Some(list) = list {
                let p = bind(params, list);
                clauses.push(format!("{column} IN (SELECT value FROM json_each({p}))"));
            }
        }
        if let Some(list) = json_list(self.files.iter().cloned()) {
            let p = bind(params, list);
            clauses.push(format!(
                "EXISTS (SELECT 1 FROM memory_files f WHERE f.memory_id = m.id \
AND f.path IN (SELECT value FROM json_each({p})))"
            ));
        }
        if let Some(list) = json_list(self.modules.iter().cloned()) {
            let p = bind(params, list);
            clauses.push(format!(
                "EXISTS (SELECT 1 FROM memory_modules d WHERE d.memory_id = m.id \
AND d.module IN (SELECT value FROM json_each({p})))"
            ));
        }
        if let Some(list) = json_list(self.tags.iter().cloned()) {
            let p = bind(params, list);
            clauses.push(format!(
                "EXISTS (SELECT 1 FROM json_each(m.tags) t WHERE t.value IN \
(SELECT value FROM json_each({p})))"
            ));
        }
        let flags = [
            ("m.needs_review", self.needs_review),
            ("m.pinned", self.pinned),
            ("m.user_verified", self.user_verified),
            ("m.contaminated", self.contaminated),
        ];
        for (column, wanted) in flags {
            if let Some(wanted) = wanted {
                clauses.push(format!("{column} = {}", i32::from(wanted)));
            }
        }
        for (column, wanted) in [
            ("m.stale_reason", self.stale),
            ("m.superseded_by", self.superseded),
        ] {
            if let Some(wanted) = wanted {
                let null = if wanted { "IS NOT NULL" } else { "IS NULL" };
                clauses.push(format!("{column} {null}"));
            }
        }
        let ranges = [
            ("m.created_at", ">=", &self.created_after),
            ("m.created_at", "<", &self.created_before),
            (
                "coalesce(m.updated_at, m.created_at)",
                ">=",
                &self.updated_after,
            ),
            (
                "coalesce(m.updated_at, m.created_at)",
                "<",
                &self.updated_before,
            ),
            ("m.last_accessed_at", ">=", &self.used_after),
            ("m.last_accessed_at", "<", &self.used_before),
        ];
        for (column, op, time) in ranges {
            if let Some(millis) = time
                .as_deref()
                .and_then(engram_core::time::millis_from_rfc3339)
            {
                // Stored times are RFC 3339 in UTC with milliseconds: they compare as text.
                let p = bind(
                    params,
                    Value::from(engram_core::time::rfc3339_from_millis(millis)),
                );
                clauses.push(format!("{column} {op} {p}"));
            }
        }
        if let Some(text) = &self.text {
            let p = bind(params, Value::from(text.to_lowercase()));
            clauses.push(format!("instr(lower(m.content), {p}) > 0"));
        }
        if clauses.is_empty() {
            "1".into()
        } else {
            clauses.join(" AND ")
        }
    }
}

fn json_list(values: impl Iterator<Item = String>) -> Option<Value> {
    let list: Vec<String> = values.collect();
    (!list.is_empty())
        .then(|| Value::from(serde_json::to_string(&list).unwrap_or_else(|_| "[]".to_owned())))
}

/// How a listing is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SortKey {
    /// When it was stored (the default).
    #[default]
    Created,
    /// When it last changed.
    Updated,
    /// When it was last handed to an agent.
    Used,
    /// Its stored confidence.
    Confidence,
}

impl SortKey {
    /// The column expression it orders by.
    pub(crate) fn column(self) -> &'static str {
        match self {
            SortKey::Created => "m.created_at",
            SortKey::Updated => "coalesce(m.updated_at, m.created_at)",
            SortKey::Used => "m.last_accessed_at",
            SortKey::Confidence => "m.confidence",
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            SortKey::Created => "created",
            SortKey::Updated => "updated",
            SortKey::Used => "used",
            SortKey::Confidence => "confidence",
        }
    }
}

/// Where a page ended: the last memory's sort value and id. Keyset paging stays correct
/// while memories are written: a page starts after the last one shown, wherever the new
/// ones sort.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Cursor {
    /// The sort it belongs to, and its direction.
    pub sort: String,
    /// The last memory's sort value (text or number).
    pub value: serde_json::Value,
    /// The last memory's id.
    pub id: String,
}

impl Cursor {
    /// The sort key and direction's name, as a cursor records it.
    pub fn sort_name(sort: SortKey, ascending: bool) -> String {
        format!(
            "{}:{}",
            sort.as_str(),
            if ascending { "asc" } else { "desc" }
        )
    }

    /// The cursor as an opaque string.
    pub fn encode(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        json.bytes().map(|b| format!("{b:02x}")).collect()
    }

    /// Reads an opaque cursor back, for the sort it must belong to.
    pub fn decode(text: &str, sort: &str) -> Result<Cursor, ValidationError> {
        let bad = || ValidationError::field("cursor", "is not a cursor this listing returned");
        if text.len() % 2 != 0 || text.len() > 4096 {
            return Err(bad());
        }
        let bytes: Option<Vec<u8>> = (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
            .collect();
        let cursor: Cursor = bytes
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or_else(bad)?;
        if cursor.sort != sort {
            return Err(ValidationError::field(
                "cursor",
                format!("belongs to the {} order, not {sort}", cursor.sort),
            ));
        }
        Ok(cursor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_filter_is_the_live_memories() {
        let mut params = Vec::new();
        assert_eq!(
            MemoryFilter::default().condition(&mut params),
            "m.deprecated = 0"
        );
        assert!(params.is_empty());
    }

    #[test]
    fn fields_bind_their_values_in_order() {
        let filter = MemoryFilter {
            types: vec![MemoryType::Gotcha],
            files: vec!["src/a.rs".into()],
            needs_review: Some(true),
            text: Some("Redis".into()),
            superseded: Some(true),
            ..MemoryFilter::default()
        };
        let mut params = vec![Value::from("project")];
        let sql = filter.condition(&mut params);
        assert!(
            !sql.contains("deprecated"),
            "superseded lists retired ones: {sql}"
        );
        assert!(
            sql.contains("m.type IN (SELECT value FROM json_each(?2))"),
            "{sql}"
        );
        assert!(sql.contains("json_each(?3)"), "{sql}");
        assert!(sql.contains("instr(lower(m.content), ?4)"), "{sql}");
        assert_eq!(params.len(), 4);
        assert_eq!(params[3], Value::from("redis"));
    }

    #[test]
    fn bad_fields_are_named() {
        let filter = MemoryFilter {
            created_after: Some("yesterday".into()),
            tags: vec!["t".into(); 65],
            ..MemoryFilter::default()
        };
        let fields: Vec<String> = filter
            .validate()
            .unwrap_err()
            .violations
            .into_iter()
            .map(|v| v.field)
            .collect();
        assert_eq!(fields, vec!["tags", "createdAfter"]);
    }

    #[test]
    fn cursors_round_trip_and_belong_to_one_order() {
        let cursor = Cursor {
            sort: Cursor::sort_name(SortKey::Created, false),
            value: serde_json::json!("2026-01-01T00:00:00.000Z"),
            id: "abc".into(),
        };
        let text = cursor.encode();
        assert_eq!(Cursor::decode(&text, "created:desc").unwrap(), cursor);
        assert!(Cursor::decode(&text, "used:desc").is_err());
        assert!(Cursor::decode("zz", "created:desc").is_err());
        assert!(Cursor::decode("abc", "created:desc").is_err());
    }
}
