//! Claude Code's hooks on a database: each event's observer events appended to the
//! session's log, the context each injection point adds, and the session finalized from
//! its log.

use engram_agent::hook::{recorded_entry, HookEvent, HookPayload};
use engram_agent::inject::Injection;
use engram_agent::step::{self, StepRequest};
use engram_core::ValidationError;
use engram_observer::{Event, Outcome, PathNormalizer, Scratchpad, SessionKind};
use engram_store::{Database, Statement, StoreError, Value};
use serde::Serialize;

use crate::observe::SessionReport;
use crate::retrieve::query::{SearchIntent, SearchQuery};
use crate::{Engram, EngramError, SessionStart, ToolResultContext};

/// Tokens the context after a prompt may cost: auto-inject adds at most three memories.
const PROMPT_BUDGET: u32 = 600;
/// Files of the session's own work listed when it resumes or is compacted.
const WORK_FILES: usize = 8;

/// What a hook answers.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookAnswer {
    /// The text for the model's next request, when there is something to add.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The memories in it (now in the session's shown set).
    pub memory_ids: Vec<String>,
    /// Observer events appended to the session's log.
    pub events_logged: usize,
    /// What finalizing the session learned, on SessionEnd.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finalized: Option<SessionReport>,
}

/// What the hooks have seen in this project, for `engram status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookStatus {
    /// Sessions with events in the hooks' log.
    pub sessions_logged: u64,
    /// Tool events in the hooks' log.
    pub events_logged: u64,
    /// Sessions the observer finalized (from hooks or replays).
    pub sessions_finalized: u64,
    /// Memories the observer learned in the last five finalized sessions.
    pub learned_recently: u64,
}

impl<D: Database> Engram<D> {
    /// What the hooks have seen in this project. One round trip.
    pub async fn hook_status(&self) -> Result<HookStatus, EngramError> {
        let rows = self
            .single(Statement::with_params(
                HOOK_STATUS,
                vec![Value::from(self.project_id())],
            ))
            .await?;
        let cell = |i: usize| -> Result<u64, EngramError> {
            let value = rows.rows.first().and_then(|r| r.get(i));
            Ok(match value {
                Some(v) => u64::try_from(v.as_i64("count")?).unwrap_or(0),
                None => 0,
            })
        };
        Ok(HookStatus {
            sessions_logged: cell(0)?,
            events_logged: cell(1)?,
            sessions_finalized: cell(2)?,
            learned_recently: cell(3)?,
        })
    }

    /// Handles one hook: logs the tool events, answers the injection points (never a
    /// memory the session was shown before), checkpoints the session on PreCompact and
    /// SubagentStop and finalizes it, incrementally, on Stop and SessionEnd. `roots` are the project's absolute roots, stripped
    /// from paths. Events engram has no use for answer nothing.
    pub async fn answer_hook(
        &self,
        payload: &HookPayload,
        roots: &[String],
    ) -> Result<HookAnswer, EngramError> {
        let Some(event) = payload.event() else {
            return Ok(HookAnswer::default());
        };
        check_session_id(&payload.session_id)?;
        let session = payload.session_id.as_str();
        match event {
            HookEvent::PostToolUse | HookEvent::PostToolUseFailure => {
                self.tool_hook(event, payload).await
            }
            HookEvent::SessionStart => self.session_start_hook(payload, roots).await,
            HookEvent::UserPromptSubmit => self.prompt_hook(payload).await,
            HookEvent::PreCompact | HookEvent::SubagentStop => {
                let mut answer = HookAnswer::default();
                if event == HookEvent::SubagentStop {
                    answer.events_logged = self.fold_subagent(payload).await?;
                }
                let pad = self.session_pad(session, roots).await?;
                if pad.events > 0 {
                    self.checkpoint_session(&pad).await?;
                }
                Ok(answer)
            }
            // Claude Code stops after every turn: each stop brings the session's learning
            // up to date (finalizing is incremental), so a session that is never ended
            // still teaches.
            HookEvent::Stop | HookEvent::SessionEnd => {
                let (pad, events) = self.session_log(session, roots).await?;
                if pad.events == 0 {
                    return Ok(HookAnswer::default());
                }
                let report = self.finalize_session(&pad, outcome_of(&events)).await?;
                Ok(HookAnswer {
                    finalized: Some(report),
                    ..HookAnswer::default()
                })
            }
            HookEvent::PreToolUse => Ok(HookAnswer::default()),
        }
    }

    /// UserPromptSubmit: the person's words are logged (the first prompt is the session's
    /// task, for its record); the records of past sessions on tasks like it and the
    /// memories that answer it by the auto-inject rules come back, in one round trip,
    /// never one the session was shown.
    async fn prompt_hook(&self, payload: &HookPayload) -> Result<HookAnswer, EngramError> {
        let session = payload.session_id.as_str();
        let mut logged = Vec::new();
        if let Some(prompt) = payload.prompt_text() {
            let mut events = vec![Event::Task {
                text: prompt.to_owned(),
            }];
            self.redact_events(&mut events);
            logged.push(self.insert_events(
                session,
                payload.agent_id.as_deref(),
                None,
                None,
                &events,
            ));
        }
        let Some(prompt) = payload.prompt_query() else {
            self.transaction_with_behind(&logged).await?;
            return Ok(HookAnswer::default());
        };
        let shown = self.shown(session).await?;
        let mut query = SearchQuery::new(prompt.clone());
        query.intent = SearchIntent::AutoInject;
        query.exclude_ids = shown.clone();
        query
            .exclude_ids
            .truncate(crate::retrieve::query::MAX_FILTER_ENTRIES);
        query.budget = Some(PROMPT_BUDGET);
        let records = super::experience::records_query(&prompt, &shown);
        let (mut answers, _) = self.search_with(&[query, records], Vec::new()).await?;
        let past = answers
            .pop()
            .map(|found| super::experience::similar_records(found, Some(session)))
            .unwrap_or_default();
        let past = self.without_missing_files(past);
        let past =
            super::experience::pack_records(past, super::experience::SIMILAR_SESSIONS_BUDGET);
        let found: engram_retrieval::PackedContext = answers
            .pop()
            .and_then(|found| found.packed)
            .unwrap_or_default();
        // A record is never said twice in one answer.
        let mut packed = super::session::join_packed(past, found);
        let mut seen = std::collections::HashSet::new();
        packed.items.retain(|item| seen.insert(item.id.clone()));
        let ids: Vec<String> = packed.items.into_iter().map(|i| i.id).collect();
        self.behind.record(ids.iter().map(String::as_str));
        let mut statements = logged;
        statements.extend(self.shown_statements(session, &ids));
        self.transaction_with_behind(&statements).await?;
        Ok(HookAnswer {
            context: (!packed.text.trim().is_empty()).then_some(packed.text),
            memory_ids: ids,
            ..HookAnswer::default()
        })
    }

    /// SessionStart: sessions that ended without a Stop are finalized first; then the
    /// standing context, and after a `resume` or a `compact` the session's own work, the
    /// past sessions on tasks like its own and what it recorded first. A fresh session has
    /// no task yet: its first prompt brings the past sessions like it.
    async fn session_start_hook(
        &self,
        payload: &HookPayload,
        roots: &[String],
    ) -> Result<HookAnswer, EngramError> {
        let session = payload.session_id.as_str();
        self.recover_crashed_sessions(session, roots).await?;
        let shown = self.shown(session).await?;
        let resumed = matches!(payload.source.as_deref(), Some("resume" | "compact"));
        let pad = match resumed {
            true => Some(self.session_pad(session, roots).await?),
            false => None,
        };
        let start = SessionStart {
            task: pad.as_ref().and_then(|p| p.task.clone()),
            ..SessionStart::default()
        };
        let found = self.session_context_unrecorded(&start).await?;
        let mut text = String::new();
        let mut ids: Vec<String> = Vec::new();
        if let Some(pad) = &pad {
            text.push_str(&work_state(pad));
            // The compacted context lost what the agent recorded: said back, once.
            if let Some(reflection) = self.reflection(session, 0).await? {
                text.push_str(&reflection.text);
                text.push('\n');
                ids.extend(reflection.memory_ids);
            }
        }
        let standing: Vec<String> = found
            .packed
            .memory_ids
            .iter()
            .filter(|id| !shown.contains(id) && !ids.contains(id))
            .cloned()
            .collect();
        if !standing.is_empty() {
            text.push_str(&found.packed.text);
        }
        ids.extend(standing);
        self.behind.record(ids.iter().map(String::as_str));
        self.answer(session, text, ids).await
    }

    /// A finished tool call: its events go to the log; a read or an edit gets the
    /// memories about its files the session has not been shown.
    async fn tool_hook(
        &self,
        event: HookEvent,
        payload: &HookPayload,
    ) -> Result<HookAnswer, EngramError> {
        let session = payload.session_id.as_str();
        let mut events = payload.observer_events(0);
        self.redact_events(&mut events);
        let mut injection = None;
        if event == HookEvent::PostToolUse {
            let mut context = ToolResultContext {
                tool: payload.tool_name.clone().unwrap_or_default(),
                input: payload.tool_input.clone(),
                shown_ids: Vec::new(),
            };
            // Most tool calls touch no file: they cost no read of the shown set.
            if !context.files().is_empty() {
                context.shown_ids = self.shown(session).await?;
                injection = self.augment_tool_result(&context).await?;
            }
        }
        if event == HookEvent::PostToolUse && injection.is_none() {
            injection = self.known_answer(session, &events).await?;
        }
        if event == HookEvent::PostToolUse && injection.is_none() {
            injection = self.reflection(session, step::REFLECT_AFTER_CALLS).await?;
        }
        let (text, ids) = match injection {
            Some(found) => (found.text, found.memory_ids),
            None => (String::new(), Vec::new()),
        };
        let mut statements = Vec::new();
        if !events.is_empty() {
            statements.push(self.insert_events(
                session,
                payload.agent_id.as_deref(),
                payload.tool_name.as_deref(),
                payload.tool_use_id.as_deref(),
                &events,
            ));
        }
        statements.extend(self.shown_statements(session, &ids));
        self.transaction_with_behind(&statements).await?;
        Ok(HookAnswer {
            context: (!text.is_empty()).then_some(text),
            memory_ids: ids,
            events_logged: events.len(),
            finalized: None,
        })
    }

    /// Redacts `events` before anything stores or reads them; without a scanner their
    /// texts are not kept at all.
    pub(super) fn redact_events(&self, events: &mut [Event]) {
        for event in events {
            match self.scanner {
                Some(scanner) => {
                    if let Some(redacted) = event.redacted(scanner) {
                        *event = redacted;
                    }
                }
                None => forget_texts(event),
            }
        }
    }

    /// The statement appending one tool call's `events` to the session's log, unless a
    /// call of the same id is logged already (a hook and a subagent's transcript can both
    /// bring it).
    pub(super) fn insert_events(
        &self,
        session: &str,
        agent: Option<&str>,
        tool: Option<&str>,
        call_id: Option<&str>,
        events: &[Event],
    ) -> Statement {
        let text = |v: Option<&str>| v.filter(|t| !t.is_empty()).map_or(Value::Null, Value::from);
        let recorded = recorded_entry(events).and_then(|entry| entry.id);
        Statement::with_params(
            INSERT_EVENTS,
            vec![
                Value::from(self.project_id()),
                Value::from(session),
                Value::from(serde_json::to_string(events).unwrap_or_else(|_| "[]".into())),
                Value::Integer(self.host.clock.now_millis()),
                text(agent),
                text(tool),
                text(call_id),
                text(recorded.as_deref()),
            ],
        )
    }

    /// The step-injection decider after a search (Grep, Glob, a grep in Bash): a memory
    /// that already answers what the agent looks for, by the auto-inject rules, and never
    /// before the session's fifth tool call (counted in its log). Calls that search for
    /// nothing cost no read.
    async fn known_answer(
        &self,
        session: &str,
        events: &[Event],
    ) -> Result<Option<Injection>, EngramError> {
        let Some(Event::ToolCall(call)) = events.first() else {
            return Ok(None);
        };
        let mut request = StepRequest {
            step: step::FIRST_INJECTED_STEP,
            recent_tool_calls: vec![call.clone()],
            recorded: Vec::new(),
            shown_ids: Vec::new(),
            phase: None,
        };
        if step::plan(&request).searches.is_empty() {
            return Ok(None);
        }
        let logged = self
            .single(Statement::with_params(
                COUNT_SESSION_EVENTS,
                vec![Value::from(self.project_id()), Value::from(session)],
            ))
            .await?;
        let calls_before = logged
            .rows
            .first()
            .and_then(|row| row.first())
            .map(|v| v.as_i64("count"))
            .transpose()?
            .unwrap_or(0);
        request.step = u32::try_from(calls_before).unwrap_or(u32::MAX);
        if request.step < step::FIRST_INJECTED_STEP {
            return Ok(None);
        }
        request.shown_ids = self.shown(session).await?;
        request.shown_ids.truncate(step::MAX_SESSION_ENTRIES);
        self.step_injection(&request).await
    }

    /// Records `ids` as shown in `session` and answers with `text`.
    async fn answer(
        &self,
        session: &str,
        text: String,
        ids: Vec<String>,
    ) -> Result<HookAnswer, EngramError> {
        // Also when nothing is shown: a memory left out for a missing file is marked stale.
        self.transaction_with_behind(&self.shown_statements(session, &ids))
            .await?;
        Ok(HookAnswer {
            context: (!text.trim().is_empty()).then_some(text),
            memory_ids: ids,
            ..HookAnswer::default()
        })
    }

    /// Finalizes the project's sessions that logged tool events after their last finalize
    /// (or were never finalized: they ended before a Stop, by a crash or a kill) and have
    /// been quiet for [`CRASHED_AFTER_MILLIS`], so a new session starts with what they
    /// learned. Finalizing is incremental: only what is new is learned. Only the latest
    /// logged events are looked at (see [`CRASHED_SESSIONS`]).
    async fn recover_crashed_sessions(
        &self,
        session: &str,
        roots: &[String],
    ) -> Result<(), EngramError> {
        let quiet_since = self.host.clock.now_millis() - CRASHED_AFTER_MILLIS;
        let crashed = self
            .single(Statement::with_params(
                CRASHED_SESSIONS,
                vec![
                    Value::from(self.project_id()),
                    Value::from(session),
                    Value::Integer(quiet_since),
                ],
            ))
            .await?;
        for row in &crashed.rows {
            let Some(id) = row.first().and_then(|v| v.as_text("session_id").ok()) else {
                continue;
            };
            let (pad, events) = self.session_log(id, roots).await?;
            if pad.events > 0 {
                self.finalize_session(&pad, outcome_of(&events)).await?;
            }
        }
        Ok(())
    }

    fn shown_statements(&self, session: &str, ids: &[String]) -> Vec<Statement> {
        if ids.is_empty() {
            return Vec::new();
        }
        vec![Statement::with_params(
            INSERT_SHOWN,
            vec![
                Value::from(self.project_id()),
                Value::from(session),
                Value::from(serde_json::to_string(ids).unwrap_or_else(|_| "[]".into())),
                Value::Integer(self.host.clock.now_millis()),
            ],
        )]
    }

    /// The memories `session` was shown.
    async fn shown(&self, session: &str) -> Result<Vec<String>, EngramError> {
        let rows = self
            .single(Statement::with_params(
                SELECT_SHOWN,
                vec![Value::from(self.project_id()), Value::from(session)],
            ))
            .await?;
        rows.rows
            .iter()
            .map(|row| match row.first() {
                Some(value) => value.as_text("memory_id").map(str::to_owned),
                None => Err(StoreError::Decode("a shown row has no id".into())),
            })
            .collect::<Result<_, _>>()
            .map_err(Into::into)
    }

    /// The session's scratchpad, replayed from its log.
    async fn session_pad(
        &self,
        session: &str,
        roots: &[String],
    ) -> Result<Scratchpad, EngramError> {
        Ok(self.session_log(session, roots).await?.0)
    }

    /// The session's scratchpad and its events, replayed from its log in the order they
    /// were appended; each tool call is a step of its own. The calls of each subagent are
    /// replayed on a scratchpad of their own (parallel agents interleave in the log) and
    /// the scratchpads merged.
    pub(super) async fn session_log(
        &self,
        session: &str,
        roots: &[String],
    ) -> Result<(Scratchpad, Vec<Event>), EngramError> {
        let rows = self
            .single(Statement::with_params(
                SELECT_EVENTS,
                vec![Value::from(self.project_id()), Value::from(session)],
            ))
            .await?;
        let normalizer = PathNormalizer::new(roots.iter().cloned());
        let new_pad =
            || Scratchpad::new(session.to_owned(), SessionKind::Build, normalizer.clone());
        // One scratchpad and step count per agent, the session's own agent first.
        let mut agents: Vec<(Option<String>, Scratchpad, u32)> = vec![(None, new_pad(), 0)];
        let mut events = Vec::new();
        for row in &rows.rows {
            let text = match row.first() {
                Some(value) => value.as_text("events")?,
                None => continue,
            };
            // A row that cannot be read is skipped, not fatal: the rest still teaches.
            let Ok(logged) = serde_json::from_str::<Vec<Event>>(text) else {
                continue;
            };
            let agent = match row.get(1) {
                Some(value) => value.as_opt_text("agent_id")?.map(str::to_owned),
                None => None,
            };
            let slot = match agents.iter().position(|(a, _, _)| *a == agent) {
                Some(slot) => slot,
                None => {
                    agents.push((agent, new_pad(), 0));
                    agents.len() - 1
                }
            };
            let (_, pad, steps) = &mut agents[slot];
            *steps += 1;
            for event in logged.into_iter().map(|e| at_step(e, *steps)) {
                pad.observe(&event);
                events.push(event);
            }
        }
        let mut pads: Vec<Scratchpad> = agents
            .into_iter()
            .map(|(_, pad, _)| pad)
            .filter(|pad| pad.events > 0)
            .collect();
        let pad = match pads.len() {
            0 => new_pad(),
            1 => pads.remove(0),
            _ => Scratchpad::merge(session.to_owned(), &pads),
        };
        Ok((pad, events))
    }
}

/// `event` moved to `step` (the log stores step 0; a row's place in the log is its step).
fn at_step(mut event: Event, step: u32) -> Event {
    match &mut event {
        Event::ToolCall(call) => call.step = step,
        Event::ToolResult(result) => result.step = step,
        Event::Reasoning { step: s, .. } | Event::StepComplete { step: s, .. } => *s = step,
        Event::Task { .. } | Event::SessionComplete { .. } => {}
    }
    event
}

/// Drops an event's free text (when no scanner could be built to redact it).
fn forget_texts(event: &mut Event) {
    match event {
        Event::ToolCall(call) => call.input = serde_json::Value::Null,
        Event::ToolResult(result) => result.output.clear(),
        Event::Reasoning { text, .. } | Event::Task { text } => text.clear(),
        _ => {}
    }
}

/// The session's own work, said first when it resumes or is compacted: the files it
/// edited and read most.
fn work_state(pad: &Scratchpad) -> String {
    let hot = pad.hot_files(WORK_FILES);
    if hot.is_empty() {
        return String::new();
    }
    let files: Vec<String> = hot
        .iter()
        .map(|f| {
            let what = if f.edits > 0 { "edited" } else { "read" };
            format!("{} ({what})", engram_core::quote::for_prompt(&f.path))
        })
        .collect();
    format!(
        "This session so far ({} tool events) worked on: {}.\n\n",
        pad.events,
        files.join(", ")
    )
}

/// How the session ended, from its evidence: a failure when its last test run failed,
/// otherwise a success.
fn outcome_of(events: &[Event]) -> Outcome {
    let mut last_test: Option<(Option<String>, u32)> = None;
    let mut failed = false;
    for event in events {
        match event {
            Event::ToolCall(call) if call.tool == "Bash" && runs_tests(&call.input) => {
                last_test = Some((call.id.clone(), call.step));
                failed = false;
            }
            Event::ToolResult(result) => {
                if let Some((id, step)) = &last_test {
                    if result.id == *id && result.step == *step {
                        failed = result.is_error;
                    }
                }
            }
            _ => {}
        }
    }
    if failed {
        Outcome::Failure
    } else {
        Outcome::Success
    }
}

fn runs_tests(input: &serde_json::Value) -> bool {
    let command = input.get("command").and_then(|c| c.as_str()).unwrap_or("");
    [
        "pytest",
        "cargo test",
        "cargo nextest",
        "npm test",
        "go test",
        "jest",
        "vitest",
        "tox",
    ]
    .iter()
    .any(|runner| command.contains(runner))
}

fn check_session_id(session: &str) -> Result<(), EngramError> {
    if session.chars().count() > engram_core::validate::MAX_ID_CHARS
        || session.chars().any(char::is_control)
    {
        return Err(ValidationError::field(
            "session_id",
            "must be at most 256 characters, with no control characters",
        )
        .into());
    }
    Ok(())
}

const INSERT_EVENTS: &str = "INSERT INTO hook_events \
(project_id, session_id, events, created_at, agent_id, tool, call_id, recorded_id) \
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE ?7 IS NULL OR NOT EXISTS \
(SELECT 1 FROM hook_events WHERE project_id = ?1 AND session_id = ?2 AND call_id = ?7)";

/// `?3` a JSON array of ids; one shown row each, kept once.
const INSERT_SHOWN: &str =
    "INSERT OR IGNORE INTO session_shown (project_id, session_id, memory_id, shown_at) \
SELECT ?1, ?2, value, ?4 FROM json_each(?3)";

const SELECT_SHOWN: &str =
    "SELECT memory_id FROM session_shown WHERE project_id = ?1 AND session_id = ?2";

const SELECT_EVENTS: &str = "SELECT events, agent_id FROM hook_events \
WHERE project_id = ?1 AND session_id = ?2 ORDER BY id";

/// A logged session with no event for this long and never finalized has ended without
/// telling (Claude Code fires Stop after every turn, so a live one is finalized within a
/// turn).
const CRASHED_AFTER_MILLIS: i64 = 30 * 60 * 1000;
/// Sessions among the latest 5,000 logged tool events (a crash is recent; the log of a
/// long-lived project is not read whole), other than `?2`, quiet since `?3`, with events
/// logged after their last finalize (or never finalized): at most three per session start.
const CRASHED_SESSIONS: &str = "SELECT e.session_id FROM hook_events e \
LEFT JOIN observer_sessions o ON o.project_id = e.project_id AND o.session_id = e.session_id \
WHERE e.project_id = ?1 AND e.session_id <> ?2 \
AND e.id > (SELECT coalesce(max(id), 0) - 5000 FROM hook_events) \
GROUP BY e.session_id HAVING max(e.created_at) < ?3 AND (max(o.finalized_at) IS NULL \
OR max(e.created_at) > CAST(round((julianday(max(o.finalized_at)) - 2440587.5) * 86400000) AS INTEGER)) \
LIMIT 3";

/// How many tool calls a session has logged (its prompts are logged too, as tasks).
const COUNT_SESSION_EVENTS: &str = "SELECT count(*) FROM hook_events \
WHERE project_id = ?1 AND session_id = ?2 AND events NOT LIKE '[{\"type\":\"task\"%'";

const HOOK_STATUS: &str = "SELECT \
(SELECT count(DISTINCT session_id) FROM hook_events WHERE project_id = ?1), \
(SELECT count(*) FROM hook_events WHERE project_id = ?1 \
 AND events NOT LIKE '[{\"type\":\"task\"%'), \
(SELECT count(*) FROM observer_sessions WHERE project_id = ?1), \
(SELECT coalesce(sum(promoted), 0) FROM (SELECT promoted FROM observer_sessions \
 WHERE project_id = ?1 ORDER BY finalized_at DESC LIMIT 5))";
