//! A project's memory health as one score from 0 to 100 with its parts shown, so a person
//! sees what to do about it: reviews waiting, stale and contradicted memories, memories
//! without a vector, the observer's precision by people's flags, and how much of the code
//! it has seen has a memory at all. Each part is a share in [0, 1]; a part with nothing to
//! measure (no observer memories yet, no embedder, no code seen) is left out and the
//! others' weights carry the score.

use serde::Serialize;

/// Waiting reviews at this share of the live memories or more score 0 for the backlog.
pub const REVIEW_BACKLOG_FLOOR: f64 = 0.2;
/// Stale memories at this share or more score 0.
pub const STALE_FLOOR: f64 = 0.1;
/// Contradicted memories at this share or more score 0.
pub const CONFLICT_FLOOR: f64 = 0.05;

/// What the score is computed from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HealthInputs {
    /// Live memories.
    pub live: u64,
    /// Live memories waiting for a person's review.
    pub needs_review: u64,
    /// Live memories whose code changed under them.
    pub stale: u64,
    /// Live memories kept beside one they contradict.
    pub conflicting: u64,
    /// Live memories with a vector, when the project embeds (an embedder is configured or
    /// some memory has a vector).
    pub embedded: Option<u64>,
    /// Memories the observer inferred (live or retired), and those a person flagged wrong.
    pub observer: (u64, u64),
    /// Folders of the code the project has seen (indexed or touched by an agent), each with
    /// how many live memories are about a file in it.
    pub folders: Vec<(String, u64)>,
}

/// One part of the score.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthPart {
    /// Its name: `reviewBacklog`, `stale`, `contradicted`, `embedded`, `observerPrecision`
    /// or `coverage`.
    pub name: &'static str,
    /// How well it stands, from 0 to 1.
    pub share: f64,
    /// Its weight in the score.
    pub weight: f64,
    /// What it counted, in words.
    pub detail: String,
}

/// The score and its parts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// 0 to 100: the parts' shares weighted (100 for a project with nothing to judge).
    pub score: u8,
    /// The parts measured, in order.
    pub parts: Vec<HealthPart>,
}

/// `1 − count / (live × floor)`, clamped to [0, 1]: none is 1, a `floor` share or more is 0.
fn burden(count: u64, live: u64, floor: f64) -> f64 {
    if live == 0 {
        return 1.0;
    }
    (1.0 - count as f64 / (live as f64 * floor)).clamp(0.0, 1.0)
}

/// The project's health from `inputs`.
pub fn assess(inputs: &HealthInputs) -> Health {
    let live = inputs.live;
    let mut parts = vec![
        HealthPart {
            name: "reviewBacklog",
            share: burden(inputs.needs_review, live, REVIEW_BACKLOG_FLOOR),
            weight: 0.25,
            detail: format!(
                "{} of {live} live memories wait for review",
                inputs.needs_review
            ),
        },
        HealthPart {
            name: "stale",
            share: burden(inputs.stale, live, STALE_FLOOR),
            weight: 0.2,
            detail: format!("{} cite code that changed", inputs.stale),
        },
        HealthPart {
            name: "contradicted",
            share: burden(inputs.conflicting, live, CONFLICT_FLOOR),
            weight: 0.15,
            detail: format!(
                "{} are kept beside a memory they contradict",
                inputs.conflicting
            ),
        },
    ];
    if let Some(embedded) = inputs.embedded.filter(|_| live > 0) {
        parts.push(HealthPart {
            name: "embedded",
            share: (embedded as f64 / live as f64).min(1.0),
            weight: 0.15,
            detail: format!("{embedded} of {live} have a vector"),
        });
    }
    let (inferred, flagged) = inputs.observer;
    if inferred > 0 {
        parts.push(HealthPart {
            name: "observerPrecision",
            share: 1.0 - (flagged as f64 / inferred as f64).min(1.0),
            weight: 0.15,
            detail: format!("{flagged} of {inferred} observer memories were flagged wrong"),
        });
    }
    if !inputs.folders.is_empty() {
        let covered = inputs.folders.iter().filter(|(_, n)| *n > 0).count();
        parts.push(HealthPart {
            name: "coverage",
            share: covered as f64 / inputs.folders.len() as f64,
            weight: 0.1,
            detail: format!(
                "{covered} of {} folders have a memory",
                inputs.folders.len()
            ),
        });
    }
    let weights: f64 = parts.iter().map(|p| p.weight).sum();
    let score = parts.iter().map(|p| p.share * p.weight).sum::<f64>() / weights;
    Health {
        score: (score * 100.0).round().clamp(0.0, 100.0) as u8,
        parts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_project_scores_100_and_each_burden_lowers_its_part() {
        let clean = HealthInputs {
            live: 100,
            ..HealthInputs::default()
        };
        assert_eq!(assess(&clean).score, 100);
        assert_eq!(
            assess(&clean).parts.len(),
            3,
            "nothing to say of vectors, observer or code"
        );
        let backlog = HealthInputs {
            needs_review: 10,
            ..clean.clone()
        };
        let health = assess(&backlog);
        assert_eq!(
            health.parts[0].share, 0.5,
            "10% waiting is half way to the 20% floor"
        );
        // (0.25 × 0.5 + 0.2 + 0.15) / 0.6: the measured parts carry the score.
        assert_eq!(health.score, 79, "{health:?}");
        let worse = HealthInputs {
            needs_review: 40,
            stale: 20,
            conflicting: 10,
            ..clean.clone()
        };
        assert_eq!(assess(&worse).score, 0, "every burden past its floor");
    }

    #[test]
    fn measured_parts_join_the_score_with_their_weights() {
        let inputs = HealthInputs {
            live: 10,
            embedded: Some(5),
            observer: (20, 5),
            folders: vec![("src/".into(), 3), ("docs/".into(), 0)],
            ..HealthInputs::default()
        };
        let health = assess(&inputs);
        let names: Vec<&str> = health.parts.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            [
                "reviewBacklog",
                "stale",
                "contradicted",
                "embedded",
                "observerPrecision",
                "coverage"
            ]
        );
        // (0.25 + 0.2 + 0.15 + 0.15 × 0.5 + 0.15 × 0.75 + 0.1 × 0.5) / 1.0
        assert_eq!(health.score, 84);
        let empty = assess(&HealthInputs::default());
        assert_eq!(empty.score, 100, "nothing to judge");
    }
}
