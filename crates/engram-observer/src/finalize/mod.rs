//! `finalize(outcome)`: from a scratchpad to the few memories worth keeping.
//!
//! The pipeline: observations → validation filter (a failed session keeps only
//! its dead ends) → signal value floor → frequency (minimum sessions or occurrences per class,
//! counting persisted cross-session evidence) → novelty (already promoted → drop) → scoring →
//! trust gate (after web content: needs review, confidence × 0.7) → per-session-kind cap.
//! Content comes from deterministic templates; a host LLM may rewrite it afterwards.

mod observations;
mod record;

pub use record::{is_session_record, MAX_RECORD_TASK_CHARS, RECORD_TAG, RECORD_TASK_PREFIX};

use std::collections::{HashMap, HashSet};

use engram_core::{MemorySource, MemoryType, NewMemory, TrustFlags};
use serde::Serialize;

use crate::event::Outcome;
use crate::fingerprint::stable_hash;
use crate::paths::module_of;
use crate::scratchpad::Scratchpad;
use crate::signal::{signal_value, SignalClass, MIN_SIGNAL_VALUE};

/// Confidence multiplier for memories derived after web content entered the context.
pub const CONTAMINATION_FACTOR: f64 = 0.7;
/// How many hot files count as the session's file-access evidence.
pub const HOT_FILES: usize = 5;
/// How many co-access pairs of one session are recorded.
pub const TOP_PAIRS: usize = 20;

/// At most this many lessons in the agent's words per session.
pub const MAX_LESSONS: usize = 3;
/// Programs whose failures are about a missing path, not about the project.
const FILE_UTILITIES: &[&str] = &[
    "rm", "ls", "cat", "cd", "mkdir", "cp", "mv", "find", "grep", "sed", "head", "tail", "nl",
    "wc", "touch",
];

/// What persisted cross-session statistics say, looked up by the keys of
/// [`Scratchpad::observation_keys`].
#[derive(Debug, Clone, Default)]
pub struct Prior {
    /// Earlier sessions in which each key was observed.
    pub sessions: HashMap<String, u32>,
    /// Earlier occurrences of each key.
    pub occurrences: HashMap<String, u32>,
    /// Earlier sessions per module.
    pub module_sessions: HashMap<String, u32>,
    /// Keys of live memories already promoted from them (novelty).
    pub promoted: HashSet<String>,
    /// Observed false-positive rate per class (from review), overriding the default.
    pub false_positive_rate: HashMap<SignalClass, f64>,
}

/// How a class's evidence is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frequency {
    /// Distinct sessions, this one included.
    Sessions,
    /// Occurrences across sessions, this session's included.
    Occurrences,
}

fn frequency(class: SignalClass) -> Frequency {
    match class {
        SignalClass::ErrorRetry
        | SignalClass::Backtrack
        | SignalClass::RepeatedGrep
        | SignalClass::GlobIgnore => Frequency::Occurrences,
        _ => Frequency::Sessions,
    }
}

/// One thing the session showed, before the filters.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// The signal class.
    pub class: SignalClass,
    /// Identifies the same observation across sessions (`co:a|b`, `err:pytest|…`).
    pub key: String,
    /// How many times this session showed it.
    pub count: u32,
    /// The steps that show it.
    pub evidence_steps: Vec<u32>,
    /// Files involved, hottest or causal first.
    pub files: Vec<String>,
    /// The memory text from the template.
    pub content: String,
    /// The step the evidence ends at (for the trust gate).
    pub originating_step: u32,
}

/// A memory the observer will store.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    /// What was observed.
    pub observation: Observation,
    /// Sessions or occurrences counted for the frequency filter.
    pub evidence: u32,
    /// The memory to store.
    pub memory: NewMemory,
}

/// Why an observation was not promoted.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Discarded {
    /// The observation's class.
    pub class: SignalClass,
    /// Its key.
    pub key: String,
    /// The filter that dropped it.
    pub reason: String,
}

/// The outcome of [`Scratchpad::finalize`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finalized {
    /// The session.
    pub session_id: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Memories to store, best first.
    pub promoted: Vec<Candidate>,
    /// Observations that did not survive, with the reason.
    pub discarded: Vec<Discarded>,
    /// Every observation key with this session's count, for the cross-session statistics.
    pub observed: Vec<(String, u32)>,
    /// Modules the session worked in.
    pub modules: Vec<String>,
    /// The session's record: its task, what it changed, how it was validated, the errors
    /// it fixed and its outcome (`None` when it neither stated a task nor changed a project
    /// file).
    pub record: Option<NewMemory>,
}

impl Scratchpad {
    /// Runs the promotion pipeline against `prior` (persisted statistics looked up for this
    /// session's observation keys). Pure: the caller stores what it returns.
    pub fn finalize(&self, outcome: Outcome, prior: &Prior) -> Finalized {
        self.finalize_observations(self.observations(), outcome, prior)
    }

    /// [`Scratchpad::finalize`] on observations already taken from this scratchpad (a
    /// caller that looked up `prior` by their keys need not compute them again).
    pub fn finalize_observations(
        &self,
        observations: Vec<Observation>,
        outcome: Outcome,
        prior: &Prior,
    ) -> Finalized {
        let mut observed: HashMap<String, u32> = HashMap::new();
        for o in &observations {
            *observed.entry(o.key.clone()).or_default() += o.count.max(1);
        }
        let modules = self.modules();

        let mut promoted = Vec::new();
        let mut discarded = Vec::new();
        let mut seen = HashSet::new();
        for observation in observations {
            let class = observation.class;
            let drop = |reason: String| Discarded {
                class,
                key: observation.key.clone(),
                reason,
            };
            if !seen.insert(observation.key.clone()) {
                continue;
            }
            if class.retired() {
                discarded.push(drop(
                    "retired: counted for statistics, never written as a memory".to_owned(),
                ));
                continue;
            }
            if observation.content.is_empty() {
                discarded.push(drop(
                    "content: nothing a later session could act on (an error without the change that fixed it)"
                        .to_owned(),
                ));
                continue;
            }
            if outcome != Outcome::Success && class != SignalClass::DeadEnd {
                discarded.push(drop(format!(
                    "validation: the session ended {}",
                    outcome.as_str()
                )));
                continue;
            }
            let profile = class.profile();
            let fpr = prior
                .false_positive_rate
                .get(&class)
                .copied()
                .unwrap_or(profile.false_positive_rate);
            let value = signal_value(
                profile.diagnostic_value,
                profile.cross_session_relevance,
                fpr,
            );
            if value < MIN_SIGNAL_VALUE {
                discarded.push(drop(format!(
                    "value: {value:.2} is below {MIN_SIGNAL_VALUE}"
                )));
                continue;
            }
            let mut evidence = match frequency(class) {
                Frequency::Sessions => {
                    prior.sessions.get(&observation.key).copied().unwrap_or(0) + 1
                }
                Frequency::Occurrences => {
                    prior
                        .occurrences
                        .get(&observation.key)
                        .copied()
                        .unwrap_or(0)
                        + observation.count
                }
            };
            // Several parallel agents agreeing counts as confirmation.
            let quorum = self.quorum.get(&observation.key).copied().unwrap_or(1);
            if quorum >= 2 {
                evidence = evidence.max(profile.min_sessions);
            }
            if evidence < profile.min_sessions {
                let unit = match frequency(class) {
                    Frequency::Sessions => "sessions",
                    Frequency::Occurrences => "occurrences",
                };
                discarded.push(drop(format!(
                    "frequency: {evidence} of {} {unit}",
                    profile.min_sessions
                )));
                continue;
            }
            if class == SignalClass::StepOverrun {
                let sessions = prior.sessions.get(&observation.key).copied().unwrap_or(0);
                let steps = prior
                    .occurrences
                    .get(&observation.key)
                    .copied()
                    .unwrap_or(0);
                let mean = f64::from(steps) / f64::from(sessions.max(1));
                if sessions == 0 || f64::from(observation.count) <= 2.0 * mean {
                    discarded.push(drop(format!(
                        "overrun: {} steps against a mean of {mean:.0}",
                        observation.count
                    )));
                    continue;
                }
            }
            if prior.promoted.contains(&observation.key) {
                discarded.push(drop("novelty: already remembered".to_owned()));
                continue;
            }
            let strength = (f64::from(evidence) / f64::from(2 * profile.min_sessions)).min(1.0);
            let mut confidence =
                value * (0.7 + 0.3 * strength) * (1.0 + 0.1 * f64::from(quorum - 1)).min(1.25);
            confidence = confidence.min(1.0);
            let contaminated = self
                .external_step
                .is_some_and(|s| observation.originating_step > s);
            if contaminated {
                confidence *= CONTAMINATION_FACTOR;
            }
            let memory = NewMemory {
                confidence: (confidence * 1000.0).round() / 1000.0,
                tags: vec![class.as_str().to_owned(), observer_tag(&observation.key)],
                related_files: observation.files.clone(),
                related_modules: observation
                    .files
                    .iter()
                    .map(|f| module_of(f).to_owned())
                    .fold(Vec::new(), |mut acc, m| {
                        if !acc.contains(&m) {
                            acc.push(m);
                        }
                        acc
                    }),
                source: MemorySource::ObserverInferred,
                session_id: Some(self.session_id.clone()),
                provenance_session_ids: vec![self.session_id.clone()],
                flags: TrustFlags {
                    needs_review: contaminated || !well_evidenced(class, evidence),
                    contaminated,
                    ..TrustFlags::default()
                },
                ..NewMemory::new(profile.promotes_to[0], truncate(&observation.content, 1000))
            };
            promoted.push(Candidate {
                observation,
                evidence,
                memory,
            });
        }
        promoted.sort_by(|a, b| {
            b.memory
                .confidence
                .total_cmp(&a.memory.confidence)
                .then_with(|| a.observation.key.cmp(&b.observation.key))
        });
        let cap = self.kind.promotion_cap();
        for extra in promoted.drain(cap.min(promoted.len())..) {
            discarded.push(Discarded {
                class: extra.observation.class,
                key: extra.observation.key,
                reason: format!("cap: a {:?} session promotes at most {cap}", self.kind)
                    .to_lowercase(),
            });
        }
        let mut observed: Vec<(String, u32)> = observed.into_iter().collect();
        observed.sort();
        Finalized {
            session_id: self.session_id.clone(),
            outcome,
            promoted,
            discarded,
            observed,
            modules,
            record: self.session_record(outcome),
        }
    }
}

/// Whether a lesson stands on enough evidence to reach agents before a person reviews it:
/// a fix verified by a passing run, or the same observation in two or more sessions (or
/// occurrences). A lesson seen once waits for review, or for a second session.
pub fn well_evidenced(class: SignalClass, evidence: u32) -> bool {
    class == SignalClass::ErrorRetry || evidence >= 2
}

/// Why an observer memory waits for review, in a person's words.
pub fn review_reason(class: Option<SignalClass>, contaminated: bool) -> &'static str {
    if contaminated {
        return "it was learned after web content entered the session";
    }
    match class {
        Some(SignalClass::SelfCorrection | SignalClass::DeadEnd) => {
            "it was seen in one session only; a second session showing it, or your confirmation, lets it be injected"
        }
        Some(_) => "its evidence is thin; your confirmation lets it be injected",
        None => "it was inferred by the observer and not yet confirmed",
    }
}

impl Scratchpad {
    /// The modules the session worked in (files it did not create itself), sorted.
    pub fn modules(&self) -> Vec<String> {
        let mut modules: Vec<String> = self
            .files
            .iter()
            .filter(|f| !f.created)
            .map(|f| module_of(&f.path).to_owned())
            .collect();
        modules.sort();
        modules.dedup();
        modules
    }
}

/// The tag that marks a memory as promoted from observation `key` (novelty checks look it up).
pub fn observer_tag(key: &str) -> String {
    format!("observer:{}", stable_hash(key))
}

fn list(paths: &[String]) -> String {
    match paths {
        [] => "no file".to_owned(),
        [one] => format!("`{one}`"),
        many => many
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut out: String = text.chars().take(max - 1).collect();
        out.push('…');
        out
    }
}

/// The memory type a class promotes to first.
pub fn memory_type_of(class: SignalClass) -> MemoryType {
    class.profile().promotes_to[0]
}
