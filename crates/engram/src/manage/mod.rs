//! What people do with memories: browse (list and count with filters, in pages that stay
//! correct while memories are written), find one by a short id, and judge and edit them
//! (`edit.rs`); and what a person's panel draws: health, sessions, the module map, and a
//! taught memory's preview.

mod edit;
mod filter;
mod health;
mod map;
mod preview;
mod restore;
mod review;
mod sessions;
mod trust;

pub use edit::{MemoryUpdate, Taught};
pub use filter::{MemoryFilter, SortKey, Status};
pub use health::{FolderCoverage, HealthReport, WeekGrowth, GROWTH_WEEKS};
pub use map::{
    CoAccessEdge, DependencyEdge, MapFile, MapRequest, ModuleMap, DEFAULT_MAP_FILES, MAX_MAP_FILES,
};
pub use preview::PREVIEW_ID;
pub use review::{SessionReview, BYTES_PER_TOKEN, FLAGS_SUGGESTING_CAUTION};
pub use sessions::{SessionSummary, DEFAULT_SESSIONS, MAX_SESSIONS};
pub(crate) use trust::inject_floor_sql;
pub use trust::TrustSetting;

use engram_core::{Memory, ValidationError};
use engram_store::{Database, Statement, Value};
use serde::{Deserialize, Serialize};

use crate::row::memory_from_row;
use crate::sql::MEMORY_COLUMNS;
use crate::{Engram, EngramError};
use filter::Cursor;

/// The most memories one page holds.
pub const MAX_PAGE: u32 = 500;

/// The shortest id prefix accepted (as git's short hashes).
pub const MIN_ID_PREFIX: usize = 4;

/// The length of a full memory id (a hyphenated UUID).
const FULL_ID: usize = 36;

/// One page of a listing.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListRequest {
    /// Which memories.
    #[serde(default)]
    pub filter: MemoryFilter,
    /// The order (newest first unless `ascending`).
    #[serde(default)]
    pub sort: SortKey,
    /// Oldest (or lowest) first.
    #[serde(default)]
    pub ascending: bool,
    /// Memories per page, 1 to 500 (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Where the last page ended (its `nextCursor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl ListRequest {
    /// Parses and validates a request from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<ListRequest, ValidationError> {
        engram_core::validate::from_json_checked(json, ListRequest::validate)
    }

    /// Checks the filter, the page size and the cursor.
    pub fn validate(&self) -> Result<(), ValidationError> {
        self.filter.validate()?;
        if let Some(limit) = self.limit {
            if limit == 0 || limit > MAX_PAGE {
                return Err(ValidationError::field(
                    "limit",
                    format!("must be 1 to {MAX_PAGE}"),
                ));
            }
        }
        if let Some(cursor) = &self.cursor {
            Cursor::decode(cursor, &Cursor::sort_name(self.sort, self.ascending))?;
        }
        Ok(())
    }
}

/// A page of memories.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPage {
    /// The memories, in order.
    pub memories: Vec<Memory>,
    /// Pass it as `cursor` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

impl<D: Database> Engram<D> {
    /// One page of the project's memories matching the request's filter, in its order;
    /// one round trip.
    pub async fn list(&self, request: &ListRequest) -> Result<ListPage, EngramError> {
        request.validate()?;
        let limit = request.limit.unwrap_or(50);
        let mut params = vec![Value::from(self.project_id())];
        let mut condition = request.filter.condition(&mut params);
        let column = request.sort.column();
        let sort_name = Cursor::sort_name(request.sort, request.ascending);
        let (direction, beyond) = if request.ascending {
            ("ASC", ">")
        } else {
            ("DESC", "<")
        };
        if let Some(text) = &request.cursor {
            let cursor = Cursor::decode(text, &sort_name)?;
            let value = match &cursor.value {
                serde_json::Value::Number(n) => Value::from(n.as_f64().unwrap_or(0.0)),
                other => Value::from(other.as_str().unwrap_or("").to_owned()),
            };
            params.push(value);
            let v = params.len();
            params.push(Value::from(cursor.id));
            let id = params.len();
            condition = format!(
                "{condition} AND ({column} {beyond} ?{v} OR ({column} = ?{v} AND m.id {beyond} ?{id}))"
            );
        }
        params.push(Value::Integer(i64::from(limit) + 1));
        let sql = format!(
            "SELECT {MEMORY_COLUMNS}, {column} FROM memories m WHERE m.project_id = ?1 AND {condition} \
ORDER BY {column} {direction}, m.id {direction} LIMIT ?{}",
            params.len()
        );
        let rows = self.single(Statement::with_params(sql, params)).await?;
        let mut memories = Vec::with_capacity(rows.rows.len());
        let mut last_value = serde_json::Value::Null;
        for row in rows.rows.iter().take(limit as usize) {
            memories.push(memory_from_row(row)?);
            last_value = match row.get(crate::row::MEMORY_COLUMN_COUNT) {
                Some(Value::Float(r)) => serde_json::json!(r),
                Some(Value::Integer(i)) => serde_json::json!(*i as f64),
                Some(Value::Text(t)) => serde_json::json!(t),
                _ => serde_json::Value::Null,
            };
        }
        let next_cursor = (rows.rows.len() > limit as usize)
            .then(|| memories.last())
            .flatten()
            .map(|last| {
                Cursor {
                    sort: sort_name.clone(),
                    value: last_value.clone(),
                    id: last.id.clone(),
                }
                .encode()
            });
        Ok(ListPage {
            memories,
            next_cursor,
        })
    }

    /// [`Engram::list`] of a JSON [`ListRequest`].
    pub async fn list_json(&self, json: &str) -> Result<ListPage, EngramError> {
        self.list(&ListRequest::from_json(json)?).await
    }

    /// How many of the project's memories match `filter`; one round trip.
    pub async fn count(&self, filter: &MemoryFilter) -> Result<u64, EngramError> {
        filter.validate()?;
        let mut params = vec![Value::from(self.project_id())];
        let condition = filter.condition(&mut params);
        let sql =
            format!("SELECT count(*) FROM memories m WHERE m.project_id = ?1 AND {condition}");
        let rows = self.single(Statement::with_params(sql, params)).await?;
        let count = rows
            .rows
            .first()
            .and_then(|r| r.first())
            .map(|v| v.as_i64("count"))
            .transpose()?
            .unwrap_or(0);
        Ok(u64::try_from(count).unwrap_or(0))
    }

    /// The full id of the project's memory (live, retired or deleted with its history
    /// kept) whose id is `id` or starts
    /// with it (at least 4 characters, as git accepts short hashes): `not_found` when none
    /// does, `invalid_input` naming the candidates when several do.
    pub async fn resolve_id(&self, id: &str) -> Result<String, EngramError> {
        let id = id.trim();
        if id.len() == FULL_ID {
            return Ok(id.to_owned());
        }
        if id.len() < MIN_ID_PREFIX
            || id.len() > FULL_ID
            || !id.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
        {
            return Err(EngramError::invalid(
                "id",
                format!("must be a memory id or its first {MIN_ID_PREFIX} or more characters"),
            ));
        }
        let rows = self
            .single(Statement::with_params(
                // The history outlives a deleted memory: its id still names it there.
                "SELECT DISTINCT id FROM (SELECT id FROM memories WHERE project_id = ?1 \
AND id >= ?2 AND id < ?2 || 'g' UNION SELECT memory_id AS id FROM memory_history \
WHERE project_id = ?1 AND memory_id >= ?2 AND memory_id < ?2 || 'g') ORDER BY id LIMIT 6",
                vec![
                    Value::from(self.project_id()),
                    Value::from(id.to_lowercase()),
                ],
            ))
            .await?;
        let ids: Vec<String> = rows
            .rows
            .iter()
            .filter_map(|r| {
                r.first()
                    .and_then(|v| v.as_text("id").ok())
                    .map(str::to_owned)
            })
            .collect();
        match ids.as_slice() {
            [] => Err(EngramError::NotFound(format!("memory {id}"))),
            [one] => Ok(one.clone()),
            many => Err(EngramError::invalid(
                "id",
                format!(
                    "{id} is the start of several memories ({}); give more of it",
                    many.join(", ")
                ),
            )),
        }
    }

    /// `id` resolved when it is a prefix; `None` when no memory has it.
    /// An id that cannot be a prefix (too short, not hex) is taken as written, so such
    /// a lookup finds nothing rather than failing.
    pub(crate) async fn full_id(&self, id: &str) -> Result<Option<String>, EngramError> {
        let prefix = id.len() >= MIN_ID_PREFIX
            && id.len() < FULL_ID
            && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
        if !prefix {
            return Ok(Some(id.to_owned()));
        }
        match self.resolve_id(id).await {
            Ok(id) => Ok(Some(id)),
            Err(EngramError::NotFound(_)) => Ok(None),
            Err(other) => Err(other),
        }
    }

    /// The live memory `id` (or a unique prefix of it), or `not_found`.
    pub(crate) async fn live(&self, id: &str) -> Result<Memory, EngramError> {
        let id = self.resolve_id(id).await?;
        self.get(&id)
            .await?
            .ok_or_else(|| EngramError::NotFound(format!("memory {id}")))
    }
}
