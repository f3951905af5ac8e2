//! Agent-loop integration on a database: the session start's context, memories
//! appended to a file's tool result, the step-injection decider, and engram's own tools
//! for the agent to call. `engram-agent` decides what to look up and how it reads; this
//! module looks it up.

mod experience;
mod hook;
mod mcp;
mod plan;
mod prompts;
mod reflect;
mod session;
mod sql;
mod subagent;
mod tools;

use engram_agent::inject::{self, suffixes_of_all, Injection, InjectionKind, FILE_MEMORY_TYPES};
use engram_agent::step::{self, StepRequest};
use engram_core::{Memory, MemoryType, ValidationError};
use engram_retrieval::packing::PackedContext;
use engram_store::{Database, Rows, Statement, StoreError, Value};
use serde::{Deserialize, Serialize};

pub use self::hook::{HookAnswer, HookStatus};
pub use self::plan::{PlannerContext, PlannerRequest};
pub use self::prompts::PromptOutput;
pub use self::session::{SessionContext, SessionStart, STANDING_MEMORIES};
pub use self::tools::ToolOutput;
use crate::retrieve::json_array;
use crate::retrieve::query::{SearchIntent, SearchQuery};
use crate::row::memory_from_row;
use crate::{Engram, EngramError};

/// A context packed for a prompt: its text, the memories in it and what it cost. A
/// [`SessionContext`] and a [`PlannerContext`] carry one, its fields at their own top level
/// in JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptContext {
    /// The text for the prompt (empty when memory holds nothing to say).
    pub text: String,
    /// The memories in it, in text order: the ones to add to the session's shown set.
    pub memory_ids: Vec<String>,
    /// Tokens the text costs (estimated, never under cl100k's or o200k's count).
    pub tokens: usize,
    /// The budget it was packed into.
    pub budget: usize,
    /// Memories left out for lack of room, best first.
    pub omitted: Vec<String>,
}

impl From<PackedContext> for PromptContext {
    fn from(packed: PackedContext) -> Self {
        PromptContext {
            memory_ids: packed.items.iter().map(|i| i.id.clone()).collect(),
            text: packed.text,
            tokens: packed.tokens,
            budget: packed.budget,
            omitted: packed.omitted,
        }
    }
}

/// Adds the `found` warnings `warnings` does not hold yet: a context built from several
/// searches says once that, say, its dense path was skipped.
fn add_warnings(warnings: &mut Vec<String>, found: Vec<String>) {
    for warning in found {
        if !warnings.contains(&warning) {
            warnings.push(warning);
        }
    }
}

/// Most memories one file lookup reads before the injection rules pick.
const FILE_LOOKUP_ROWS: u32 = 64;

/// A tool call whose result may carry memories about its file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolResultContext {
    /// The tool's name (`Read`, `Edit`, `Write`, `MultiEdit`, `read_file`, …, or `Bash`
    /// with a command that reads or edits files).
    pub tool: String,
    /// The tool's arguments as the agent sent them.
    #[serde(default)]
    pub input: serde_json::Value,
    /// Memories already shown this session: never shown again.
    #[serde(default)]
    pub shown_ids: Vec<String>,
}

impl ToolResultContext {
    /// Parses a request from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<ToolResultContext, ValidationError> {
        engram_core::validate::from_json_checked(json, Self::validate)
    }

    /// Checks the shown set against its limit.
    pub fn validate(&self) -> Result<(), ValidationError> {
        if self.shown_ids.len() > step::MAX_SESSION_ENTRIES {
            return Err(ValidationError::field(
                "shownIds",
                format!("must have at most {} entries", step::MAX_SESSION_ENTRIES),
            ));
        }
        Ok(())
    }

    /// The files the call read or edited.
    pub fn files(&self) -> Vec<String> {
        let mut files = Vec::new();
        inject::files_touched(&self.tool, &self.input, &mut files);
        files
    }
}

impl<D: Database> Engram<D> {
    /// Live memories of `types` (every type when empty) about any of `files`, matched by
    /// their last one to six path components so an absolute path finds a project-relative
    /// one, most confident first, each once (at most 64). One round trip, reaching each
    /// memory through the file index whatever the project's size.
    pub async fn memories_about_files(
        &self,
        files: &[String],
        types: &[MemoryType],
    ) -> Result<Vec<Memory>, EngramError> {
        match self.files_statement(files, types) {
            Some(statement) => Self::distinct_memories(&self.single(statement).await?),
            None => Ok(Vec::new()),
        }
    }

    /// The statement of [`Engram::memories_about_files`], `None` when no file is named.
    fn files_statement(&self, files: &[String], types: &[MemoryType]) -> Option<Statement> {
        let paths = suffixes_of_all(files);
        if paths.is_empty() {
            return None;
        }
        let types: Vec<&str> = types.iter().map(|t| t.as_str()).collect();
        Some(Statement::with_params(
            sql::memories_about_files(FILE_LOOKUP_ROWS),
            vec![
                Value::from(self.config.project_id.as_str()),
                json_array(&paths),
                json_array(&types),
            ],
        ))
    }

    /// The memories in `rows`, each once: a memory about two of the files (or two
    /// suffixes of one) comes twice.
    fn distinct_memories(rows: &Rows) -> Result<Vec<Memory>, EngramError> {
        let mut memories: Vec<Memory> = Vec::with_capacity(rows.rows.len());
        for row in &rows.rows {
            let memory = memory_from_row(row)?;
            if !memories.iter().any(|m| m.id == memory.id) {
                memories.push(memory);
            }
        }
        Ok(memories)
    }

    /// What to append to a tool's result: when the call read
    /// or edited files, the gotchas, error patterns, dead ends and observations about them
    /// that pass the injection rules (the confidence the project's trust level asks, not in
    /// need of review, not in `shown_ids`; at most four, most trusted first), then the
    /// imported rules whose globs match the files (a Cursor rule for `src/**/*.ts`) in the
    /// room left, which count as used
    /// ([`Engram::flush_uses`]). `None` when there is nothing to say or the call touched no
    /// file. One round trip, none when no file is named.
    pub async fn augment_tool_result(
        &self,
        context: &ToolResultContext,
    ) -> Result<Option<Injection>, EngramError> {
        context.validate()?;
        let files = context.files();
        let found = self
            .file_injection(InjectionKind::FileContext, &files, &context.shown_ids)
            .await?;
        self.record_injection(found.as_ref());
        Ok(found)
    }

    /// Counts the memories of an injection as used.
    fn record_injection(&self, found: Option<&Injection>) {
        if let Some(found) = found {
            self.behind
                .record(found.memory_ids.iter().map(String::as_str));
        }
    }

    /// Whether to add a system message before the next step: the
    /// first of three triggers that finds something — unseen memories about the files of
    /// the latest reads and edits; the agent's own records since the last step, said back;
    /// a memory that already answers the agent's latest grep or glob (by the auto-inject
    /// rules, so only a strong match). Nothing before step 5. What it injects counts as
    /// used ([`Engram::flush_uses`]). One round trip for the first
    /// trigger, none for the second, one per search pattern for the third (at most three).
    pub async fn step_injection(
        &self,
        request: &StepRequest,
    ) -> Result<Option<Injection>, EngramError> {
        let found = self.step_injection_unrecorded(request).await?;
        self.record_injection(found.as_ref());
        Ok(found)
    }

    async fn step_injection_unrecorded(
        &self,
        request: &StepRequest,
    ) -> Result<Option<Injection>, EngramError> {
        request.validate()?;
        let plan = step::plan(request);
        if let Some(found) = self
            .file_injection(InjectionKind::FileGotchas, &plan.files, &request.shown_ids)
            .await?
        {
            return Ok(Some(found));
        }
        if plan.reflect {
            if let Some(reflection) = step::reflection(request) {
                return Ok(Some(reflection));
            }
        }
        for pattern in &plan.searches {
            let mut query = SearchQuery::new(pattern.as_str());
            query.intent = SearchIntent::AutoInject;
            query.phase = request.phase;
            query.exclude_ids = request.shown_ids.clone();
            query
                .exclude_ids
                .truncate(crate::retrieve::query::MAX_FILTER_ENTRIES);
            let found = self.search_unrecorded(&query).await?;
            if let Some(hit) = found
                .hits
                .into_iter()
                .find(|h| !request.shown_ids.contains(&h.memory.id))
            {
                return Ok(Some(step::known_answer(pattern, &hit.memory)));
            }
        }
        Ok(None)
    }

    async fn file_injection(
        &self,
        kind: InjectionKind,
        files: &[String],
        shown: &[String],
    ) -> Result<Option<Injection>, EngramError> {
        let Some(statement) = self.files_statement(files, &FILE_MEMORY_TYPES) else {
            return Ok(None);
        };
        let rules = Statement::with_params(
            sql::rules_for_files(FILE_LOOKUP_ROWS),
            vec![
                Value::from(self.config.project_id.as_str()),
                json_array(&suffixes_of_all(files)),
            ],
        );
        // The trust level rides in the same round trip, so a level a person just set
        // holds here at once.
        let mut answers = Vec::with_capacity(3);
        for answer in self
            .db
            .pipeline(&[statement, rules, self.trust_statement()])
            .await?
        {
            answers.push(answer.map_err(StoreError::Sql)?);
        }
        let [found, rules, trust] = answers.as_slice() else {
            return Err(StoreError::Protocol("no rows for the file injection".into()).into());
        };
        let threshold = Self::trust_from_rows(trust)?.injection_threshold;
        let now = self.host.clock.now_millis();
        let found = self.without_missing_files(Self::distinct_memories(found)?);
        // What stops a mistake comes first; the files' own rules fill what room is left.
        let mut picked = inject::pick(found, shown, threshold, now);
        let rules = inject::pick(Self::distinct_memories(rules)?, shown, threshold, now);
        for rule in rules {
            if !picked.iter().any(|m| m.id == rule.id) {
                picked.push(rule);
            }
        }
        picked.truncate(inject::MAX_INJECTED);
        Ok(inject::for_files(kind, files, &picked))
    }
}
