//! Pruning on a database: read the project's memories in one round trip, plan with
//! [`engram_lifecycle::plan_prune`], apply the plan in one transaction.

use engram_core::time::{millis_from_rfc3339, rfc3339_from_millis};
use engram_core::ValidationError;
use engram_lifecycle::{plan_prune, HistoryAction, PruneCandidate, PruneDecision, PrunePolicy};
use engram_store::{Database, Statement, StoreError, Value};
use serde::{Deserialize, Serialize};

use super::consolidate::{history, HistoryRecord};
use super::sql;
use crate::row::memory_from_row;
use crate::{Engram, EngramError};

/// A pruning request as hosts send it (JSON, every field optional): `{dryRun, floor,
/// idleHalfLives, graceDays, cap}`; `cap: null` prunes with no cap, an absent one with the
/// default.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PruneRequest {
    /// Report the plan, change nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// See [`PrunePolicy::floor`].
    #[serde(default)]
    pub floor: Option<f64>,
    /// See [`PrunePolicy::idle_half_lives`].
    #[serde(default)]
    pub idle_half_lives: Option<f64>,
    /// See [`PrunePolicy::grace_days`].
    #[serde(default)]
    pub grace_days: Option<f64>,
    /// See [`PrunePolicy::cap`]: a number, or `null` for none.
    #[serde(default, deserialize_with = "present")]
    pub cap: Option<Option<u64>>,
}

/// A field that is present, `null` included (absent stays `None` through `default`).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<u64>>, D::Error> {
    Option::<u64>::deserialize(d).map(Some)
}

impl PruneRequest {
    /// Parses and validates a request from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<PruneRequest, ValidationError> {
        engram_core::validate::from_json_checked(json, |r: &PruneRequest| r.policy().validate())
    }

    /// The policy: the defaults with the request's fields laid over them.
    pub fn policy(&self) -> PrunePolicy {
        let default = PrunePolicy::default();
        PrunePolicy {
            floor: self.floor.unwrap_or(default.floor),
            idle_half_lives: self.idle_half_lives.unwrap_or(default.idle_half_lives),
            grace_days: self.grace_days.unwrap_or(default.grace_days),
            cap: self.cap.unwrap_or(default.cap),
        }
    }
}

/// What [`Engram::prune`] did, or would do with `dry_run`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneReport {
    /// Nothing was changed: this is the plan.
    pub dry_run: bool,
    /// Live memories before.
    pub live_before: u64,
    /// Live memories after (as planned, for a dry run).
    pub live_after: u64,
    /// Retired because their confidence decayed below the floor.
    pub retired: Vec<PruneDecision>,
    /// Retired because the project was over its cap.
    pub evicted: Vec<PruneDecision>,
    /// Retired memories deleted after the grace period (their history stays).
    pub deleted: Vec<PruneDecision>,
}

impl<D: Database> Engram<D> {
    /// [`Engram::prune`] for a [`PruneRequest`] in JSON, as hosts receive it.
    pub async fn prune_json(&self, json: &str) -> Result<PruneReport, EngramError> {
        let request = PruneRequest::from_json(json)?;
        self.prune(&request.policy(), request.dry_run).await
    }

    /// Prunes this project by `policy` (see [`engram_lifecycle::prune`] for the rules):
    /// retires decayed memories and, over the cap, the least valuable; deletes retired
    /// memories past the grace period. Every change has a history entry; running it
    /// again at once changes nothing. With `dry_run`, reports the plan and writes
    /// nothing. A bad policy is `invalid_input` and changes nothing.
    pub async fn prune(
        &self,
        policy: &PrunePolicy,
        dry_run: bool,
    ) -> Result<PruneReport, EngramError> {
        policy.validate()?;
        let project = Value::from(self.project_id());
        let answers = self
            .db
            .pipeline(&[
                Statement::with_params(sql::live_memories(), vec![project.clone()]),
                Statement::with_params(sql::RETIRED_MEMORIES, vec![project]),
            ])
            .await?;
        let mut answers = answers.into_iter();
        let mut next = || -> Result<engram_store::Rows, EngramError> {
            Ok(answers
                .next()
                .ok_or_else(|| StoreError::Protocol("too few answers to the prune read".into()))?
                .map_err(StoreError::Sql)?)
        };
        let live_rows = next()?;
        let retired_rows = next()?;
        let live = live_rows
            .rows
            .iter()
            .map(|row| memory_from_row(row))
            .collect::<Result<Vec<_>, _>>()?;
        let now_millis = self.host.clock.now_millis();
        let mut retired = Vec::with_capacity(retired_rows.rows.len());
        let mut retired_at = std::collections::HashMap::new();
        for row in &retired_rows.rows {
            let (candidate, at) = retired_from_row(row, now_millis)?;
            retired_at.insert(candidate.id.clone(), at);
            retired.push(candidate);
        }
        let plan = plan_prune(&live, &retired, policy, now_millis);
        let live_before = live.len() as u64;
        let report = PruneReport {
            dry_run,
            live_before,
            live_after: live_before - (plan.retire.len() + plan.evict.len()) as u64,
            retired: plan.retire,
            evicted: plan.evict,
            deleted: plan.delete,
        };
        if dry_run
            || (report.retired.is_empty() && report.evicted.is_empty() && report.deleted.is_empty())
        {
            return Ok(report);
        }
        let now = rfc3339_from_millis(now_millis);
        let mut statements = Vec::new();
        for decision in report.retired.iter().chain(&report.evicted) {
            statements.extend(self.retire_statements(
                &decision.id,
                &now,
                HistoryAction::Retired,
                &decision.reason,
                "prune",
            ));
        }
        for decision in &report.deleted {
            let at = retired_at.get(&decision.id).cloned().unwrap_or_default();
            statements.extend(self.delete_statements(decision, &at, &now));
        }
        self.transaction_with_behind(&statements).await?;
        Ok(report)
    }

    /// The statements that delete retired memory `decision.id` (retired at `retired_at`,
    /// so a memory restored or retired again since is left alone), keeping its history
    /// with a `deleted` entry.
    fn delete_statements(
        &self,
        decision: &PruneDecision,
        retired_at: &str,
        now: &str,
    ) -> Vec<Statement> {
        let project = self.project_id();
        let id = Value::from(decision.id.as_str());
        let mut statements = vec![history(
            HistoryRecord {
                memory_id: &decision.id,
                action: HistoryAction::Deleted,
                before: Some(serde_json::json!({ "deprecated": true })),
                after: None,
                reason: &decision.reason,
                actor: "prune",
                related_id: None,
            },
            project,
            now,
        )];
        for table in sql::MEMORY_SIDE_TABLES {
            statements.push(Statement::with_params(
                format!(
                    "DELETE FROM {table} WHERE memory_id = ?1 AND EXISTS (SELECT 1 FROM memories \
WHERE id = ?1 AND project_id = ?2 AND deprecated = 1 AND deprecated_at = ?3)"
                ),
                vec![id.clone(), Value::from(project), Value::from(retired_at)],
            ));
        }
        statements.push(Statement::with_params(
            sql::DELETE_RETIRED_MEMORY,
            vec![id, Value::from(project), Value::from(retired_at)],
        ));
        statements
    }
}

/// A retired memory's row (`id`, `deprecated_at`, `user_verified`, `pinned`,
/// `superseded_by`) as the deletion rule sees it, with its retirement time.
fn retired_from_row(
    row: &[Value],
    now_millis: i64,
) -> Result<(PruneCandidate, String), EngramError> {
    let cell = |i: usize| row.get(i).unwrap_or(&Value::Null);
    let id = cell(0).as_text("id")?.to_owned();
    let at = cell(1)
        .as_opt_text("deprecated_at")?
        .unwrap_or("")
        .to_owned();
    // A retirement time that cannot be read keeps the memory: age unknown.
    let retired_days =
        millis_from_rfc3339(&at).map_or(0.0, |t| ((now_millis - t).max(0) as f64) / 86_400_000.0);
    let flag =
        |i: usize, name: &str| -> Result<bool, StoreError> { Ok(cell(i).as_i64(name)? != 0) };
    Ok((
        PruneCandidate {
            id,
            retired_days,
            user_verified: flag(2, "user_verified")?,
            pinned: flag(3, "pinned")?,
            superseded: cell(4).as_opt_text("superseded_by")?.is_some(),
        },
        at,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_lays_its_fields_over_the_defaults_and_null_lifts_the_cap() {
        let request = PruneRequest::from_json(r#"{"dryRun": true, "graceDays": 7}"#).unwrap();
        assert!(request.dry_run);
        assert_eq!(request.policy().grace_days, 7.0);
        assert_eq!(request.policy().cap, PrunePolicy::default().cap);
        let uncapped = PruneRequest::from_json(r#"{"cap": null}"#).unwrap();
        assert_eq!(uncapped.policy().cap, None);
        assert_eq!(
            PruneRequest::from_json(r#"{"cap": 5}"#)
                .unwrap()
                .policy()
                .cap,
            Some(5)
        );
    }

    #[test]
    fn a_bad_request_names_its_field() {
        for (json, field) in [
            (r#"{"cap": 0}"#, "cap"),
            (r#"{"floor": 1.5}"#, "floor"),
            (r#"{"graceDays": -1}"#, "graceDays"),
            (r#"{"cap": -3}"#, "cap"),
            (r#"{"dryrun": true}"#, "dryrun"),
        ] {
            let error = PruneRequest::from_json(json).unwrap_err();
            assert_eq!(error.violations[0].field, field, "{json}: {error:?}");
        }
    }
}
