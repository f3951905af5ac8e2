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
        self.reverted_edits(&mut out);
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
        let citable = |&(&key, _): &(&u64, &crate::scratchpad::PairStats)| {
            self.citable((key >> 32) as FileId) && self.citable((key & 0xffff_ffff) as FileId)
        };
        for (&key, pair) in pairs.into_iter().filter(citable).take(TOP_PAIRS) {
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
        // The first failure of each fix first: it is the one the fix was for.
        errors.sort_by(|a, b| {
            a.steps
                .first()
                .cmp(&b.steps.first())
                .then_with(|| a.signature.cmp(&b.signature))
        });
        let mut fixes_told: Vec<Vec<FileId>> = Vec::new();
        for error in errors {
            // A failure is a lesson when it was retried until it passed, or keeps coming
            // back; a file utility failing on a missing file is not.
            let trivial = error.signature.is_empty()
                || FILE_UTILITIES.contains(&error.subject.split(' ').next().unwrap_or(""));
            if trivial || (error.resolved_step.is_none() && error.count < 3) {
                continue;
            }
            // Only the project's files are cited as the fix; the memory is the error and
            // the change that made it pass, so an error without one carries no lesson
            // (it is still counted for the cross-session statistics).
            let mut fixed: Vec<FileId> = error
                .fixed_by
                .iter()
                .copied()
                .filter(|&id| self.citable(id))
                .collect();
            fixed.sort_unstable();
            // A failure that first showed after the session had already edited every file
            // that fixed it came from the session's own edit (a typo, a broken indent):
            // repairing it teaches nothing about the project. And one fix is told once,
            // for the failure it was made for.
            let self_inflicted = self.self_inflicted(error, &fixed);
            let told = fixes_told.contains(&fixed);
            if !self_inflicted && !told && error.resolved_step.is_some() {
                fixes_told.push(fixed.clone());
            }
            // A failing run of a script the session wrote for itself is no command a later
            // session can run: the symptom stays in the session's record.
            let runnable = self.runs_project_code(&error.command);
            let lesson = error.resolved_step.is_some()
                && !fixed.is_empty()
                && !self_inflicted
                && !told
                && runnable;
            let mut steps = error.steps.clone();
            steps.extend(error.resolved_step);
            out.push(Observation {
                class: SignalClass::ErrorRetry,
                key: format!("err:{}|{}", error.subject, error.signature),
                count: error.count,
                evidence_steps: steps,
                files: fixed.iter().map(|&id| self.path_of(id)).collect(),
                content: match lesson {
                    true => self.error_fix_text(error, &fixed),
                    false => String::new(),
                },
                originating_step: error.resolved_step.unwrap_or(self.step),
            });
        }
    }

    /// A few lessons in the agent's words per session, those about a file first: models think aloud a lot.
    fn lessons(&self, _ranked: &[HotFile], out: &mut Vec<Observation>) {
        let mut lessons: Vec<&crate::scratchpad::Lesson> = self.lessons.iter().collect();
        lessons.sort_by_key(|l| (l.file.is_none(), l.step));
        for lesson in lessons.into_iter().take(MAX_LESSONS) {
            // A lesson is about the file it names, not the file last touched; one that
            // names none stands on its own.
            let file = self.file_named_in(&lesson.text);
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

    /// Edits the session made and then reverted: an approach tried and given up, with
    /// the agent's own reason when it gave one around the revert.
    fn reverted_edits(&self, out: &mut Vec<Observation>) {
        for (id, file) in self.files.iter().enumerate() {
            if !file.reverted || !self.citable(id as FileId) {
                continue;
            }
            let step = file.last_edit_step.unwrap_or(file.last_step);
            let tried_change = file.reverted_change();
            let tried = tried_change
                .as_deref()
                .map_or(String::new(), |c| format!(" ({c})"));
            let reason = self
                .lessons
                .iter()
                .filter(|l| l.step + 3 >= step && l.step <= step + 1)
                .map(|l| format!(" The agent's reason: {}", l.text))
                .next()
                .unwrap_or_default();
            out.push(Observation {
                class: SignalClass::DeadEnd,
                key: format!(
                    "reverted:{}|{}",
                    file.path,
                    tried_change.as_deref().unwrap_or("")
                ),
                count: 1,
                evidence_steps: vec![file.first_step, step],
                files: vec![file.path.clone()],
                content: format!(
                    "Changing `{}`{tried} was tried and reverted.{reason}",
                    file.path
                ),
                originating_step: step,
            });
        }
    }

    /// Whether a failure fixed by editing `fixed` first showed after the session had edited
    /// every one of them: the session's own edit caused it.
    pub(super) fn self_inflicted(
        &self,
        error: &crate::scratchpad::ErrorStats,
        fixed: &[FileId],
    ) -> bool {
        let first_failure = error.steps.first().copied().unwrap_or(0);
        !fixed.is_empty()
            && fixed.iter().all(|&id| {
                self.file(id)
                    .and_then(|f| f.first_edit_step)
                    .is_some_and(|edited| edited < first_failure)
            })
    }

    /// The text of an error and its fix: the command that failed, the line that says
    /// why, and what the edits that made it pass changed.
    pub(super) fn error_fix_text(
        &self,
        error: &crate::scratchpad::ErrorStats,
        fixed: &[FileId],
    ) -> String {
        let (command, shown) = (error.command_as_typed(), error.telling_line());
        // What the edits between the first failure and the passing run changed.
        let from = error.steps.first().copied().unwrap_or(0);
        let to = error.resolved_step.unwrap_or(self.step);
        let fixes: Vec<String> = fixed
            .iter()
            .filter_map(|&id| self.file(id))
            .map(|f| match f.change_between(from, to) {
                None => format!("`{}`", f.path),
                Some(change) => format!("`{}` ({change})", f.path),
            })
            .collect();
        format!(
            "`{command}` failed with `{}`; it passed after changing {}.",
            shown.trim().replace('`', "'"),
            fixes.join(", ")
        )
    }

    /// The session's file that `text` names, by its path or, when only one file has that
    /// name, by its file name.
    fn file_named_in(&self, text: &str) -> Option<String> {
        let mentions = |needle: &str| {
            text.match_indices(needle).any(|(at, _)| {
                let before = text[..at].chars().next_back();
                let after = text[at + needle.len()..].chars().next();
                let bounded = |c: Option<char>| {
                    c.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '/'))
                };
                bounded(before) && after.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
            })
        };
        let citable = || {
            self.files
                .iter()
                .enumerate()
                .filter(|&(id, _)| self.citable(id as FileId))
                .map(|(_, f)| f)
        };
        if let Some(file) = citable().find(|f| mentions(&f.path)) {
            return Some(file.path.clone());
        }
        let by_name: Vec<&str> = citable()
            .map(|f| f.path.as_str())
            .filter(|p| mentions(p.rsplit('/').next().unwrap_or(p)))
            .collect();
        match by_name.as_slice() {
            [one] => Some((*one).to_owned()),
            _ => None,
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
            .enumerate()
            .filter(|&(id, f)| f.edits > 0 && !f.created && self.citable(id as FileId))
            .map(|(_, f)| f.path.clone())
            .collect();
        for config in self.config_edits().filter(|c| self.citable_path(&c.path)) {
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
