//! `finalize(outcome)`: from a scratchpad to the few memories worth keeping.
//!
//! The pipeline: observations → validation filter (a failed session keeps only
//! its dead ends) → signal value floor → frequency (minimum sessions or occurrences per class,
//! counting persisted cross-session evidence) → novelty (already promoted → drop) → scoring →
//! trust gate (after web content: needs review, confidence × 0.7) → per-session-kind cap.
//! Content comes from deterministic templates; a host LLM may rewrite it afterwards.

use std::collections::{HashMap, HashSet};

use engram_core::{MemorySource, MemoryType, NewMemory, TrustFlags};
use serde::Serialize;

use crate::event::Outcome;
use crate::fingerprint::stable_hash;
use crate::paths::module_of;
use crate::scratchpad::{FileId, Scratchpad};
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
}

impl Scratchpad {
    /// Everything this session showed, as observations with templated content.
    pub fn observations(&self) -> Vec<Observation> {
        let mut out = Vec::new();
        let path = |id: FileId| self.file(id).map_or("", |f| f.path.as_str()).to_owned();
        let last = self.step;
        // Ranked once: the templates below name the session's hottest few files.
        let hot_files = self.hot_files(HOT_FILES);
        let hottest = |n: usize| -> Vec<String> {
            hot_files.iter().take(n).map(|h| h.path.clone()).collect()
        };

        for hot in hot_files.iter().cloned() {
            let module = module_of(&hot.path).to_owned();
            out.push(Observation {
                class: SignalClass::FileAccess,
                key: format!("file:{}", hot.path),
                count: hot.reads + hot.edits,
                evidence_steps: self.file_id(&hot.path).and_then(|id| self.file(id)).map(|f| vec![f.first_step, f.last_step]).unwrap_or_default(),
                content: format!(
                    "`{}` is one of the files sessions on `{module}` keep working on ({} reads, {} edits in session {}); load it up front for work there.",
                    hot.path, hot.reads, hot.edits, self.session_id
                ),
                files: vec![hot.path],
                originating_step: last,
            });
        }

        let mut pairs: Vec<(&u64, &crate::scratchpad::PairStats)> = self.pairs.iter().collect();
        pairs.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
        for (&key, pair) in pairs.into_iter().take(TOP_PAIRS) {
            let (low, high) = ((key >> 32) as FileId, (key & 0xffff_ffff) as FileId);
            let (a, b) = (path(low), path(high));
            let (first, second) = if pair.low_first * 2 >= pair.count {
                (&a, &b)
            } else {
                (&b, &a)
            };
            let (x, y) = if a <= b { (&a, &b) } else { (&b, &a) };
            out.push(Observation {
                class: SignalClass::CoAccess,
                key: format!("co:{x}|{y}"),
                count: pair.count,
                evidence_steps: pair.steps.clone(),
                files: vec![first.clone(), second.clone()],
                content: format!(
                    "`{first}` and `{second}` are worked on together (within {} steps of each other, {} times in one session, usually `{first}` first); when changing one, open the other.",
                    crate::scratchpad::CO_ACCESS_WINDOW, pair.count
                ),
                originating_step: pair.steps.last().copied().unwrap_or(last),
            });
        }

        let mut errors: Vec<&crate::scratchpad::ErrorStats> = self.errors.values().collect();
        errors.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| a.signature.cmp(&b.signature))
        });
        for error in errors {
            // A failure is a lesson when it was retried until it passed, or keeps coming
            // back; a file utility failing on a missing file is not.
            let trivial = error.signature.is_empty()
                || FILE_UTILITIES.contains(&error.subject.split(' ').next().unwrap_or(""));
            if trivial || (error.resolved_step.is_none() && error.count < 3) {
                continue;
            }
            let fixed: Vec<String> = error.fixed_by.iter().map(|&id| path(id)).collect();
            let shown = if error.line.is_empty() {
                error.signature.as_str()
            } else {
                error.line.as_str()
            };
            let resolution = match (error.resolved_step, fixed.is_empty()) {
                (Some(step), false) => format!(" It passed at step {step} after editing {}.", list(&fixed)),
                (Some(step), true) => format!(" It passed at step {step} without a file edit (a changed command or environment)."),
                (None, _) => " It was not resolved in that session.".to_owned(),
            };
            let mut steps = error.steps.clone();
            steps.extend(error.resolved_step);
            out.push(Observation {
                class: SignalClass::ErrorRetry,
                key: format!("err:{}|{}", error.subject, error.signature),
                count: error.count,
                evidence_steps: steps,
                files: fixed,
                content: format!(
                    "`{}` failed with: {shown} ({} times).{resolution}",
                    error.subject, error.count
                ),
                originating_step: error.resolved_step.unwrap_or(last),
            });
        }

        // A few lessons per session, those about a file first: models think aloud a lot.
        let mut lessons: Vec<&crate::scratchpad::Lesson> = self.lessons.iter().collect();
        lessons.sort_by_key(|l| (l.file.is_none(), l.step));
        for lesson in lessons.into_iter().take(MAX_LESSONS) {
            let file = lesson.file.map(path);
            let about = file
                .as_deref()
                .map(|f| format!(" while working on `{f}`"))
                .unwrap_or_default();
            let class = if lesson.dead_end {
                SignalClass::DeadEnd
            } else {
                SignalClass::SelfCorrection
            };
            out.push(Observation {
                class,
                key: format!("lesson:{}", stable_hash(&lesson.text)),
                count: 1,
                evidence_steps: vec![lesson.step],
                files: file.into_iter().collect(),
                content: if lesson.dead_end {
                    format!("Dead end{about}: \"{}\"", lesson.text)
                } else {
                    format!("Correction{about}: \"{}\"", lesson.text)
                },
                originating_step: lesson.step,
            });
        }

        let mut greps: Vec<(&String, &crate::scratchpad::SearchStats)> =
            self.searches.iter().filter(|(_, s)| s.count >= 2).collect();
        greps.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
        for (pattern, search) in greps.into_iter().take(5) {
            let found = hottest(3);
            out.push(Observation {
                class: SignalClass::RepeatedGrep,
                key: format!("grep:{pattern}"),
                count: search.count,
                evidence_steps: search.steps.clone(),
                content: format!(
                    "Searching for `{pattern}` took {} searches ({} empty); the work ended up in {}.",
                    search.count, search.misses, list(&found)
                ),
                files: found,
                originating_step: search.steps.last().copied().unwrap_or(last),
            });
        }

        for file in &self.files {
            if file.reads >= 4 && file.edits == 0 && !file.deleted {
                out.push(Observation {
                    class: SignalClass::ReadAbandon,
                    key: format!("read_abandon:{}", file.path),
                    count: file.reads,
                    evidence_steps: vec![file.first_step, file.last_step],
                    files: vec![file.path.clone()],
                    content: format!(
                        "`{}` gets read again and again without being changed ({} reads in one session): it is hard to take in; read it whole once, with what it imports.",
                        file.path, file.reads
                    ),
                    originating_step: file.last_step,
                });
            }
            if !file.backtrack_steps.is_empty() && !file.created {
                out.push(Observation {
                    class: SignalClass::Backtrack,
                    key: format!("backtrack:{}", file.path),
                    count: file.backtrack_steps.len() as u32,
                    evidence_steps: file.backtrack_steps.clone(),
                    files: vec![file.path.clone()],
                    content: format!(
                        "Edits to `{}` had to be redone within {} steps ({} times): check assumptions about it before editing.",
                        file.path, crate::scratchpad::BACKTRACK_WINDOW, file.backtrack_steps.len()
                    ),
                    originating_step: file.backtrack_steps.last().copied().unwrap_or(last),
                });
            }
        }

        let edited: Vec<String> = self
            .files
            .iter()
            .filter(|f| f.edits > 0 && !f.created)
            .map(|f| f.path.clone())
            .collect();
        for config in self.config_edits() {
            let others: Vec<String> = edited
                .iter()
                .filter(|p| **p != config.path)
                .cloned()
                .collect();
            if others.len() >= 2 {
                out.push(Observation {
                    class: SignalClass::ConfigTouch,
                    key: format!("config:{}", config.path),
                    count: 1,
                    evidence_steps: config.last_edit_step.into_iter().collect(),
                    content: format!(
                        "Changing `{}` came with edits to {}.",
                        config.path,
                        list(&others)
                    ),
                    files: std::iter::once(config.path.clone()).chain(others).collect(),
                    originating_step: config.last_step,
                });
            }
        }

        if let Some((sequence, &count)) = self
            .sequences
            .iter()
            .filter(|(_, &c)| c >= 3)
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        {
            out.push(Observation {
                class: SignalClass::ToolSequence,
                key: format!("seq:{sequence}"),
                count,
                evidence_steps: Vec::new(),
                files: Vec::new(),
                content: format!(
                    "Recurring workflow: {} ({count} times in one session).",
                    sequence.replace('>', " → ")
                ),
                originating_step: last,
            });
        }

        if let Some(first) = self.test_commands.first() {
            let hot = hottest(2);
            out.push(Observation {
                class: SignalClass::TestOrder,
                key: format!("tests:{first}"),
                count: self.test_commands.len() as u32,
                evidence_steps: Vec::new(),
                content: format!(
                    "Work on {} was validated with `{}`.",
                    list(&hot),
                    self.test_commands.join("`, then `")
                ),
                files: hot,
                originating_step: last,
            });
        }

        for (pattern, &count) in &self.empty_globs {
            out.push(Observation {
                class: SignalClass::GlobIgnore,
                key: format!("glob:{pattern}"),
                count,
                evidence_steps: Vec::new(),
                files: Vec::new(),
                content: format!(
                    "Listing `{pattern}` finds nothing in this project ({count} tries)."
                ),
                originating_step: last,
            });
        }

        if let Some(step) = self.external_step {
            let hot = hottest(2);
            let module = hot.first().map_or(".", |p| module_of(p)).to_owned();
            out.push(Observation {
                class: SignalClass::ExternalReference,
                key: format!("external:{module}"),
                count: 1,
                evidence_steps: vec![step],
                content: format!("Work on `{module}` needed outside documentation (web fetch or search at step {step})."),
                files: hot,
                originating_step: step,
            });
        }

        if !self.import_chases.is_empty() {
            let files: Vec<String> = self.import_chases.iter().map(|&(_, id)| path(id)).collect();
            out.push(Observation {
                class: SignalClass::ImportChase,
                key: format!("chase:{}", files[0]),
                count: files.len() as u32,
                evidence_steps: self.import_chases.iter().map(|&(s, _)| s).collect(),
                content: format!(
                    "Understanding this code meant following imports into {}.",
                    list(&files)
                ),
                files,
                originating_step: last,
            });
        }

        for &(step, growth) in &self.token_spikes {
            let hot = hottest(1);
            let module = hot.first().map_or(".", |p| module_of(p)).to_owned();
            out.push(Observation {
                class: SignalClass::ContextTokenSpike,
                key: format!("spike:{module}"),
                count: 1,
                evidence_steps: vec![step],
                content: format!("Step {step} grew the context by {growth} tokens while working on `{module}`; read it in parts."),
                files: hot,
                originating_step: step,
            });
        }
        for &(step, millis, file) in &self.slow_steps {
            let Some(file) = file.map(path) else { continue };
            out.push(Observation {
                class: SignalClass::TimeAnomaly,
                key: format!("slow:{file}"),
                count: 1,
                evidence_steps: vec![step],
                content: format!(
                    "Work on `{file}` stalled for {} s before step {step}; expect it to take time.",
                    millis / 1000
                ),
                files: vec![file],
                originating_step: step,
            });
        }

        // Session length per module: the statistics keep the steps as occurrences, so the
        // mean over earlier sessions is occurrences / sessions.
        if let Some(hot) = hot_files.first() {
            let module = module_of(&hot.path).to_owned();
            out.push(Observation {
                class: SignalClass::StepOverrun,
                key: format!("steps:{module}"),
                count: self.step,
                evidence_steps: vec![self.step],
                files: vec![hot.path.clone()],
                content: format!(
                    "Sessions on `{module}` can run long: this one took {} steps.",
                    self.step
                ),
                originating_step: self.step,
            });
        }

        for (file, agents) in &self.conflicts {
            out.push(Observation {
                class: SignalClass::ParallelConflict,
                key: format!("conflict:{file}"),
                count: agents.len() as u32,
                evidence_steps: Vec::new(),
                files: vec![file.clone()],
                content: format!(
                    "`{file}` was edited by {} agents working in parallel; split work on it across agents with care.",
                    agents.len()
                ),
                originating_step: last,
            });
        }
        out
    }

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
                    needs_review: true,
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
        }
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
