//! The project's recent sessions, for a person choosing one to review: each with what the
//! observer recorded of it and how many memories it was shown and learned.

use engram_store::{Database, Statement, Value};
use serde::Serialize;

use crate::row::{count_at, text_at};
use crate::{Engram, EngramError};

/// The most sessions one listing holds.
pub const MAX_SESSIONS: u32 = 200;

/// Sessions a listing holds unless asked otherwise.
pub const DEFAULT_SESSIONS: u32 = 20;

/// One session in a listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    /// The session.
    pub session_id: String,
    /// When it last did something engram saw (finalized, was shown or learned a memory).
    pub last_seen_at: String,
    /// How it ended, when the observer finalized it (`success`, `failure`, `cancelled`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// Steps the observer counted (0 when it never observed the session).
    pub steps: u64,
    /// Memories it was shown.
    pub shown: u64,
    /// Live memories it learned.
    pub learned: u64,
    /// Of those, the ones waiting for a person's review.
    pub needs_review: u64,
}

/// Every session engram has seen in a project, with the latest time it saw it: those the
/// observer finalized, those shown memories (hooks), and those that wrote memories.
const SESSIONS: &str = "WITH seen(session_id, at) AS (\
SELECT session_id, finalized_at FROM observer_sessions WHERE project_id = ?1 UNION ALL \
SELECT session_id, strftime('%Y-%m-%dT%H:%M:%fZ', max(shown_at) / 1000.0, 'unixepoch') \
FROM session_shown WHERE project_id = ?1 GROUP BY session_id UNION ALL \
SELECT session_id, max(created_at) FROM memories WHERE project_id = ?1 \
AND session_id IS NOT NULL AND chunk_type IS NULL GROUP BY session_id), \
latest AS (SELECT session_id, max(at) AS at FROM seen GROUP BY session_id \
ORDER BY at DESC, session_id LIMIT ?2) \
SELECT l.session_id, l.at, o.outcome, coalesce(o.steps, 0), \
(SELECT count(*) FROM session_shown s WHERE s.project_id = ?1 AND s.session_id = l.session_id), \
(SELECT count(*) FROM memories m WHERE m.project_id = ?1 AND m.session_id = l.session_id \
AND m.deprecated = 0 AND m.chunk_type IS NULL), \
(SELECT count(*) FROM memories m WHERE m.project_id = ?1 AND m.session_id = l.session_id \
AND m.deprecated = 0 AND m.chunk_type IS NULL AND m.needs_review = 1) \
FROM latest l LEFT JOIN observer_sessions o ON o.project_id = ?1 AND o.session_id = l.session_id \
ORDER BY l.at DESC, l.session_id";

impl<D: Database> Engram<D> {
    /// The `limit` sessions seen last (1 to [`MAX_SESSIONS`]), latest first. One round trip.
    pub async fn recent_sessions(&self, limit: u32) -> Result<Vec<SessionSummary>, EngramError> {
        if limit == 0 || limit > MAX_SESSIONS {
            return Err(EngramError::invalid(
                "limit",
                format!("must be 1 to {MAX_SESSIONS}"),
            ));
        }
        let rows = self
            .single(Statement::with_params(
                SESSIONS,
                vec![
                    Value::from(self.project_id()),
                    Value::from(i64::from(limit)),
                ],
            ))
            .await?;
        rows.rows.iter().map(|row| summary_from_row(row)).collect()
    }
}

fn summary_from_row(row: &[Value]) -> Result<SessionSummary, EngramError> {
    Ok(SessionSummary {
        session_id: text_at(row, 0, "session_id")?.unwrap_or_default(),
        last_seen_at: text_at(row, 1, "at")?.unwrap_or_default(),
        outcome: text_at(row, 2, "outcome")?,
        steps: count_at(row, 3, "steps")?,
        shown: count_at(row, 4, "shown")?,
        learned: count_at(row, 5, "learned")?,
        needs_review: count_at(row, 6, "needs_review")?,
    })
}
