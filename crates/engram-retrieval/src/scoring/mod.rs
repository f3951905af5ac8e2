//! Final scoring: phase weights × source trust × confidence ×
//! decay, with the code role ([`code_role`]), and the absolute relevance thresholds use.

use engram_core::query::tokenize;
use engram_core::{MemorySource, MemoryType, Phase};

use crate::candidate::{sort_by_score, Candidate};
pub mod code_role;
mod relevance;

use self::code_role::role_weight;
pub use self::relevance::{
    cut_applies, relevance, term_coverage, Rated, CUT_MAX_QUERY_WORDS, SEARCH_MIN_RELEVANCE,
};

/// How much a memory type counts in a phase (1 when unlisted or without a phase).
pub fn phase_weight(phase: Option<Phase>, memory_type: MemoryType) -> f64 {
    use MemoryType::*;
    let Some(phase) = phase else { return 1.0 };
    match (phase, memory_type) {
        (Phase::Define, WorkflowRecipe) => 1.4,
        (Phase::Define, DeadEnd | Requirement) => 1.2,
        (Phase::Define, Decision | TaskCalibration) => 1.1,
        (Phase::Define, Gotcha | ErrorPattern) => 0.8,
        (Phase::Implement, Gotcha) => 1.4,
        (Phase::Implement, ErrorPattern) => 1.3,
        (Phase::Implement, CausalDependency | DeadEnd) => 1.2,
        (Phase::Implement, Pattern | PrefetchPattern) => 1.1,
        (Phase::Validate, ErrorPattern | E2eObservation) => 1.4,
        (Phase::Validate, Requirement) => 1.2,
        (Phase::Validate, WorkUnitOutcome) => 1.1,
        (Phase::Refine, ErrorPattern) => 1.3,
        (Phase::Refine, Gotcha | DeadEnd) => 1.2,
        (Phase::Explore, ModuleInsight) => 1.4,
        (Phase::Explore, Decision) => 1.2,
        (Phase::Explore, Pattern) => 1.1,
        (Phase::Reflect, WorkUnitOutcome) => 1.4,
        (Phase::Reflect, TaskCalibration) => 1.3,
        (Phase::Reflect, DeadEnd) => 1.1,
        _ => 1.0,
    }
}

/// How far a memory's source is trusted.
pub fn trust_weight(source: MemorySource) -> f64 {
    match source {
        MemorySource::UserTaught => 1.4,
        MemorySource::AgentExplicit => 1.2,
        MemorySource::QaAuto => 1.1,
        MemorySource::McpAuto | MemorySource::CommitAuto => 1.0,
        MemorySource::ObserverInferred => 0.85,
    }
}

/// `0.5 ^ (days since last use / half-life)`; 1 for pinned memories, memories whose type
/// never decays, and unreadable timestamps: the lifecycle's one decay rule.
pub fn decay(candidate: &Candidate, now_millis: i64) -> f64 {
    engram_lifecycle::confidence::decay_factor(&candidate.memory, now_millis)
}

/// Applies the final multipliers to ranked candidates and re-orders them.
pub fn score(
    mut candidates: Vec<Candidate>,
    phase: Option<Phase>,
    now_millis: i64,
) -> Vec<Candidate> {
    for candidate in &mut candidates {
        let phase_w = phase_weight(phase, candidate.memory.memory_type);
        let trust_w = trust_weight(candidate.memory.source);
        let role_w = role_weight(phase, &candidate.memory);
        let confidence = candidate.memory.confidence.clamp(0.0, 1.0);
        let decay = decay(candidate, now_millis);
        let b = &mut candidate.breakdown;
        b.phase_weight = phase_w;
        b.trust_weight = trust_w;
        b.role_weight = role_w;
        b.confidence = confidence;
        b.decay = decay;
        b.score = (b.fused + b.graph_boost) * phase_w * trust_w * role_w * confidence * decay;
    }
    sort_by_score(&mut candidates);
    candidates
}

/// Tokens of a query for [`term_coverage`] (exposed for callers that score outside the
/// pipeline).
pub fn coverage_tokens(text: &str) -> Vec<String> {
    tokenize(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidate::test_support::fake_memory;
    use crate::candidate::{PathHit, PathKind};

    const NOW: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

    fn candidate(content: &str) -> Candidate {
        let mut c = Candidate::new(fake_memory("a", content));
        c.set_hit(
            PathKind::Keyword,
            PathHit {
                rank: 1,
                metric: 3.0,
            },
        );
        c.breakdown.fused = 0.5 / 61.0;
        c
    }

    #[test]
    fn decay_halves_per_half_life_and_spares_pinned() {
        let mut c = candidate("x");
        c.memory.decay_half_life_days = Some(10.0);
        c.memory.last_accessed_at = "2025-12-22T00:00:00.000Z".into(); // 10 days before NOW
        assert!((decay(&c, NOW) - 0.5).abs() < 1e-12);
        c.memory.last_accessed_at = "2025-12-02T00:00:00.000Z".into();
        assert!((decay(&c, NOW) - 0.125).abs() < 1e-12);
        c.memory.flags.pinned = true;
        assert_eq!(decay(&c, NOW), 1.0);
        c.memory.flags.pinned = false;
        c.memory.decay_half_life_days = None;
        c.memory.memory_type = MemoryType::Decision; // never decays
        assert_eq!(decay(&c, NOW), 1.0);
        c.memory.memory_type = MemoryType::WorkState; // 7 days by default
        c.memory.last_accessed_at = "2025-12-25T00:00:00.000Z".into();
        assert!((decay(&c, NOW) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn final_score_multiplies_the_documented_factors() {
        let mut c = candidate("Run migrations before tests");
        c.memory.memory_type = MemoryType::Gotcha;
        c.memory.source = MemorySource::ObserverInferred;
        c.memory.confidence = 0.8;
        c.memory.last_accessed_at = "2026-01-01T00:00:00.000Z".into();
        let tokens = coverage_tokens("migration tests deploy");
        let scored = score(vec![c], Some(Phase::Implement), NOW);
        let b = &scored[0].breakdown;
        assert_eq!(b.phase_weight, 1.4);
        assert_eq!(b.trust_weight, 0.85);
        assert_eq!(b.decay, 1.0);
        assert!((b.score - 0.5 / 61.0 * 1.4 * 0.85 * 0.8).abs() < 1e-15);
        let coverage = term_coverage(&tokens, &scored[0]);
        assert!((coverage - 2.0 / 3.0).abs() < 1e-12, "{coverage}");
    }

    #[test]
    fn phase_and_trust_reorder_equal_ranks() {
        let mut a = candidate("a");
        a.memory.id = "a".into();
        a.memory.memory_type = MemoryType::ModuleInsight;
        let mut b = candidate("b");
        b.memory.id = "b".into();
        b.memory.memory_type = MemoryType::Gotcha;
        let explore = score(vec![a.clone(), b.clone()], Some(Phase::Explore), NOW);
        assert_eq!(explore[0].memory.id, "a");
        let implement = score(vec![a, b], Some(Phase::Implement), NOW);
        assert_eq!(implement[0].memory.id, "b");
    }
}
