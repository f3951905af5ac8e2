//! How far a project trusts what engram learned on its own: the confidence a memory needs
//! before it is put in front of the agent unasked, and which of a session's new memories
//! count as confirmed without a person's review.
//!
//! A person raises the level as they see memory help, or lowers it after wrong memories;
//! engram never changes it by itself.

use serde::{Deserialize, Serialize};

use crate::{Memory, MemorySource, ValidationError};

/// A project's trust level, 1 (cautious) to 4 (autonomous); 2 when never set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum TrustLevel {
    /// Only very confident memories are injected; every new memory waits for a person.
    Cautious,
    /// Confident memories are injected; new memories that are confirmed, came from commits,
    /// or are very confident and used are confirmed without review.
    #[default]
    Standard,
    /// Somewhat confident memories are injected; the review shows what needs review only.
    Confident,
    /// Most memories are injected; every new memory not flagged for review counts as
    /// confirmed, and the review shows nothing unless asked.
    Autonomous,
}

/// How much of a session review a person is shown at a level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewDetail {
    /// Everything: applied, needs review, auto-confirmed, the rest.
    Full,
    /// Only what needs review.
    NeedsReviewOnly,
    /// Nothing unless asked.
    Suppressed,
}

/// Above this confidence a memory used [`AUTO_CONFIRM_USES`] times needs no review.
pub const AUTO_CONFIRM_CONFIDENCE: f64 = 0.9;
/// The uses that, with [`AUTO_CONFIRM_CONFIDENCE`], confirm a memory.
pub const AUTO_CONFIRM_USES: u64 = 3;

impl TrustLevel {
    /// Every level, lowest first.
    pub const ALL: [TrustLevel; 4] = [
        TrustLevel::Cautious,
        TrustLevel::Standard,
        TrustLevel::Confident,
        TrustLevel::Autonomous,
    ];

    /// The level numbered `level` (1 to 4).
    pub fn from_number(level: i64) -> Result<Self, ValidationError> {
        match level {
            1 => Ok(TrustLevel::Cautious),
            2 => Ok(TrustLevel::Standard),
            3 => Ok(TrustLevel::Confident),
            4 => Ok(TrustLevel::Autonomous),
            _ => Err(ValidationError::field(
                "trustLevel",
                format!("must be 1, 2, 3 or 4, got {level}"),
            )),
        }
    }

    /// The level in `json`, a number 1 to 4 (as a host passes it).
    pub fn from_json(json: &str) -> Result<Self, ValidationError> {
        let value: serde_json::Value = serde_json::from_str(json).map_err(|e| {
            ValidationError::field("trustLevel", format!("must be a number 1 to 4: {e}"))
        })?;
        match value.as_i64() {
            Some(number) => TrustLevel::from_number(number),
            None => Err(ValidationError::field(
                "trustLevel",
                format!("must be 1, 2, 3 or 4, got {value}"),
            )),
        }
    }

    /// The level's number, 1 to 4.
    pub fn number(self) -> u8 {
        match self {
            TrustLevel::Cautious => 1,
            TrustLevel::Standard => 2,
            TrustLevel::Confident => 3,
            TrustLevel::Autonomous => 4,
        }
    }

    /// The level's name: `cautious`, `standard`, `confident` or `autonomous`.
    pub fn name(self) -> &'static str {
        match self {
            TrustLevel::Cautious => "cautious",
            TrustLevel::Standard => "standard",
            TrustLevel::Confident => "confident",
            TrustLevel::Autonomous => "autonomous",
        }
    }

    /// The next level down, `None` at the cautious level.
    pub fn more_cautious(self) -> Option<TrustLevel> {
        TrustLevel::ALL.into_iter().rev().find(|l| *l < self)
    }

    /// The least confidence of a memory put in front of the agent unasked (at a session's
    /// start, after a prompt, beside a file, between steps).
    pub fn injection_threshold(self) -> f64 {
        match self {
            TrustLevel::Cautious => 0.80,
            TrustLevel::Standard => 0.65,
            TrustLevel::Confident => 0.55,
            TrustLevel::Autonomous => 0.45,
        }
    }

    /// Whether a new memory counts as confirmed without a person's review. A memory
    /// flagged for review never does; one a person confirmed always does.
    pub fn auto_confirms(self, memory: &Memory) -> bool {
        if memory.flags.needs_review {
            return false;
        }
        if memory.flags.user_verified {
            return true;
        }
        let earned = memory.source == MemorySource::CommitAuto
            || (memory.confidence > AUTO_CONFIRM_CONFIDENCE
                && memory.access_count >= AUTO_CONFIRM_USES);
        match self {
            TrustLevel::Cautious => false,
            TrustLevel::Standard | TrustLevel::Confident => earned,
            TrustLevel::Autonomous => true,
        }
    }

    /// Whether a new memory that is not auto-confirmed waits for a person: at the cautious
    /// level every one does, otherwise those flagged for review.
    pub fn awaits_review(self, memory: &Memory) -> bool {
        memory.flags.needs_review || (self == TrustLevel::Cautious && !self.auto_confirms(memory))
    }

    /// How much of a session review to show.
    pub fn review_detail(self) -> ReviewDetail {
        match self {
            TrustLevel::Cautious | TrustLevel::Standard => ReviewDetail::Full,
            TrustLevel::Confident => ReviewDetail::NeedsReviewOnly,
            TrustLevel::Autonomous => ReviewDetail::Suppressed,
        }
    }
}

impl std::fmt::Display for TrustLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.number(), self.name())
    }
}

impl Serialize for TrustLevel {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(self.number())
    }
}

impl<'de> Deserialize<'de> for TrustLevel {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let number = i64::deserialize(deserializer)?;
        TrustLevel::from_number(number).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(confidence: f64, uses: u64, source: MemorySource) -> Memory {
        serde_json::from_value(serde_json::json!({
            "id": "m", "projectId": "p", "type": "gotcha", "content": "a gotcha",
            "confidence": confidence, "tags": [], "relatedFiles": [], "relatedModules": [],
            "createdAt": "2026-01-01T00:00:00.000Z", "lastAccessedAt": "2026-01-01T00:00:00.000Z",
            "accessCount": uses, "scope": "global", "visibility": "project",
            "source": source.as_str(), "provenanceSessionIds": [], "relations": [],
            "flags": {}, "deprecated": false,
        }))
        .expect("a well-formed memory")
    }

    #[test]
    fn thresholds_fall_as_trust_rises() {
        let t: Vec<f64> = TrustLevel::ALL
            .iter()
            .map(|l| l.injection_threshold())
            .collect();
        assert_eq!(t, [0.80, 0.65, 0.55, 0.45]);
        assert_eq!(TrustLevel::default(), TrustLevel::Standard);
        assert_eq!(
            TrustLevel::Confident.more_cautious(),
            Some(TrustLevel::Standard)
        );
        assert_eq!(TrustLevel::Cautious.more_cautious(), None);
    }

    #[test]
    fn numbers_round_trip_and_others_are_refused() {
        for level in TrustLevel::ALL {
            assert_eq!(
                TrustLevel::from_number(level.number().into()).ok(),
                Some(level)
            );
            let json = serde_json::to_string(&level).unwrap();
            assert_eq!(serde_json::from_str::<TrustLevel>(&json).ok(), Some(level));
        }
        for bad in [0, 5, -1] {
            assert!(TrustLevel::from_number(bad).is_err());
        }
        assert!(serde_json::from_str::<TrustLevel>("\"high\"").is_err());
        assert_eq!(TrustLevel::from_json("3").ok(), Some(TrustLevel::Confident));
        for bad in ["2.5", "\"2\"", "null", "", "9"] {
            assert!(TrustLevel::from_json(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn each_level_confirms_its_own_share() {
        let used = memory(0.95, 3, MemorySource::AgentExplicit);
        let commit = memory(0.5, 0, MemorySource::CommitAuto);
        let plain = memory(0.7, 0, MemorySource::ObserverInferred);
        let mut verified = plain.clone();
        verified.flags.user_verified = true;
        let mut doubtful = used.clone();
        doubtful.flags.needs_review = true;
        let confirms = |level: TrustLevel| {
            [&used, &commit, &plain, &verified, &doubtful].map(|m| level.auto_confirms(m))
        };
        assert_eq!(
            confirms(TrustLevel::Cautious),
            [false, false, false, true, false]
        );
        assert_eq!(
            confirms(TrustLevel::Standard),
            [true, true, false, true, false]
        );
        assert_eq!(
            confirms(TrustLevel::Confident),
            [true, true, false, true, false]
        );
        assert_eq!(
            confirms(TrustLevel::Autonomous),
            [true, true, true, true, false]
        );
        assert!(TrustLevel::Cautious.awaits_review(&plain));
        assert!(!TrustLevel::Standard.awaits_review(&plain));
        assert!(TrustLevel::Autonomous.awaits_review(&doubtful));
    }
}
