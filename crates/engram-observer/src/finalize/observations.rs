//! The observations of one session, one function per signal class, each with the
//! templated content a memory of it would read as.

use super::{list, Observation, FILE_UTILITIES, HOT_FILES, MAX_LESSONS, TOP_PAIRS};
use crate::fingerprint::stable_hash;
use crate::hot::HotFile;
use crate::paths::module_of;
use crate::scratchpad::{FileId, Scratchpad};
use crate::signal::SignalClass;

/// The paths of the `n` hottest of `ranked`.
fn hottest(ranked: &[HotFile], n: usize) -> Vec<String> {
    ranked.iter().take(n).map(|h| h.path.clone()).collect()
}

impl Scratchpad {
    /// Everything this session showed, as observations with templated content.
    pub fn observations(&self) -> Vec<Observation> {
        let mut out = Vec::new();
        // Ranked once: the templates name the session's hottest few files.
        let ranked = self.hot_files(HOT_FILES);
        self.file_access(&ranked, &mut out);
        self.co_access(&ranked, &mut out);
        self.error_retries(&ranked, &mut out);
        self.lessons(&ranked, &mut out);
        self.repeated_searches(&ranked, &mut out);
        self.file_struggles(&ranked, &mut out);
        self.config_touches(&ranked, &mut out);
        self.tool_sequence(&ranked, &mut out);
        self.test_order(&ranked, &mut out);
        self.empty_globs(&ranked, &mut out);
        self.external_reference(&ranked, &mut out);
        self.import_chase(&ranked, &mut out);
        self.token_spikes(&ranked, &mut out);
        self.slow_steps(&ranked, &mut out);
        self.step_overrun(&ranked, &mut out);
        self.parallel_conflicts(&ranked, &mut out);
        out
    }

    /// The path of file `id` ("" for an unknown id).
    fn path_of(&self, id: FileId) -> String {
        self.file(id).map_or("", |f| f.path.as_str()).to_owned()
    }

    /// The session's hottest files, each with its reads and edits.
    fn file_access(&self, ranked: &[HotFile], out: &mut Vec<Observation>) {
        for hot in ranked.iter().cloned() {
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
                originating_step: self.step,
            });
        }
    }

    /// The files worked on together, the most frequent pairs first.
    fn co_access(&self, _ranked: &[HotFile], out: &mut Vec<Observation>) {
        let mut pairs: Vec<(&u64, &crate::scratchpad::PairStats)> = self.pairs.iter().collect();
        pairs.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
        for (&key, pair) in pairs.into_iter().take(TOP_PAIRS) {
            let (low, high) = ((key >> 32) as FileId, (key & 0xffff_ffff) as FileId);
            let (a, b) = (self.path_of(low), self.path_of(high));
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
                originating_step: pair.steps.last().copied().unwrap_or(self.step),
            });
        }
    }

    /// Failures that were retried until they passed, or kept coming back.
    fn error_retries(&self, _ranked: &[HotFile], out: &mut Vec<Observation>) {
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
            let fixed: Vec<String> = error.fixed_by.iter().map(|&id| self.path_of(id)).collect();
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
                originating_step: error.resolved_step.unwrap_or(self.step),
            });
        }
    }

    /// A few lessons in the agent's words per session, those about a file first: models think aloud a lot.
    fn lessons(&self, _ranked: &[HotFile], out: &mut Vec<Observation>) {
        let mut lessons: Vec<&crate::scratchpad::Lesson> = self.lessons.iter().collect();
        lessons.sort_by_key(|l| (l.file.is_none(), l.step));
        for lesson in lessons.into_iter().take(MAX_LESSONS) {
            let file = lesson.file.map(|id| self.path_of(id));
            // The lesson itself, in the agent's words without its thinking aloud, and the
            // file it was working on as its context.
            let content = match (lesson.dead_end, file.as_deref()) {
                (true, Some(file)) => {
                    format!("Dead end while working on `{file}`: {}", lesson.text)
                }
                (true, None) => format!("Dead end: {}", lesson.text),
                (false, Some(file)) => format!("While working on `{file}`: {}", lesson.text),
                (false, None) => lesson.text.clone(),
            };
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
                content,
                originating_step: lesson.step,
            });
        }
    }

    /// Searches repeated before the work was found.
    fn repeated_searches(&self, ranked: &[HotFile], out: &mut Vec<Observation>) {
        let mut greps: Vec<(&String, &crate::scratchpad::SearchStats)> =
            self.searches.iter().filter(|(_, s)| s.count >= 2).collect();
        greps.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
        for (pattern, search) in greps.into_iter().take(5) {
            let found = hottest(ranked, 3);
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
                originating_step: search.steps.last().copied().unwrap_or(self.step),
            });
        }
    }

    /// Files read again and again without a change, and edits that had to be redone.
    fn file_struggles(&self, _ranked: &[HotFile], out: &mut Vec<Observation>) {
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
                    originating_step: file.backtrack_steps.last().copied().unwrap_or(self.step),
                });
            }
        }
    }

    /// Configuration changes that came with edits to other files.
    fn config_touches(&self, _ranked: &[HotFile], out: &mut Vec<Observation>) {
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
    }

    /// The session's most recurrent workflow, if one recurred.
    fn tool_sequence(&self, _ranked: &[HotFile], out: &mut Vec<Observation>) {
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
                originating_step: self.step,
            });
        }
    }

    /// How the work was validated.
    fn test_order(&self, ranked: &[HotFile], out: &mut Vec<Observation>) {
        if let Some(first) = self.test_commands.first() {
            let hot = hottest(ranked, 2);
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
                originating_step: self.step,
            });
        }
    }

    /// Listings that found nothing.
    fn empty_globs(&self, _ranked: &[HotFile], out: &mut Vec<Observation>) {
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
                originating_step: self.step,
            });
        }
    }

    /// Work that needed outside documentation.
    fn external_reference(&self, ranked: &[HotFile], out: &mut Vec<Observation>) {
        if let Some(step) = self.external_step {
            let hot = hottest(ranked, 2);
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
    }

    /// Imports followed to understand the code.
    fn import_chase(&self, _ranked: &[HotFile], out: &mut Vec<Observation>) {
        if !self.import_chases.is_empty() {
            let files: Vec<String> = self
                .import_chases
                .iter()
                .map(|&(_, id)| self.path_of(id))
                .collect();
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
                originating_step: self.step,
            });
        }
    }

    /// Steps that grew the context sharply.
    fn token_spikes(&self, ranked: &[HotFile], out: &mut Vec<Observation>) {
        for &(step, growth) in &self.token_spikes {
            let hot = hottest(ranked, 1);
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
    }

    /// Work that stalled on a file.
    fn slow_steps(&self, _ranked: &[HotFile], out: &mut Vec<Observation>) {
        for &(step, millis, file) in &self.slow_steps {
            let Some(file) = file.map(|id| self.path_of(id)) else {
                continue;
            };
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
    }

    /// Session length per module: the statistics keep the steps as occurrences, so the mean over earlier sessions is occurrences / sessions.
    fn step_overrun(&self, ranked: &[HotFile], out: &mut Vec<Observation>) {
        if let Some(hot) = ranked.first() {
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
    }

    /// Files edited by several agents in parallel.
    fn parallel_conflicts(&self, _ranked: &[HotFile], out: &mut Vec<Observation>) {
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
                originating_step: self.step,
            });
        }
    }
}
