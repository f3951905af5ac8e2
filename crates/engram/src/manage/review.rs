//! The session review: for one session, what memory it was shown (applied), what it
//! learned that waits for a person, what it learned that needs no review (as the project's
//! trust level decides), and an estimate of the tokens memory saved it. Each memory is
//! judged with one call ([`Engram::confirm`], [`Engram::flag_wrong`], [`Engram::correct`]).

use engram_core::{Memory, TrustLevel};
use engram_store::{Database, Statement, Value};
use serde::Serialize;

use super::TrustSetting;
use crate::row::memory_from_row;
use crate::sql::MEMORY_COLUMNS;
use crate::{Engram, EngramError};

/// A person who flags this many of one session's memories wrong is offered a more
/// cautious trust level.
pub const FLAGS_SUGGESTING_CAUTION: u64 = 3;
/// Bytes of source per token when estimating what reading a file costs.
pub const BYTES_PER_TOKEN: u64 = 4;

/// One session, reviewed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionReview {
    /// The session.
    pub session_id: String,
    /// Memories it was shown (at its start, after prompts, after reads), live ones.
    pub applied: Vec<Memory>,
    /// Memories it learned that wait for a person's review: those flagged for review, and
    /// at the cautious level every one not confirmed.
    pub needs_review: Vec<Memory>,
    /// Memories it learned that need no review at the project's trust level
    /// ([`TrustLevel::auto_confirms`]).
    pub auto_confirmed: Vec<Memory>,
    /// The rest of what it learned.
    pub learned: Vec<Memory>,
    /// An estimate of the tokens memory saved the session: what reading the files the
    /// applied memories cite would cost (their indexed size, a token per
    /// [`BYTES_PER_TOKEN`] bytes), each file once; files never indexed count nothing.
    pub estimated_tokens_saved: u64,
    /// The project's trust level, which sorted what was learned and says how much of this
    /// review to show ([`TrustSetting::review_detail`]).
    pub trust: TrustSetting,
    /// How many of what the session learned a person has flagged wrong.
    pub flagged_wrong: u64,
    /// A more cautious level to offer the person: set when they flagged
    /// [`FLAGS_SUGGESTING_CAUTION`] or more of the session's memories wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggested_level: Option<TrustLevel>,
}

impl<D: Database> Engram<D> {
    /// The review of `session`, or of the last finalized session when `None` (none when the
    /// project has none), sorted by the project's trust level. Two round trips at most.
    pub async fn session_review(
        &self,
        session: Option<&str>,
    ) -> Result<Option<SessionReview>, EngramError> {
        let session = match session {
            Some(id) => id.to_owned(),
            None => match self.last_session().await? {
                Some(id) => id,
                None => return Ok(None),
            },
        };
        let statements = self.review_statements(&session);
        let mut answers = Vec::with_capacity(statements.len());
        for answer in self.db.pipeline(&statements).await? {
            answers.push(answer.map_err(engram_store::StoreError::Sql)?);
        }
        let memories = |i: usize| -> Result<Vec<Memory>, EngramError> {
            answers[i]
                .rows
                .iter()
                .map(|row| memory_from_row(row).map_err(EngramError::from))
                .collect()
        };
        let count = |i: usize, what: &str| -> Result<u64, EngramError> {
            Ok(match answers[i].rows.first().and_then(|row| row.first()) {
                Some(value) => u64::try_from(value.as_i64(what)?).unwrap_or(0),
                None => 0,
            })
        };
        let flagged_wrong = count(3, "flagged")?;
        let trust = Self::trust_from_rows(&answers[4])?;
        let mut review = SessionReview {
            session_id: session,
            applied: memories(0)?,
            needs_review: Vec::new(),
            auto_confirmed: Vec::new(),
            learned: Vec::new(),
            estimated_tokens_saved: count(2, "bytes")? / BYTES_PER_TOKEN,
            trust,
            flagged_wrong,
            suggested_level: trust
                .level
                .more_cautious()
                .filter(|_| flagged_wrong >= FLAGS_SUGGESTING_CAUTION),
        };
        for memory in memories(1)? {
            let part = if trust.level.auto_confirms(&memory) {
                &mut review.auto_confirmed
            } else if trust.level.awaits_review(&memory) {
                &mut review.needs_review
            } else {
                &mut review.learned
            };
            part.push(memory);
        }
        Ok(Some(review))
    }

    /// The session the observer finalized last, if any.
    async fn last_session(&self) -> Result<Option<String>, EngramError> {
        let last = self
            .single(Statement::with_params(
                "SELECT session_id FROM observer_sessions WHERE project_id = ?1 \
ORDER BY finalized_at DESC LIMIT 1",
                vec![Value::from(self.project_id())],
            ))
            .await?;
        match last.rows.first().and_then(|row| row.first()) {
            Some(value) => Ok(Some(value.as_text("session_id")?.to_owned())),
            None => Ok(None),
        }
    }

    /// The reads of a review, in one round trip: the memories `session` was shown, those
    /// it learned, the indexed bytes of the files the shown ones cite, how many of what it
    /// learned were flagged wrong, and the trust level.
    fn review_statements(&self, session: &str) -> Vec<Statement> {
        let params = || vec![Value::from(self.project_id()), Value::from(session)];
        vec![
            Statement::with_params(
                format!(
                    "SELECT {MEMORY_COLUMNS} FROM session_shown s JOIN memories m ON m.id = s.memory_id \
WHERE s.project_id = ?1 AND s.session_id = ?2 AND m.deprecated = 0 ORDER BY s.shown_at, m.id"
                ),
                params(),
            ),
            Statement::with_params(
                format!(
                    "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.project_id = ?1 AND m.session_id = ?2 \
AND m.deprecated = 0 AND m.chunk_type IS NULL ORDER BY m.created_at, m.id"
                ),
                params(),
            ),
            Statement::with_params(
                "SELECT coalesce(sum(c.bytes), 0) FROM code_files c WHERE c.project_id = ?1 AND c.path IN \
(SELECT DISTINCT f.path FROM session_shown s JOIN memory_files f ON f.memory_id = s.memory_id \
WHERE s.project_id = ?1 AND s.session_id = ?2)",
                params(),
            ),
            Statement::with_params(
                "SELECT count(DISTINCT h.memory_id) FROM memory_history h JOIN memories m ON m.id = h.memory_id \
WHERE m.project_id = ?1 AND m.session_id = ?2 AND h.action = 'flagged'",
                params(),
            ),
            self.trust_statement(),
        ]
    }
}
