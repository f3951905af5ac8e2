//! Which memories a pruning run retires, deletes or evicts, and why.
//!
//! A live memory that decays is retired (soft-deleted) once it has gone unused for three
//! half-lives and its current confidence is below the floor. A retired memory is deleted
//! after the grace period, unless a person verified or pinned it, or another memory
//! superseded it (that record explains what engram believed before). Over the project's
//! cap, the live memories of lowest value are retired, never pinned or verified ones.
//! The plan is a function of the memories and the time alone, so running it twice at the
//! same time plans nothing the second time.

use engram_core::{Memory, ValidationError};
use serde::Serialize;

use crate::confidence::{current_confidence, half_life_days, idle_days};

/// How pruning decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrunePolicy {
    /// Current confidence below which an idle memory is retired.
    pub floor: f64,
    /// Half-lives of disuse before a memory can be retired.
    pub idle_half_lives: f64,
    /// Days a retired memory is kept before it is deleted.
    pub grace_days: f64,
    /// The most live memories a project keeps; `None` for no cap.
    pub cap: Option<u64>,
}

impl Default for PrunePolicy {
    fn default() -> Self {
        PrunePolicy {
            floor: 0.1,
            idle_half_lives: 3.0,
            grace_days: 30.0,
            cap: Some(DEFAULT_CAP),
        }
    }
}

/// The live memories a project keeps by default.
pub const DEFAULT_CAP: u64 = 50_000;

impl PrunePolicy {
    /// Checks the policy: a floor in `[0, 1)`, positive half-lives, a grace of 0 days or
    /// more, and a cap of at least 1.
    pub fn validate(&self) -> Result<(), ValidationError> {
        if !(0.0..1.0).contains(&self.floor) {
            return Err(ValidationError::field(
                "floor",
                "must be at least 0 and below 1",
            ));
        }
        if !self.idle_half_lives.is_finite() || self.idle_half_lives <= 0.0 {
            return Err(ValidationError::field("idleHalfLives", "must be above 0"));
        }
        if !self.grace_days.is_finite() || self.grace_days < 0.0 {
            return Err(ValidationError::field("graceDays", "must be 0 or more"));
        }
        if self.cap == Some(0) {
            return Err(ValidationError::field("cap", "must be at least 1"));
        }
        Ok(())
    }
}

/// A retired memory, as the deletion rule sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct PruneCandidate {
    /// Its id.
    pub id: String,
    /// Days since it was retired.
    pub retired_days: f64,
    /// A person verified it.
    pub user_verified: bool,
    /// It is pinned.
    pub pinned: bool,
    /// Another memory superseded it.
    pub superseded: bool,
}

/// One memory the plan acts on.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PruneDecision {
    /// The memory.
    pub id: String,
    /// Why, in a sentence.
    pub reason: String,
}

/// What a pruning run does.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrunePlan {
    /// Live memories to retire because they decayed.
    pub retire: Vec<PruneDecision>,
    /// Live memories to retire because the project is over its cap.
    pub evict: Vec<PruneDecision>,
    /// Retired memories to delete.
    pub delete: Vec<PruneDecision>,
}

impl PrunePlan {
    /// Whether the plan changes nothing.
    pub fn is_empty(&self) -> bool {
        self.retire.is_empty() && self.evict.is_empty() && self.delete.is_empty()
    }
}

/// What a live memory is worth keeping, for the cap: its current confidence, more for
/// every use and every time it was said again.
pub fn keep_value(memory: &Memory, now_millis: i64) -> f64 {
    current_confidence(memory, now_millis)
        * (1.0 + (1.0 + memory.access_count as f64).ln())
        * (1.0 + f64::from(memory.occurrences.max(1)).ln())
}

/// Plans a pruning run over a project's `live` and `retired` memories at `now_millis`.
pub fn plan_prune(
    live: &[Memory],
    retired: &[PruneCandidate],
    policy: &PrunePolicy,
    now_millis: i64,
) -> PrunePlan {
    let mut plan = PrunePlan::default();
    let mut kept: Vec<&Memory> = Vec::with_capacity(live.len());
    for memory in live {
        match decayed(memory, policy, now_millis) {
            Some(reason) => plan.retire.push(PruneDecision {
                id: memory.id.clone(),
                reason,
            }),
            None => kept.push(memory),
        }
    }
    if let Some(cap) = policy.cap {
        let over = (kept.len() as u64).saturating_sub(cap) as usize;
        if over > 0 {
            let mut evictable: Vec<(&Memory, f64)> = kept
                .iter()
                .filter(|m| !m.flags.pinned && !m.flags.user_verified)
                .map(|m| (*m, keep_value(m, now_millis)))
                .collect();
            evictable.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.id.cmp(&b.0.id)));
            plan.evict = evictable
                .into_iter()
                .take(over)
                .map(|(m, value)| PruneDecision {
                    id: m.id.clone(),
                    reason: format!(
                        "the project is over its cap of {cap} live memories and this one is \
among the least valuable (value {value:.3})"
                    ),
                })
                .collect();
        }
    }
    for candidate in retired {
        if candidate.retired_days > policy.grace_days
            && !candidate.user_verified
            && !candidate.pinned
            && !candidate.superseded
        {
            plan.delete.push(PruneDecision {
                id: candidate.id.clone(),
                reason: format!(
                    "retired {:.0} days ago, past the {:.0}-day grace",
                    candidate.retired_days, policy.grace_days
                ),
            });
        }
    }
    plan
}

/// Why a live memory is retired by decay, if it is.
fn decayed(memory: &Memory, policy: &PrunePolicy, now_millis: i64) -> Option<String> {
    let half_life = half_life_days(memory)?;
    let idle = idle_days(memory, now_millis);
    let confidence = current_confidence(memory, now_millis);
    (idle > policy.idle_half_lives * half_life && confidence < policy.floor).then(|| {
        format!(
            "unused for {idle:.0} days (more than {} half-lives of {half_life:.0} days); its \
confidence decayed to {confidence:.3}, below the floor of {}",
            policy.idle_half_lives, policy.floor
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::fake_memory;
    use engram_core::time::rfc3339_from_millis;
    use engram_core::MemoryType;

    const NOW: i64 = 1_800_000_000_000;
    const DAY: i64 = 86_400_000;

    fn idle(id: &str, kind: MemoryType, days: i64) -> Memory {
        let mut m = fake_memory(id, kind, "x");
        m.last_accessed_at = rfc3339_from_millis(NOW - days * DAY);
        m
    }

    #[test]
    fn decayed_memories_past_three_half_lives_are_retired() {
        let live = [
            idle("old-gotcha", MemoryType::Gotcha, 200),
            idle("young-gotcha", MemoryType::Gotcha, 170),
            idle("decision", MemoryType::Decision, 5000),
        ];
        let plan = plan_prune(&live, &[], &PrunePolicy::default(), NOW);
        let retired: Vec<&str> = plan.retire.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(retired, ["old-gotcha"]);
        assert!(plan.retire[0].reason.contains("below the floor"));
        // Retiring is a function of the state: what is left plans nothing.
        let plan = plan_prune(&live[1..], &[], &PrunePolicy::default(), NOW);
        assert!(plan.is_empty());
    }

    #[test]
    fn retired_memories_are_deleted_after_the_grace_unless_kept_for_a_reason() {
        let retired = |id: &str, days: f64| PruneCandidate {
            id: id.into(),
            retired_days: days,
            user_verified: false,
            pinned: false,
            superseded: false,
        };
        let mut verified = retired("verified", 40.0);
        verified.user_verified = true;
        let mut superseded = retired("superseded", 40.0);
        superseded.superseded = true;
        let all = [
            retired("in-grace", 29.0),
            retired("past", 31.0),
            verified,
            superseded,
        ];
        let plan = plan_prune(&[], &all, &PrunePolicy::default(), NOW);
        let deleted: Vec<&str> = plan.delete.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(deleted, ["past"]);
    }

    #[test]
    fn over_the_cap_the_least_valuable_go_first_and_pinned_stay() {
        let mut used = idle("used", MemoryType::Gotcha, 1);
        used.access_count = 20;
        let mut pinned = idle("pinned", MemoryType::Gotcha, 100);
        pinned.flags.pinned = true;
        pinned.confidence = 0.1;
        let stale = idle("stale", MemoryType::Gotcha, 100);
        let fresh = idle("fresh", MemoryType::Gotcha, 1);
        let policy = PrunePolicy {
            cap: Some(2),
            ..PrunePolicy::default()
        };
        let plan = plan_prune(&[used, pinned, stale, fresh], &[], &policy, NOW);
        let evicted: Vec<&str> = plan.evict.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(evicted, ["stale", "fresh"]);
    }

    #[test]
    fn bad_policies_are_refused_by_field() {
        let bad = PrunePolicy {
            cap: Some(0),
            ..PrunePolicy::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("cap"));
        let bad = PrunePolicy {
            floor: 1.5,
            ..PrunePolicy::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("floor"));
        assert!(PrunePolicy::default().validate().is_ok());
    }
}
