//! The session start's context: what the agent should know
//! before its first step, packed into the phase's budget.

use engram_agent::inject;
use engram_core::{Memory, MemoryType, Phase, ValidationError};
use engram_retrieval::packing::{pack, PackedContext, PackingBudget};
use engram_retrieval::Candidate;
use engram_store::{Database, Rows, Statement, StoreError, Value};
use serde::{Deserialize, Serialize};

use super::{sql, PromptContext};
use crate::retrieve::query::{SearchQuery, MAX_BUDGET_TOKENS, MAX_FILTER_ENTRIES, MAX_QUERY_BYTES};
use crate::row::memory_from_row;
use crate::{Engram, EngramError};

/// Standing memories (preferences, requirements, decisions) a session starts with at most.
pub const STANDING_MEMORIES: usize = 8;
/// Memories the task's search contributes at most.
const TASK_RESULTS: u32 = 10;
/// Memories the modules' search contributes at most.
const MODULE_RESULTS: u32 = 5;
/// Rows of each standing type the lookup reads before ranking.
const STANDING_ROWS: u32 = 16;
/// The kinds of memory that hold whatever the task: how the project wants things done.
const STANDING_TYPES: [MemoryType; 3] = [
    MemoryType::Preference,
    MemoryType::Requirement,
    MemoryType::Decision,
];

/// What the runtime knows when a session starts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionStart {
    /// The task or the user's first message; without it, only standing knowledge and the
    /// latest work in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// Files the task is about (open in the editor, named by the user).
    #[serde(default)]
    pub files: Vec<String>,
    /// Modules the task is about: their memories are searched on their own too.
    #[serde(default)]
    pub modules: Vec<String>,
    /// The session's phase: weights memory types and sets the budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// Tokens the context may cost (default: the phase's budget, or 3,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u32>,
}

impl SessionStart {
    /// Parses a request from untrusted JSON, naming the failing field.
    pub fn from_json(json: &str) -> Result<SessionStart, ValidationError> {
        engram_core::validate::from_json_checked(json, Self::validate)
    }

    /// Checks the request against engram's limits.
    pub fn validate(&self) -> Result<(), ValidationError> {
        if let Some(task) = &self.task {
            if task.len() > MAX_QUERY_BYTES {
                return Err(ValidationError::field(
                    "task",
                    format!("is {} bytes; the limit is {MAX_QUERY_BYTES}", task.len()),
                ));
            }
        }
        for (field, len) in [("files", self.files.len()), ("modules", self.modules.len())] {
            if len > MAX_FILTER_ENTRIES {
                return Err(ValidationError::field(
                    field,
                    format!("must have at most {MAX_FILTER_ENTRIES} entries"),
                ));
            }
        }
        match self.budget {
            Some(b) if b > MAX_BUDGET_TOKENS => Err(ValidationError::field(
                "budget",
                format!("must be at most {MAX_BUDGET_TOKENS} tokens, got {b}"),
            )),
            _ => Ok(()),
        }
    }
}

/// The context a session starts with.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionContext {
    /// The packed text for the system prompt; its `memoryIds` are the session's first
    /// shown ids.
    #[serde(flatten)]
    pub packed: PromptContext,
    /// What went wrong on the way (a skipped dense path, say).
    pub warnings: Vec<String>,
}

impl<D: Database> Engram<D> {
    /// The context for a session's system prompt: memories
    /// found for the task (and its files), memories of its modules, the project's standing
    /// preferences, requirements and decisions, and the latest work in progress, without
    /// memories that need review, packed into the phase's budget with per-type shares and
    /// citation chips. One round trip: the standing memories are read with the searches.
    /// The packed memories count as used ([`Engram::flush_uses`]).
    pub async fn session_context(
        &self,
        start: &SessionStart,
    ) -> Result<SessionContext, EngramError> {
        let context = self.session_context_unrecorded(start).await?;
        self.behind
            .record(context.packed.memory_ids.iter().map(String::as_str));
        Ok(context)
    }

    /// [`Engram::session_context`] for a caller that hands out only part of it.
    pub(crate) async fn session_context_unrecorded(
        &self,
        start: &SessionStart,
    ) -> Result<SessionContext, EngramError> {
        start.validate()?;
        let task = start
            .task
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let mut queries = Vec::new();
        if let Some(task) = task {
            let mut query = SearchQuery::new(task);
            query.limit = TASK_RESULTS;
            query.phase = start.phase;
            query.context.recent_files = start.files.clone();
            queries.push(query);
        }
        if !start.modules.is_empty() {
            let text = task.map_or_else(|| start.modules.join(" "), str::to_owned);
            let mut query = SearchQuery::new(text);
            query.limit = MODULE_RESULTS;
            query.phase = start.phase;
            query.modules = start.modules.clone();
            queries.push(query);
        }
        // The records of past sessions on tasks like this one ride in the same round trip.
        let asks_records = task.is_some();
        if let Some(task) = task {
            queries.push(super::experience::records_query(task, &[]));
        }
        let (mut answers, rows) = self
            .search_with(
                &queries,
                vec![self.standing_statement(), self.trust_statement()],
            )
            .await?;
        let records = match asks_records {
            true => answers
                .pop()
                .map(|found| super::experience::similar_records(found, None))
                .unwrap_or_default(),
            false => Vec::new(),
        };
        let trust = rows
            .get(1)
            .ok_or_else(|| StoreError::Protocol("no rows for the trust level".into()))?;
        let threshold = Self::trust_from_rows(trust)?.injection_threshold;
        let mut warnings = Vec::new();
        let mut ranked: Vec<Candidate> = Vec::new();
        for found in answers {
            super::add_warnings(&mut warnings, found.warnings);
            for hit in found.hits {
                if !hit.memory.flags.needs_review
                    && trusted(&hit.memory, threshold)
                    && !ranked.iter().any(|c| c.memory.id == hit.memory.id)
                {
                    ranked.push(Candidate::new(hit.memory));
                }
            }
        }
        let standing = rows
            .first()
            .ok_or_else(|| StoreError::Protocol("no rows for the standing memories".into()))?;
        for memory in self.standing_memories(standing, threshold)? {
            if !ranked.iter().any(|c| c.memory.id == memory.id) {
                ranked.push(Candidate::new(memory));
            }
        }
        // Injected unasked: nothing about a file that is gone.
        if self.host.files.is_some() {
            ranked.retain(|c| self.files_still_there(&c.memory));
        }
        // Records come back only about files still there, and never twice as a memory.
        let records = self.without_missing_files(records);
        // Past sessions come back in their own section, at most two of them.
        ranked.retain(|c| !engram_observer::finalize::is_session_record(&c.memory.tags));
        let mut budget = PackingBudget::for_phase(start.phase);
        if let Some(total) = start.budget {
            budget = budget.with_total(total as usize);
        }
        // The past sessions first, in at most a share of the budget; the rest in what is
        // left.
        let records_budget = super::experience::SIMILAR_SESSIONS_BUDGET.min(budget.total * 5 / 8);
        let past = super::experience::pack_records(records, records_budget);
        let left = budget.total.saturating_sub(past.tokens);
        let rest = pack(&ranked, &budget.with_total(left));
        Ok(SessionContext {
            packed: join_packed(past, rest).into(),
            warnings,
        })
    }

    /// The statement reading the project's standing memories (its most confident of each
    /// standing type) and its latest work in progress.
    fn standing_statement(&self) -> Statement {
        let text = sql::standing(STANDING_TYPES.len(), STANDING_ROWS);
        let mut params = vec![Value::from(self.config.project_id.as_str())];
        params.extend(
            STANDING_TYPES
                .iter()
                .chain([&MemoryType::WorkState])
                .map(|t| Value::from(t.as_str())),
        );
        Statement::with_params(text, params)
    }

    /// The project's standing memories in `rows` (the answer to
    /// [`Engram::standing_statement`]), most trusted first (at most [`STANDING_MEMORIES`]),
    /// then its most recent work in progress.
    fn standing_memories(&self, rows: &Rows, threshold: f64) -> Result<Vec<Memory>, EngramError> {
        let mut memories = rows
            .rows
            .iter()
            .map(|row| memory_from_row(row))
            .collect::<Result<Vec<Memory>, _>>()?;
        memories.retain(|m| trusted(m, threshold));
        let now = self.host.clock.now_millis();
        let (work, standing): (Vec<Memory>, Vec<Memory>) = memories
            .into_iter()
            .partition(|m| m.memory_type == MemoryType::WorkState);
        let mut picked = inject::best_by_weight(standing, now, STANDING_MEMORIES);
        if let Some(latest) = work.into_iter().max_by(|a, b| {
            a.created_at
                .cmp(&b.created_at)
                .then_with(|| b.id.cmp(&a.id))
        }) {
            picked.push(latest);
        }
        Ok(picked)
    }
}

/// `first` then `second`, as one packed context.
pub(super) fn join_packed(first: PackedContext, second: PackedContext) -> PackedContext {
    if first.items.is_empty() {
        return second;
    }
    let mut joined = first;
    if !second.items.is_empty() {
        joined.text.push('\n');
        // Entries under no heading would read as part of the section above them.
        if !second.text.starts_with("## ") {
            joined.text.push_str("## ");
            joined
                .text
                .push_str(engram_retrieval::packing::NO_FILE_HEADING);
            joined.text.push('\n');
        }
        joined.text.push_str(&second.text);
    }
    joined.tokens = engram_retrieval::tokens::estimate(&joined.text);
    joined.budget += second.budget;
    joined.items.extend(second.items);
    joined.omitted.extend(second.omitted);
    joined
}

/// Whether the session context may carry `memory` at the project's injection `threshold`:
/// work in progress is the project's own record of where it stopped, not a claim to trust,
/// so it always may.
fn trusted(memory: &Memory, threshold: f64) -> bool {
    memory.memory_type == MemoryType::WorkState || memory.confidence >= threshold
}
