//! The project's trust level: read with the statements that pick what to inject (so a
//! level a person sets in one process holds for the next injection of every other), and
//! set by a person.

use engram_core::trust::ReviewDetail;
use engram_core::TrustLevel;
use engram_store::{Rows, Statement, Value};
use serde::Serialize;

use crate::{Engram, EngramError};
use engram_store::Database;

/// A project's trust level and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TrustSetting {
    /// The level, 1 (cautious) to 4 (autonomous).
    pub level: TrustLevel,
    /// Its name.
    pub name: &'static str,
    /// The least confidence of a memory injected unasked.
    pub injection_threshold: f64,
    /// How much of a session review is shown.
    pub review_detail: ReviewDetail,
    /// Whether a person set it (else it is the default).
    pub set: bool,
}

impl TrustSetting {
    fn of(level: TrustLevel, set: bool) -> Self {
        TrustSetting {
            level,
            name: level.name(),
            injection_threshold: level.injection_threshold(),
            review_detail: level.review_detail(),
            set,
        }
    }
}

/// The SQL value of the least confidence an injected memory of the project bound to
/// `?{project}` needs: its setting's, else the default level's.
pub(crate) fn inject_floor_sql(project: usize) -> String {
    format!(
        "coalesce((SELECT inject_floor FROM project_settings WHERE project_id = ?{project}), {})",
        TrustLevel::default().injection_threshold()
    )
}

impl<D: Database> Engram<D> {
    /// The statement reading the project's trust level, to send with the reads of an
    /// injection; [`Engram::trust_from_rows`] reads its answer.
    pub(crate) fn trust_statement(&self) -> Statement {
        Statement::with_params(
            "SELECT trust_level FROM project_settings WHERE project_id = ?1",
            vec![Value::from(self.project_id())],
        )
    }

    /// The setting in the answer to [`Engram::trust_statement`].
    pub(crate) fn trust_from_rows(rows: &Rows) -> Result<TrustSetting, EngramError> {
        match rows.rows.first().and_then(|row| row.first()) {
            Some(value) => {
                let level = TrustLevel::from_number(value.as_i64("trust_level")?)?;
                Ok(TrustSetting::of(level, true))
            }
            None => Ok(TrustSetting::of(TrustLevel::default(), false)),
        }
    }

    /// The project's trust level (the default, 2, until a person sets one). One round trip.
    pub async fn trust_level(&self) -> Result<TrustSetting, EngramError> {
        let rows = self.single(self.trust_statement()).await?;
        Self::trust_from_rows(&rows)
    }

    /// Sets the project's trust level; every injection from then on, in any process,
    /// uses its threshold. Returns the new setting. One round trip.
    pub async fn set_trust_level(&self, level: TrustLevel) -> Result<TrustSetting, EngramError> {
        self.single(self.trust_upsert(level)).await?;
        Ok(TrustSetting::of(level, true))
    }

    /// The statement that sets the project's trust level (and its injection floor).
    pub(crate) fn trust_upsert(&self, level: TrustLevel) -> Statement {
        Statement::with_params(
            "INSERT INTO project_settings (project_id, trust_level, inject_floor, updated_at) \
VALUES (?1, ?2, ?3, ?4) ON CONFLICT (project_id) DO UPDATE SET trust_level = excluded.trust_level, \
inject_floor = excluded.inject_floor, updated_at = excluded.updated_at",
            vec![
                Value::from(self.project_id()),
                Value::Integer(level.number().into()),
                Value::Float(level.injection_threshold()),
                Value::Integer(self.host.clock.now_millis()),
            ],
        )
    }
}
