//! The session record: one compact memory per session, written without an LLM, that lets
//! a later session on a similar task start where this one ended: the task as the person
//! stated it, the files it changed and how, the commands that validated the work, the
//! errors it met and what fixed them, and how it ended.

use engram_core::{MemorySource, MemoryType, NewMemory, TrustFlags};

use super::observer_tag;
use crate::event::Outcome;
use crate::paths::module_of;
use crate::scratchpad::{FileId, Scratchpad};

/// The tag every session record carries.
pub const RECORD_TAG: &str = "session_record";
/// Files named as changed, at most.
const MAX_CHANGED: usize = 6;
/// Files named as read, for a session that changed none.
const MAX_READ: usize = 3;
/// Test commands named, at most.
const MAX_VALIDATIONS: usize = 3;
/// Errors-and-fixes named, at most.
const MAX_FIXES: usize = 1;
/// Characters of the task a record keeps: a task's title and first lines say what it is
/// about; what follows (logs, long examples) matches every other task a little and buries
/// the ones that are alike (measured in docs/observer.md).
pub const MAX_RECORD_TASK_CHARS: usize = 400;
/// The line of a record that states its task.
pub const RECORD_TASK_PREFIX: &str = "Past session's task: ";
/// Confidence of a record: it states what happened, so it is as sure as its outcome.
const RESOLVED_CONFIDENCE: f64 = 0.85;
const UNRESOLVED_CONFIDENCE: f64 = 0.7;

/// Whether a memory is a session record (by its tags).
pub fn is_session_record(tags: &[String]) -> bool {
    tags.iter().any(|t| t == RECORD_TAG)
}

impl Scratchpad {
    /// The session's record, or `None` when the session neither stated a task nor
    /// changed a project file. It cites only files a memory may cite
    /// ([`Scratchpad::citable`]), and is injected at the default trust level: it states
    /// what the session did, with its outcome, rather than a lesson drawn from it.
    pub fn session_record(&self, outcome: Outcome) -> Option<NewMemory> {
        let mut changed: Vec<(FileId, &crate::scratchpad::FileStats)> = self
            .files
            .iter()
            .enumerate()
            .map(|(id, f)| (id as FileId, f))
            .filter(|&(id, f)| f.edits > 0 && !f.reverted && self.citable(id))
            .collect();
        changed.sort_by(|a, b| b.1.edits.cmp(&a.1.edits).then(a.1.path.cmp(&b.1.path)));
        changed.truncate(MAX_CHANGED);
        if self.task.is_none() && changed.is_empty() {
            return None;
        }
        let mut lines = Vec::new();
        lines.push(match &self.task {
            Some(task) => format!(
                "{RECORD_TASK_PREFIX}{}",
                crate::scratchpad::clip(task, MAX_RECORD_TASK_CHARS)
            ),
            None => "Past session (its task was not stated).".to_owned(),
        });
        if changed.is_empty() {
            let read: Vec<String> = self
                .hot_files(MAX_READ)
                .into_iter()
                .map(|h| format!("`{}`", h.path))
                .collect();
            lines.push(if read.is_empty() {
                "Changed no file.".to_owned()
            } else {
                format!("Changed no file; read {}.", read.join(", "))
            });
        } else {
            let files: Vec<String> = changed
                .iter()
                .map(|(_, f)| match f.change() {
                    None => format!("`{}`", f.path),
                    Some(change) => format!("`{}` ({change})", f.path),
                })
                .collect();
            lines.push(format!("Changed: {}.", files.join(", ")));
        }
        // A run of a script the session wrote for itself validates nothing a later session
        // can run.
        let validations: Vec<String> = self
            .test_runs
            .iter()
            .filter(|run| self.runs_project_code(&run.command))
            .take(MAX_VALIDATIONS)
            .map(|run| {
                let how = if run.passed { "passed" } else { "failed" };
                format!("`{}` ({how})", run.command)
            })
            .collect();
        if !validations.is_empty() {
            lines.push(format!("Validated with {}.", validations.join(", ")));
        }
        let fixes = self.fixes_for_record();
        if !fixes.is_empty() {
            lines.push(format!("Fixed on the way: {}", fixes.join(" ")));
        }
        lines.push(
            match outcome {
                Outcome::Success => "Outcome: resolved.",
                Outcome::Failure => "Outcome: not resolved (its last test run failed).",
                Outcome::Cancelled => "Outcome: stopped before the work was validated.",
            }
            .to_owned(),
        );
        let related_files: Vec<String> = changed.iter().map(|(_, f)| f.path.clone()).collect();
        let mut related_modules: Vec<String> = Vec::new();
        for file in &related_files {
            let module = module_of(file).to_owned();
            if !related_modules.contains(&module) {
                related_modules.push(module);
            }
        }
        Some(NewMemory {
            confidence: if outcome == Outcome::Success {
                RESOLVED_CONFIDENCE
            } else {
                UNRESOLVED_CONFIDENCE
            },
            tags: vec![
                RECORD_TAG.to_owned(),
                observer_tag(&format!("record:{}", self.session_id)),
            ],
            related_files,
            related_modules,
            source: MemorySource::ObserverInferred,
            session_id: Some(self.session_id.clone()),
            provenance_session_ids: vec![self.session_id.clone()],
            flags: TrustFlags::default(),
            ..NewMemory::new(MemoryType::WorkUnitOutcome, lines.join("\n"))
        })
    }

    /// Whether a command runs the project's code rather than a file the session wrote for
    /// itself: each file it names must be one a memory may cite.
    pub(super) fn runs_project_code(&self, command: &str) -> bool {
        command
            .split_whitespace()
            .skip(1)
            .filter(|word| crate::paths::looks_like_file(word) && !word.starts_with('-'))
            .all(|word| match self.normalizer.normalize(word) {
                // A file the session never touched was there before it.
                Some(path) => match self.file_id(&path) {
                    Some(id) => self.citable(id),
                    None => !crate::paths::is_scratch_path(&path),
                },
                None => false,
            })
    }

    /// An error and the files whose change made it pass, in one sentence (the record says
    /// what changed in each file once, above).
    fn error_and_fixed_files(
        &self,
        error: &crate::scratchpad::ErrorStats,
        fixed: &[FileId],
    ) -> String {
        let (command, shown) = (error.command_as_typed(), error.telling_line());
        let files: Vec<String> = fixed
            .iter()
            .filter_map(|&id| self.file(id))
            .map(|f| format!("`{}`", f.path))
            .collect();
        format!(
            "`{command}` failed with `{}`; it passed after changing {}.",
            crate::scratchpad::clip(shown.trim(), 160).replace('`', "'"),
            files.join(", ")
        )
    }

    /// The steps a record stands on: those of the edits of the files it names as changed,
    /// or the session's last step when it changed none.
    pub fn record_steps(&self) -> Vec<u32> {
        let mut steps: Vec<u32> = self
            .files
            .iter()
            .enumerate()
            .filter(|&(id, f)| f.edits > 0 && !f.reverted && self.citable(id as FileId))
            .flat_map(|(_, f)| f.first_edit_step.into_iter().chain(f.last_edit_step))
            .collect();
        steps.sort_unstable();
        steps.dedup();
        if steps.is_empty() {
            steps.push(self.step);
        }
        steps
    }

    /// The session's errors that a change of a project file made pass, as sentences.
    fn fixes_for_record(&self) -> Vec<String> {
        let mut errors: Vec<&crate::scratchpad::ErrorStats> = self
            .errors
            .values()
            .filter(|e| {
                e.resolved_step.is_some()
                    && !super::FILE_UTILITIES.contains(&e.subject.split(' ').next().unwrap_or(""))
            })
            .collect();
        errors.sort_by(|a, b| a.steps.first().cmp(&b.steps.first()));
        errors
            .into_iter()
            .filter_map(|error| {
                let fixed: Vec<FileId> = error
                    .fixed_by
                    .iter()
                    .copied()
                    .filter(|&id| self.citable(id))
                    .collect();
                // A failure that came after the session had edited the files that fixed
                // it was the session's own doing.
                (!fixed.is_empty()
                    && !error.signature.is_empty()
                    && !self.self_inflicted(error, &fixed))
                .then(|| self.error_and_fixed_files(error, &fixed))
            })
            .take(MAX_FIXES)
            .collect()
    }
}
