//! The 17 behavioural signal classes and what each is worth.

use engram_core::MemoryType;
use serde::{Deserialize, Serialize};

/// A kind of evidence the observer collects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignalClass {
    /// Which files a session reads and edits.
    FileAccess,
    /// Files accessed within three steps of each other.
    CoAccess,
    /// A failing call that was retried until it passed.
    ErrorRetry,
    /// A file edited again within five steps (the first edit was wrong).
    Backtrack,
    /// A file read many times and never edited.
    ReadAbandon,
    /// The same search run again and again.
    RepeatedGrep,
    /// A recurring sequence of tools.
    ToolSequence,
    /// A step that took far longer than the others.
    TimeAnomaly,
    /// The agent said it was wrong about something.
    SelfCorrection,
    /// Web content entered the context.
    ExternalReference,
    /// A file listing that matched nothing.
    GlobIgnore,
    /// Following imports from file to file.
    ImportChase,
    /// The order tests were run in.
    TestOrder,
    /// A configuration file edited together with code.
    ConfigTouch,
    /// A session far longer than usual.
    StepOverrun,
    /// Parallel agents edited the same file.
    ParallelConflict,
    /// The context grew sharply in one step.
    ContextTokenSpike,
    /// The agent abandoned an approach (beyond the 17 behavioural classes; promoted even
    /// from failed sessions).
    DeadEnd,
}

/// What a signal class is worth and how much evidence it needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignalProfile {
    /// How much one observation says about the code, in `[0, 1]`.
    pub diagnostic_value: f64,
    /// How likely it is to matter in a later session, in `[0, 1]`.
    pub cross_session_relevance: f64,
    /// How often such memories turn out wrong, in `[0, 1]` (hosts may feed back review
    /// outcomes through [`signal_value`]).
    pub false_positive_rate: f64,
    /// Sessions showing it before it may be promoted.
    pub min_sessions: u32,
    /// The memory types it promotes to, preferred first.
    pub promotes_to: &'static [MemoryType],
}

/// `diagnostic × 0.5 + cross-session relevance × 0.3 + (1 − false-positive rate) × 0.2`;
/// signals worth less than [`MIN_SIGNAL_VALUE`] are never promoted.
pub fn signal_value(
    diagnostic_value: f64,
    cross_session_relevance: f64,
    false_positive_rate: f64,
) -> f64 {
    diagnostic_value * 0.5 + cross_session_relevance * 0.3 + (1.0 - false_positive_rate) * 0.2
}

/// Signals below this value are discarded before promotion.
pub const MIN_SIGNAL_VALUE: f64 = 0.4;

impl SignalClass {
    /// Every class, in priority order.
    pub const ALL: [SignalClass; 18] = [
        SignalClass::CoAccess,
        SignalClass::SelfCorrection,
        SignalClass::ErrorRetry,
        SignalClass::ParallelConflict,
        SignalClass::ReadAbandon,
        SignalClass::RepeatedGrep,
        SignalClass::TestOrder,
        SignalClass::ToolSequence,
        SignalClass::FileAccess,
        SignalClass::StepOverrun,
        SignalClass::Backtrack,
        SignalClass::ConfigTouch,
        SignalClass::GlobIgnore,
        SignalClass::ContextTokenSpike,
        SignalClass::ExternalReference,
        SignalClass::ImportChase,
        SignalClass::TimeAnomaly,
        SignalClass::DeadEnd,
    ];

    /// The class's profile. The three components are chosen so that [`signal_value`] gives
    /// the design's priority score for each class (0.91 for co-access … 0.48 for time anomaly).
    pub fn profile(self) -> SignalProfile {
        use MemoryType as M;
        let p = |dv, csr, fpr, min_sessions, promotes_to| SignalProfile {
            diagnostic_value: dv,
            cross_session_relevance: csr,
            false_positive_rate: fpr,
            min_sessions,
            promotes_to,
        };
        match self {
            SignalClass::CoAccess => p(
                0.93,
                0.95,
                0.20,
                3,
                &[M::CausalDependency, M::PrefetchPattern],
            ),
            SignalClass::SelfCorrection => p(0.94, 0.80, 0.15, 1, &[M::Gotcha, M::ModuleInsight]),
            // One failure that a change made pass is a verified fix: the evidence is the
            // passing run, not a count.
            SignalClass::ErrorRetry => p(0.90, 0.80, 0.20, 1, &[M::ErrorPattern, M::Gotcha]),
            SignalClass::ParallelConflict => p(0.90, 0.70, 0.20, 1, &[M::Gotcha]),
            SignalClass::ReadAbandon => p(0.86, 0.70, 0.25, 3, &[M::Gotcha]),
            SignalClass::RepeatedGrep => p(0.80, 0.70, 0.25, 2, &[M::ModuleInsight, M::Gotcha]),
            SignalClass::TestOrder => p(0.70, 0.80, 0.25, 3, &[M::TaskCalibration]),
            SignalClass::ToolSequence => p(0.70, 0.80, 0.30, 3, &[M::WorkflowRecipe]),
            SignalClass::FileAccess => p(0.60, 0.90, 0.25, 3, &[M::PrefetchPattern]),
            SignalClass::StepOverrun => p(0.72, 0.70, 0.30, 3, &[M::TaskCalibration]),
            SignalClass::Backtrack => p(0.72, 0.60, 0.30, 2, &[M::Gotcha]),
            SignalClass::ConfigTouch => p(0.72, 0.60, 0.40, 2, &[M::CausalDependency]),
            SignalClass::GlobIgnore => p(0.64, 0.60, 0.30, 2, &[M::Gotcha]),
            SignalClass::ContextTokenSpike => p(0.56, 0.70, 0.30, 3, &[M::ContextCost]),
            SignalClass::ExternalReference => p(0.56, 0.60, 0.25, 3, &[M::ModuleInsight]),
            SignalClass::ImportChase => p(0.48, 0.50, 0.35, 4, &[M::CausalDependency]),
            SignalClass::TimeAnomaly => p(0.48, 0.40, 0.40, 3, &[M::Gotcha]),
            SignalClass::DeadEnd => p(0.85, 0.80, 0.20, 1, &[M::DeadEnd]),
        }
    }

    /// Whether the class is kept for statistics only and never written as a memory: what
    /// it would say is a template about the session's process ("took N searches", "a
    /// recurring workflow", "validated with", "check assumptions", "read again and again"),
    /// not something a later session can act on. Its counts still feed hot files, co-access
    /// edges and the cross-session statistics; the session record carries what the session
    /// validated with.
    pub fn retired(self) -> bool {
        matches!(
            self,
            SignalClass::FileAccess
                | SignalClass::RepeatedGrep
                | SignalClass::ReadAbandon
                | SignalClass::Backtrack
                | SignalClass::ToolSequence
                | SignalClass::TestOrder
                | SignalClass::GlobIgnore
                | SignalClass::ExternalReference
                | SignalClass::ImportChase
                | SignalClass::ContextTokenSpike
                | SignalClass::TimeAnomaly
                | SignalClass::StepOverrun
                | SignalClass::ParallelConflict
        )
    }

    /// The class's value with its default false-positive rate.
    pub fn value(self) -> f64 {
        let p = self.profile();
        signal_value(
            p.diagnostic_value,
            p.cross_session_relevance,
            p.false_positive_rate,
        )
    }

    /// The class's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            SignalClass::FileAccess => "file_access",
            SignalClass::CoAccess => "co_access",
            SignalClass::ErrorRetry => "error_retry",
            SignalClass::Backtrack => "backtrack",
            SignalClass::ReadAbandon => "read_abandon",
            SignalClass::RepeatedGrep => "repeated_grep",
            SignalClass::ToolSequence => "tool_sequence",
            SignalClass::TimeAnomaly => "time_anomaly",
            SignalClass::SelfCorrection => "self_correction",
            SignalClass::ExternalReference => "external_reference",
            SignalClass::GlobIgnore => "glob_ignore",
            SignalClass::ImportChase => "import_chase",
            SignalClass::TestOrder => "test_order",
            SignalClass::ConfigTouch => "config_touch",
            SignalClass::StepOverrun => "step_overrun",
            SignalClass::ParallelConflict => "parallel_conflict",
            SignalClass::ContextTokenSpike => "context_token_spike",
            SignalClass::DeadEnd => "dead_end",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_match_the_seed_table() {
        let table = [
            (SignalClass::CoAccess, 0.91),
            (SignalClass::SelfCorrection, 0.88),
            (SignalClass::ErrorRetry, 0.85),
            (SignalClass::ParallelConflict, 0.82),
            (SignalClass::ReadAbandon, 0.79),
            (SignalClass::RepeatedGrep, 0.76),
            (SignalClass::TestOrder, 0.74),
            (SignalClass::ToolSequence, 0.73),
            (SignalClass::FileAccess, 0.72),
            (SignalClass::StepOverrun, 0.71),
            (SignalClass::Backtrack, 0.68),
            (SignalClass::ConfigTouch, 0.66),
            (SignalClass::GlobIgnore, 0.64),
            (SignalClass::ContextTokenSpike, 0.63),
            (SignalClass::ExternalReference, 0.61),
            (SignalClass::ImportChase, 0.52),
            (SignalClass::TimeAnomaly, 0.48),
        ];
        for (class, score) in table {
            assert!(
                (class.value() - score).abs() < 0.0051,
                "{class:?}: {} vs {score}",
                class.value()
            );
        }
        // A class whose memories keep being rejected falls below the promotion floor.
        let p = SignalClass::TimeAnomaly.profile();
        assert!(
            signal_value(p.diagnostic_value, p.cross_session_relevance, 1.0) < MIN_SIGNAL_VALUE
        );
    }
}
