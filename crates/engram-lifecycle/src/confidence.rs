//! Confidence over a memory's life: decay by half-life since it was last used, the
//! confidence of a merge, and reinforcement by use that nobody corrected.

use engram_core::time::millis_from_rfc3339;
use engram_core::Memory;

const DAY_MILLIS: f64 = 86_400_000.0;

/// The most confidence use or repetition can give a memory that no person confirmed.
pub const CONFIDENCE_CEILING: f64 = 0.95;
/// What one repetition (a merge) or one round of uncorrected uses adds.
pub const CONFIDENCE_STEP: f64 = 0.05;
/// Uncorrected uses that earn one [`CONFIDENCE_STEP`].
pub const USES_PER_STEP: u64 = 5;
/// Uncorrected uses after which a memory no longer needs review, unless it is stale (the
/// code it cites changed: being shown does not make it true again).
pub const USES_TO_CLEAR_REVIEW: u64 = 10;

/// The memory's half-life in days, `None` when it never decays (pinned, a type that
/// never decays, or a half-life that is not positive).
pub fn half_life_days(memory: &Memory) -> Option<f64> {
    if memory.flags.pinned {
        return None;
    }
    memory
        .decay_half_life_days
        .or_else(|| memory.memory_type.default_half_life_days())
        .filter(|h| *h > 0.0)
}

/// `0.5 ^ (days since last use / half-life)`: 1 for memories that never decay and for
/// unreadable timestamps.
pub fn decay_factor(memory: &Memory, now_millis: i64) -> f64 {
    let Some(half_life) = half_life_days(memory) else {
        return 1.0;
    };
    let Some(last) = millis_from_rfc3339(&memory.last_accessed_at) else {
        return 1.0;
    };
    let days = ((now_millis - last).max(0) as f64) / DAY_MILLIS;
    0.5f64.powf(days / half_life)
}

/// The memory's confidence now: its stored confidence times its decay. The one rule that
/// scoring, injection thresholds and pruning all use.
pub fn current_confidence(memory: &Memory, now_millis: i64) -> f64 {
    memory.confidence * decay_factor(memory, now_millis)
}

/// Days since the memory was last used (0 for unreadable timestamps).
pub fn idle_days(memory: &Memory, now_millis: i64) -> f64 {
    millis_from_rfc3339(&memory.last_accessed_at)
        .map_or(0.0, |last| ((now_millis - last).max(0) as f64) / DAY_MILLIS)
}

/// The confidence of a memory that was said again: the higher of the two, one step up,
/// never above the ceiling (but a confidence already above it, set by a person, stays).
pub fn merged_confidence(existing: f64, repeated: f64) -> f64 {
    let higher = existing.max(repeated);
    if higher >= CONFIDENCE_CEILING {
        return higher;
    }
    (higher + CONFIDENCE_STEP).min(CONFIDENCE_CEILING)
}

/// What uncorrected uses do to a memory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reinforcement {
    /// The confidence after the uses.
    pub confidence: f64,
    /// Whether review is no longer needed.
    pub clears_review: bool,
}

/// A memory with `confidence` that had `before` uncorrected uses and now has `after`:
/// one [`CONFIDENCE_STEP`] for every [`USES_PER_STEP`] boundary crossed (up to the
/// ceiling), and review cleared once [`USES_TO_CLEAR_REVIEW`] is reached.
pub fn reinforce(confidence: f64, before: u64, after: u64) -> Reinforcement {
    let steps = (after / USES_PER_STEP).saturating_sub(before / USES_PER_STEP);
    let mut raised = confidence;
    if confidence < CONFIDENCE_CEILING {
        raised = (confidence + CONFIDENCE_STEP * steps as f64).min(CONFIDENCE_CEILING);
    }
    Reinforcement {
        confidence: raised,
        clears_review: after >= USES_TO_CLEAR_REVIEW,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::fake_memory;
    use engram_core::MemoryType;

    const NOW: i64 = 1_800_000_000_000;

    fn memory(kind: MemoryType, days_idle: f64) -> Memory {
        let mut m = fake_memory("m", kind, "x");
        m.last_accessed_at =
            engram_core::time::rfc3339_from_millis(NOW - (days_idle * DAY_MILLIS) as i64);
        m
    }

    #[test]
    fn decay_halves_per_half_life_and_spares_decisions_and_pinned() {
        let gotcha = memory(MemoryType::Gotcha, 60.0);
        assert!((decay_factor(&gotcha, NOW) - 0.5).abs() < 1e-9);
        assert!((current_confidence(&gotcha, NOW) - gotcha.confidence * 0.5).abs() < 1e-9);
        let gotcha = memory(MemoryType::Gotcha, 180.0);
        assert!((decay_factor(&gotcha, NOW) - 0.125).abs() < 1e-9);
        assert_eq!(
            decay_factor(&memory(MemoryType::Decision, 1000.0), NOW),
            1.0
        );
        let mut pinned = memory(MemoryType::WorkState, 70.0);
        pinned.flags.pinned = true;
        assert_eq!(decay_factor(&pinned, NOW), 1.0);
    }

    #[test]
    fn merges_and_uses_raise_confidence_to_the_ceiling() {
        assert!((merged_confidence(0.6, 0.8) - 0.85).abs() < 1e-12);
        assert_eq!(merged_confidence(0.93, 0.5), 0.95);
        assert_eq!(merged_confidence(1.0, 0.5), 1.0);
        let r = reinforce(0.8, 3, 5);
        assert!((r.confidence - 0.85).abs() < 1e-12 && !r.clears_review);
        let r = reinforce(0.8, 4, 11);
        assert!((r.confidence - 0.9).abs() < 1e-12 && r.clears_review);
        assert_eq!(reinforce(0.8, 5, 9).confidence, 0.8);
        assert_eq!(reinforce(0.94, 0, 50).confidence, 0.95);
    }
}
