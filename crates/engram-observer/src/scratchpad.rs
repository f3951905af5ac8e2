//! The scratchpad: what one session did, kept as counters updated in constant time per
//! event. Nothing here is written anywhere until [`crate::finalize`] decides what survives.

use std::collections::{HashMap, VecDeque};

use engram_core::secrets::SecretScanner;
use serde::{Deserialize, Serialize};

use crate::action::{actions_of, Action};
use crate::event::{Event, Outcome, SessionKind, ToolCall, ToolResult};
use crate::fingerprint::error_parts;
use crate::language::{self, Utterance};
use crate::paths::{is_config, looks_like_file, PathNormalizer};
use crate::signal::SignalClass;

/// Files accessed within this many steps of each other are co-accessed.
pub const CO_ACCESS_WINDOW: u32 = 3;
/// A file edited again within this many steps is a backtrack.
pub const BACKTRACK_WINDOW: u32 = 5;
/// How many recent accesses and edits are kept for windows and fix attribution.
const RECENT: usize = 32;
/// Caps that keep a runaway session's scratchpad bounded.
const MAX_LESSONS: usize = 32;
const MAX_STEPS_PER_ITEM: usize = 8;
const MAX_FILES: usize = 4096;
const MAX_PAIRS: usize = 16384;

/// Identifies a file inside one scratchpad.
pub type FileId = u32;

/// What a session did to one file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileStats {
    /// The project-relative path.
    pub path: String,
    /// Reads (whole or partial) and searches scoped to it.
    pub reads: u32,
    /// Edits.
    pub edits: u32,
    /// The session created it (its first access wrote it whole).
    pub created: bool,
    /// The session deleted it (and did not recreate it).
    pub deleted: bool,
    /// First and last step it was accessed in.
    pub first_step: u32,
    /// Last step it was accessed in.
    pub last_step: u32,
    /// Last step it was edited in.
    pub last_edit_step: Option<u32>,
    /// Steps where an edit followed another within [`BACKTRACK_WINDOW`].
    pub backtrack_steps: Vec<u32>,
    /// What its edits did to its code, as the edits show it, first few (see
    /// [`crate::change::describe`]).
    #[serde(default)]
    pub edit_log: Vec<crate::change::Edit>,
    /// The step of its first edit.
    #[serde(default)]
    pub first_edit_step: Option<u32>,
    /// Reads of it that failed (the file was not there).
    #[serde(default)]
    pub failed_reads: u32,
    /// Its last edit was a revert (`git checkout -- f`) after edits of the session.
    #[serde(default)]
    pub reverted: bool,
}

impl FileStats {
    /// What the session's edits did to the file, net (see [`crate::change::describe`]).
    pub fn change(&self) -> Option<String> {
        crate::change::describe(&self.edit_log)
    }

    /// What the edits between steps `from` and `to` (both included) did to the file, net.
    pub fn change_between(&self, from: u32, to: u32) -> Option<String> {
        crate::change::describe(
            self.edit_log
                .iter()
                .filter(|e| e.step >= from && e.step <= to),
        )
    }

    /// What the edits before the file's last revert tried.
    pub fn reverted_change(&self) -> Option<String> {
        let last_revert = self.edit_log.iter().rposition(|e| e.revert)?;
        let first = self.edit_log[..last_revert]
            .iter()
            .rposition(|e| e.revert)
            .map_or(0, |i| i + 1);
        crate::change::describe(&self.edit_log[first..last_revert])
    }
}

/// Two files accessed within [`CO_ACCESS_WINDOW`] steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PairStats {
    /// Times they were accessed close together.
    pub count: u32,
    /// Times the lower-id file came first.
    pub low_first: u32,
    /// Steps where it happened (first few).
    pub steps: Vec<u32>,
}

/// One recurring failure.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorStats {
    /// The tool or command that failed.
    pub subject: String,
    /// The normalized failure line.
    pub signature: String,
    /// The failure line as printed, secrets redacted (empty when the scanner is unavailable).
    pub line: String,
    /// Failures so far.
    pub count: u32,
    /// Steps that failed (first few).
    pub steps: Vec<u32>,
    /// The step where the same subject next succeeded, if it did.
    pub resolved_step: Option<u32>,
    /// Files edited between the first failure and the success.
    pub fixed_by: Vec<FileId>,
    /// The first failing command line as typed (redacted, cut short), when it was a shell
    /// command.
    #[serde(default)]
    pub command: String,
}

impl ErrorStats {
    /// The failing command as typed, else its subject (`pytest`, a tool's name).
    pub fn command_as_typed(&self) -> &str {
        if self.command.is_empty() {
            &self.subject
        } else {
            &self.command
        }
    }

    /// The line that says what failed, else the normalized signature.
    pub fn telling_line(&self) -> &str {
        if self.line.is_empty() {
            &self.signature
        } else {
            &self.line
        }
    }
}

/// One test command and how its latest run ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TestRun {
    /// The command (program and its first operand, `pytest testing/test_x.py`).
    pub command: String,
    /// Its latest run passed.
    pub passed: bool,
    /// The step of that run.
    pub step: u32,
}

/// One search pattern.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchStats {
    /// Times it was run.
    pub count: u32,
    /// Times it found nothing.
    pub misses: u32,
    /// Steps it ran in (first few).
    pub steps: Vec<u32>,
}

/// A lesson in the agent's own words.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lesson {
    /// Self-correction or dead end.
    pub dead_end: bool,
    /// The sentence.
    pub text: String,
    /// The step it was said in.
    pub step: u32,
    /// The file most recently worked on when it was said.
    pub file: Option<FileId>,
}

/// Why a checkpoint could not be restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointError(pub String);

impl std::fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unreadable scratchpad checkpoint: {}", self.0)
    }
}

impl std::error::Error for CheckpointError {}

/// An early trigger: something in the session worth acting on before it ends (a host may
/// checkpoint, or surface it to the agent).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Trigger {
    /// The signal class that fired.
    pub signal: SignalClass,
    /// The step it fired at.
    pub step: u32,
    /// Its priority.
    pub priority: f64,
}

/// What a pending tool call was about, kept until its result arrives.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PendingCall {
    id: Option<String>,
    step: u32,
    /// The tool, or the command for shell runs: failures of the same subject are retries.
    subject: String,
    searches: Vec<String>,
    globs: Vec<String>,
    file: Option<FileId>,
    /// The command line as typed, for shell calls (cut short).
    #[serde(default)]
    command: Option<String>,
    /// The test command it ran, if any.
    #[serde(default)]
    test: Option<String>,
}

/// A session's scratchpad. Serializable: [`Scratchpad::checkpoint`] and
/// [`Scratchpad::restore`] carry it across a crash.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scratchpad {
    /// The session.
    pub session_id: String,
    /// The kind of session.
    pub kind: SessionKind,
    /// How the session ended (set by [`Event::SessionComplete`]).
    pub outcome: Option<Outcome>,
    pub(crate) normalizer: PathNormalizer,
    /// The task as the person first stated it (redacted, cut short), when the host said.
    #[serde(default)]
    pub task: Option<String>,
    /// The latest step seen.
    pub step: u32,
    /// Events ingested.
    pub events: u64,
    /// Every file touched, by id.
    pub files: Vec<FileStats>,
    #[serde(skip)]
    pub(crate) file_ids: HashMap<String, FileId>,
    /// Co-access pairs keyed by `low << 32 | high` file ids.
    pub pairs: HashMap<u64, PairStats>,
    /// Failures by subject and signature.
    pub errors: HashMap<String, ErrorStats>,
    /// Search patterns.
    pub searches: HashMap<String, SearchStats>,
    /// File listings that found nothing, by pattern.
    pub empty_globs: HashMap<String, u32>,
    /// Lessons in the agent's words.
    pub lessons: Vec<Lesson>,
    /// The first step after which web content was in the context.
    pub external_step: Option<u32>,
    /// Counts of three-action sequences (`read>edit>test`).
    pub sequences: HashMap<String, u32>,
    /// Test commands in the order they were first run.
    pub test_commands: Vec<String>,
    /// Each test command with how its latest run ended, in first-run order.
    #[serde(default)]
    pub test_runs: Vec<TestRun>,
    /// Reads that followed a search for an import.
    pub import_chases: Vec<(u32, FileId)>,
    /// Steps whose context grew more than twice the running mean.
    pub token_spikes: Vec<(u32, u64)>,
    /// Calls that came long after the previous one: `(step, milliseconds, file worked on
    /// before the pause)`.
    #[serde(default)]
    pub slow_steps: Vec<(u32, u64, Option<FileId>)>,
    #[serde(default)]
    last_call_ms: Option<u64>,
    #[serde(default)]
    gap_sum_ms: u64,
    #[serde(default)]
    gaps: u64,
    /// Early triggers that fired, in order (each class at most once).
    #[serde(default)]
    pub triggers: Vec<Trigger>,
    #[serde(default)]
    max_search_count: u32,
    #[serde(default)]
    edited_files: u32,
    #[serde(default)]
    config_edited: bool,
    /// For merged scratchpads: how many parallel agents showed each observation key.
    #[serde(default)]
    pub quorum: HashMap<String, u32>,
    /// For merged scratchpads: files edited by more than one parallel agent, with the
    /// agents' indexes.
    #[serde(default)]
    pub conflicts: Vec<(String, Vec<u32>)>,
    token_sum: u64,
    token_steps: u64,
    recent_accesses: VecDeque<(u32, FileId)>,
    recent_edits: VecDeque<(u32, FileId)>,
    #[serde(skip)]
    recent_kinds: VecDeque<&'static str>,
    pending: VecDeque<PendingCall>,
    last_search_import: bool,
    #[serde(skip)]
    scanner: Option<&'static SecretScanner>,
    /// What the host knows of the session's files at the end: present (`true`) or gone
    /// (`false`); files it does not know are judged by what the session did to them.
    #[serde(skip)]
    presence: HashMap<String, bool>,
}

impl Scratchpad {
    /// An empty scratchpad for `session_id`, resolving paths with `normalizer`.
    pub fn new(
        session_id: impl Into<String>,
        kind: SessionKind,
        normalizer: PathNormalizer,
    ) -> Self {
        Scratchpad {
            session_id: session_id.into(),
            kind,
            outcome: None,
            task: None,
            normalizer,
            step: 0,
            events: 0,
            files: Vec::new(),
            file_ids: HashMap::new(),
            pairs: HashMap::new(),
            errors: HashMap::new(),
            searches: HashMap::new(),
            empty_globs: HashMap::new(),
            lessons: Vec::new(),
            external_step: None,
            sequences: HashMap::new(),
            test_commands: Vec::new(),
            test_runs: Vec::new(),
            import_chases: Vec::new(),
            token_spikes: Vec::new(),
            slow_steps: Vec::new(),
            last_call_ms: None,
            gap_sum_ms: 0,
            gaps: 0,
            triggers: Vec::new(),
            max_search_count: 0,
            edited_files: 0,
            config_edited: false,
            quorum: HashMap::new(),
            conflicts: Vec::new(),
            token_sum: 0,
            token_steps: 0,
            recent_accesses: VecDeque::with_capacity(RECENT),
            recent_edits: VecDeque::with_capacity(RECENT),
            recent_kinds: VecDeque::with_capacity(3),
            pending: VecDeque::new(),
            last_search_import: false,
            scanner: SecretScanner::shared().ok(),
            presence: HashMap::new(),
        }
    }

    /// Serializes the scratchpad (for a checkpoint row).
    pub fn checkpoint(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A scratchpad from a [`Scratchpad::checkpoint`].
    pub fn restore(state: &str) -> Result<Self, CheckpointError> {
        let mut pad: Scratchpad =
            serde_json::from_str(state).map_err(|e| CheckpointError(e.to_string()))?;
        // A checkpoint comes back from storage: every file id in it must name a file.
        let files = pad.files.len() as u64;
        let bad = |id: FileId| u64::from(id) >= files;
        let inconsistent = pad
            .pairs
            .keys()
            .any(|&k| (k >> 32) >= files || (k & 0xffff_ffff) >= files)
            || pad
                .errors
                .values()
                .any(|e| e.fixed_by.iter().any(|&f| bad(f)))
            || pad.lessons.iter().any(|l| l.file.is_some_and(bad))
            || pad.import_chases.iter().any(|&(_, f)| bad(f))
            || pad.slow_steps.iter().any(|&(_, _, f)| f.is_some_and(bad))
            || pad
                .recent_accesses
                .iter()
                .chain(&pad.recent_edits)
                .any(|&(_, f)| bad(f));
        if inconsistent {
            return Err(CheckpointError(
                "a file id in the checkpoint names no file".into(),
            ));
        }
        pad.file_ids = pad
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.clone(), i as FileId))
            .collect();
        pad.scanner = SecretScanner::shared().ok();
        Ok(pad)
    }

    /// The file with this id.
    pub fn file(&self, id: FileId) -> Option<&FileStats> {
        self.files.get(id as usize)
    }

    /// The id of a file already seen.
    pub fn file_id(&self, path: &str) -> Option<FileId> {
        self.file_ids.get(path).copied()
    }

    /// Ingests one event, secrets redacted before anything reads it: every key, signature,
    /// path and lesson the scratchpad keeps derives from redacted text.
    pub fn observe(&mut self, event: &Event) {
        self.events += 1;
        let redacted = self.scanner.and_then(|scanner| event.redacted(scanner));
        let event = redacted.as_ref().unwrap_or(event);
        match event {
            Event::ToolCall(call) => self.on_call(call),
            Event::ToolResult(result) => self.on_result(result),
            Event::Reasoning { step, text } => {
                self.advance(*step);
                if self.lessons.len() < MAX_LESSONS {
                    if let Some((kind, lesson)) = language::find(text) {
                        let text = self.normalizer.relative_text(&lesson);
                        let file = self.recent_accesses.back().map(|&(_, f)| f);
                        self.lessons.push(Lesson {
                            dead_end: kind == Utterance::DeadEnd,
                            text,
                            step: *step,
                            file,
                        });
                    }
                }
            }
            Event::StepComplete { step, input_tokens } => {
                self.advance(*step);
                if let Some(tokens) = *input_tokens {
                    if self.token_steps >= 3 {
                        let mean = self.token_sum / self.token_steps;
                        if tokens > mean.saturating_mul(2)
                            && tokens - mean > 10_000
                            && self.token_spikes.len() < MAX_STEPS_PER_ITEM
                        {
                            self.token_spikes.push((*step, tokens - mean));
                        }
                    }
                    self.token_sum = self.token_sum.saturating_add(tokens);
                    self.token_steps += 1;
                }
            }
            Event::Task { text } => {
                if self.task.is_none() {
                    self.task = task_text(&self.normalizer.relative_text(text));
                }
            }
            Event::SessionComplete { outcome } => self.outcome = Some(*outcome),
        }
        self.check_triggers();
    }

    /// Fires the in-session early triggers (each once): a self-correction,
    /// a search repeated three times, a config file edited with two or more other files,
    /// two distinct error fingerprints. Constant time.
    fn check_triggers(&mut self) {
        if self.triggers.len() == 4 {
            return;
        }
        let conditions = [
            (
                SignalClass::SelfCorrection,
                0.9,
                self.lessons.iter().any(|l| !l.dead_end),
            ),
            (SignalClass::RepeatedGrep, 0.8, self.max_search_count >= 3),
            (
                SignalClass::ConfigTouch,
                0.7,
                self.config_edited && self.edited_files >= 3,
            ),
            (SignalClass::ErrorRetry, 0.75, self.errors.len() >= 2),
        ];
        for (signal, priority, fired) in conditions {
            if fired && !self.triggers.iter().any(|t| t.signal == signal) {
                self.triggers.push(Trigger {
                    signal,
                    step: self.step,
                    priority,
                });
            }
        }
    }

    fn advance(&mut self, step: u32) {
        self.step = self.step.max(step);
    }

    fn on_call(&mut self, call: &ToolCall) {
        self.advance(call.step);
        if let Some(at) = call.at_ms {
            if let Some(gap) = self.last_call_ms.and_then(|last| at.checked_sub(last)) {
                // A pause five times the session's mean gap, and over a minute.
                if self.gaps >= 5
                    && gap > 60_000
                    && gap > 5 * (self.gap_sum_ms / self.gaps)
                    && self.slow_steps.len() < MAX_STEPS_PER_ITEM
                {
                    let file = self.recent_accesses.back().map(|&(_, f)| f);
                    self.slow_steps.push((call.step, gap, file));
                }
                self.gap_sum_ms = self.gap_sum_ms.saturating_add(gap);
                self.gaps += 1;
            }
            self.last_call_ms = Some(at);
        }
        let step = call.step;
        let actions = actions_of(&call.tool, &call.input);
        let shell_subject = ["command", "cmd"]
            .iter()
            .find_map(|k| call.input.get(*k).and_then(serde_json::Value::as_str))
            .and_then(crate::shell::subject);
        let typed = ["command", "cmd"]
            .iter()
            .find_map(|k| call.input.get(*k).and_then(serde_json::Value::as_str))
            .map(|c| clip(&self.normalizer.relative_text(c.trim()), MAX_COMMAND_CHARS));
        let change = crate::change::edit_of(&call.tool, &call.input, step);
        let mut pending = PendingCall {
            id: call.id.clone(),
            step,
            subject: shell_subject.unwrap_or_else(|| call.tool.clone()),
            command: typed,
            ..PendingCall::default()
        };
        for action in &actions {
            self.push_kind(match action {
                Action::Read { .. } => "read",
                Action::Edit { .. } | Action::Delete { .. } => "edit",
                Action::Search { .. } | Action::Glob { .. } => "search",
                Action::Run { test: true, .. } => "test",
                Action::Run { .. } => "run",
                Action::External => "web",
            });
            let chase = std::mem::take(&mut self.last_search_import);
            match action {
                Action::Read { path, .. } => {
                    if let Some(id) = self.access(path, step, false, false) {
                        pending.file = Some(id);
                        if chase && self.import_chases.len() < MAX_STEPS_PER_ITEM {
                            self.import_chases.push((step, id));
                        }
                    }
                }
                Action::Edit { path, created } => {
                    if let Some(id) = self.access(path, step, true, *created) {
                        pending.file = Some(id);
                        self.note_change(id, change.as_ref());
                    }
                }
                Action::Delete { path } => {
                    if let Some(id) = self
                        .normalizer
                        .normalize(path)
                        .and_then(|p| self.file_id(&p))
                    {
                        self.files[id as usize].deleted = true;
                    }
                }
                Action::Search { pattern, scope } => {
                    let entry = self.searches.entry(pattern.clone()).or_default();
                    entry.count += 1;
                    if entry.steps.len() < MAX_STEPS_PER_ITEM {
                        entry.steps.push(step);
                    }
                    self.max_search_count = self.max_search_count.max(entry.count);
                    pending.searches.push(pattern.clone());
                    let trimmed = pattern.trim_start_matches(['^', '\\', ' ']);
                    self.last_search_import = ["import ", "from ", "use ", "require", "alias "]
                        .iter()
                        .any(|p| trimmed.starts_with(p));
                    if let Some(scope) = scope.as_deref().filter(|s| looks_like_file(s)) {
                        if let Some(id) = self.access(scope, step, false, false) {
                            pending.file = Some(id);
                        }
                    }
                }
                Action::Glob { pattern } => pending.globs.push(pattern.clone()),
                Action::Run { command, test } => {
                    pending.subject = command.clone();
                    if *test
                        && self.test_commands.len() < MAX_STEPS_PER_ITEM
                        && !self.test_commands.contains(command)
                    {
                        self.test_commands.push(command.clone());
                    }
                    if *test {
                        pending.test = Some(command.clone());
                    }
                }
                Action::External => {
                    self.external_step.get_or_insert(step);
                }
            }
        }
        if actions.is_empty() {
            self.push_kind("other");
        }
        // Results usually follow at once; a bounded queue covers parallel calls.
        if self.pending.len() >= 16 {
            self.pending.pop_front();
        }
        self.pending.push_back(pending);
    }

    fn push_kind(&mut self, kind: &'static str) {
        if self.recent_kinds.back() == Some(&kind) {
            return;
        }
        if self.recent_kinds.len() == 3 {
            self.recent_kinds.pop_front();
        }
        self.recent_kinds.push_back(kind);
        if self.recent_kinds.len() == 3 && self.sequences.len() < 256 {
            let key = format!(
                "{}>{}>{}",
                self.recent_kinds[0], self.recent_kinds[1], self.recent_kinds[2]
            );
            *self.sequences.entry(key).or_default() += 1;
        }
    }

    /// Records an access to `path`; returns its id when it is a project file.
    fn access(&mut self, path: &str, step: u32, edit: bool, created: bool) -> Option<FileId> {
        let path = self.normalizer.normalize(path)?;
        let id = match self.file_ids.get(&path) {
            Some(&id) => id,
            None => {
                if self.files.len() >= MAX_FILES {
                    return None;
                }
                let id = self.files.len() as FileId;
                self.files.push(FileStats {
                    path: path.clone(),
                    created: edit && created,
                    first_step: step,
                    ..FileStats::default()
                });
                self.file_ids.insert(path, id);
                id
            }
        };
        let file = &mut self.files[id as usize];
        file.last_step = step;
        if edit {
            if file.edits == 0 {
                self.edited_files += 1;
                self.config_edited |= is_config(&file.path);
            }
            file.edits += 1;
            file.deleted = false;
            file.first_edit_step.get_or_insert(step);
            if let Some(last) = file.last_edit_step {
                if step > last
                    && step - last <= BACKTRACK_WINDOW
                    && file.backtrack_steps.len() < MAX_STEPS_PER_ITEM
                {
                    file.backtrack_steps.push(step);
                }
            }
            file.last_edit_step = Some(step);
            push_bounded(&mut self.recent_edits, (step, id));
        } else {
            file.reads += 1;
        }
        // Co-access with the distinct files of the last few steps.
        let mut seen: [FileId; 8] = [FileId::MAX; 8];
        let mut n = 0;
        for &(other_step, other) in self.recent_accesses.iter().rev() {
            if step.saturating_sub(other_step) > CO_ACCESS_WINDOW || n == seen.len() {
                break;
            }
            if other == id || seen[..n].contains(&other) {
                continue;
            }
            seen[n] = other;
            n += 1;
            if self.pairs.len() >= MAX_PAIRS {
                continue;
            }
            let (low, high) = (other.min(id), other.max(id));
            let pair = self
                .pairs
                .entry(u64::from(low) << 32 | u64::from(high))
                .or_default();
            pair.count += 1;
            if other == low {
                pair.low_first += 1;
            }
            if pair.steps.len() < MAX_STEPS_PER_ITEM {
                pair.steps.push(step);
            }
        }
        push_bounded(&mut self.recent_accesses, (step, id));
        Some(id)
    }

    fn on_result(&mut self, result: &ToolResult) {
        self.advance(result.step);
        let index = match &result.id {
            Some(id) => self
                .pending
                .iter()
                .rposition(|p| p.id.as_deref() == Some(id)),
            None => self.pending.len().checked_sub(1),
        };
        let Some(call) = index.and_then(|i| self.pending.remove(i)) else {
            return;
        };
        let empty = result.output.trim().is_empty();
        for pattern in &call.searches {
            if empty {
                if let Some(s) = self.searches.get_mut(pattern) {
                    s.misses += 1;
                }
            }
        }
        if empty && !result.is_error {
            for pattern in call.globs {
                *self.empty_globs.entry(pattern).or_default() += 1;
            }
        }
        let step = result.step.max(call.step);
        // Claude Code cancels parallel calls when one fails; only the failing one counts.
        let cancelled = result.output.contains("Sibling tool call errored");
        if let Some(test) = &call.test {
            if !cancelled {
                self.record_test_run(test, !result.is_error, step);
            }
        }
        if result.is_error && !cancelled {
            if let Some(file) = call.file.and_then(|id| self.files.get_mut(id as usize)) {
                if file.edits == 0 {
                    file.failed_reads += 1;
                }
            }
        }
        if result.is_error && !cancelled {
            // Only short, redacted text is kept: the signature and the line naming the error.
            let (signature, line) = error_parts(&result.output);
            // Unscanned output is not kept beyond its signature.
            let line = match self.scanner {
                Some(_) => self.normalizer.relative_text(&line),
                None => String::new(),
            };
            let key = format!("{}\u{1f}{}", call.subject, signature);
            if !self.errors.contains_key(&key) && self.errors.len() >= 256 {
                return;
            }
            let entry = self.errors.entry(key).or_insert_with(|| ErrorStats {
                subject: call.subject.clone(),
                signature,
                line,
                command: call.command.clone().unwrap_or_default(),
                ..ErrorStats::default()
            });
            entry.count += 1;
            entry.resolved_step = None;
            if entry.steps.len() < MAX_STEPS_PER_ITEM {
                entry.steps.push(step);
            }
        } else if !result.is_error {
            // A success of a subject that failed before resolves those failures.
            let recent_edits = &self.recent_edits;
            for error in self.errors.values_mut() {
                if error.subject == call.subject && error.resolved_step.is_none() {
                    let since = error.steps.first().copied().unwrap_or(0);
                    error.resolved_step = Some(step);
                    error.fixed_by = recent_edits
                        .iter()
                        .filter(|&&(s, _)| s >= since && s <= step)
                        .map(|&(_, f)| f)
                        .fold(Vec::new(), |mut acc, f| {
                            if !acc.contains(&f) {
                                acc.push(f);
                            }
                            acc
                        });
                }
            }
        }
    }

    /// Records what an edit of file `id` did to its code, and whether it was a revert of
    /// the session's own edits.
    fn note_change(&mut self, id: FileId, change: Option<&crate::change::Edit>) {
        let Some(file) = self.files.get_mut(id as usize) else {
            return;
        };
        file.reverted = change.is_some_and(|c| c.revert) && file.edits > 1;
        if let Some(change) = change {
            if file.edit_log.len() < MAX_EDITS_LOGGED {
                file.edit_log.push(change.clone());
            }
        }
    }

    fn record_test_run(&mut self, command: &str, passed: bool, step: u32) {
        if let Some(run) = self.test_runs.iter_mut().find(|r| r.command == command) {
            run.passed = passed;
            run.step = step;
        } else if self.test_runs.len() < MAX_STEPS_PER_ITEM {
            self.test_runs.push(TestRun {
                command: command.to_owned(),
                passed,
                step,
            });
        }
    }

    /// Tells the scratchpad which of its files the host found present (`true`) or gone
    /// (`false`) at the end of the session (a file probe, the code index, `git ls-files`).
    pub fn set_file_presence(&mut self, presence: HashMap<String, bool>) {
        self.presence = presence;
    }

    /// Whether a memory may cite file `id` as the project's: not scratch by its name, not
    /// gone, not created and deleted by the session, not a failed read of a file that was
    /// never there, and, when the session created it, still present by the host's word.
    pub fn citable(&self, id: FileId) -> bool {
        let Some(file) = self.file(id) else {
            return false;
        };
        if crate::paths::is_scratch_path(&file.path) || file.deleted {
            return false;
        }
        match self.presence.get(&file.path) {
            Some(present) => *present,
            None => !file.created && (file.edits > 0 || file.reads > file.failed_reads),
        }
    }

    /// [`Scratchpad::citable`] by path.
    pub fn citable_path(&self, path: &str) -> bool {
        self.file_id(path).is_some_and(|id| self.citable(id))
    }

    /// Config files edited this session.
    pub fn config_edits(&self) -> impl Iterator<Item = &FileStats> {
        self.files
            .iter()
            .filter(|f| f.edits > 0 && is_config(&f.path))
    }
}

/// Tasks are kept to this many characters: enough to recognise the task again.
pub const MAX_TASK_CHARS: usize = 400;
/// Command lines kept with a failure are cut to this many characters.
const MAX_COMMAND_CHARS: usize = 160;
/// Edits whose changes are kept per file.
const MAX_EDITS_LOGGED: usize = 24;

/// The task as it is kept: whitespace collapsed, the harness's framing around it dropped
/// (`<pr_description>` wrappers, "Consider the following PR description:"), cut short.
/// `None` when nothing is left.
pub fn task_text(text: &str) -> Option<String> {
    let mut body = text.trim();
    for (open, close) in [
        ("<pr_description>", "</pr_description>"),
        ("<task>", "</task>"),
    ] {
        if let Some(start) = body.find(open) {
            let rest = &body[start + open.len()..];
            body = rest.find(close).map_or(rest, |end| &rest[..end]);
        }
    }
    let body = body
        .trim()
        .trim_start_matches("Consider the following PR description:")
        .trim();
    let collapsed: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    (!collapsed.is_empty()).then(|| clip(&collapsed, MAX_TASK_CHARS))
}

/// `text` cut to `max` characters, with an ellipsis when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

fn push_bounded<T>(queue: &mut VecDeque<T>, item: T) {
    if queue.len() == RECENT {
        queue.pop_front();
    }
    queue.push_back(item);
}
