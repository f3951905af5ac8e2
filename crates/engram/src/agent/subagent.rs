//! SubagentStop: a subagent's work folded into its parent session's log. Its tool calls
//! that reached the hooks are marked as its own (so they replay on a scratchpad of their
//! own, merged with the session's); the calls its transcript holds and no hook logged are
//! added. A call is logged once, whichever brought it first.

use engram_agent::hook::{calls_of_transcript, HookPayload};
use engram_store::{Database, Statement, Value};

use crate::{Engram, EngramError};

impl<D: Database> Engram<D> {
    /// Folds the stopped subagent's transcript (read by the host into
    /// [`HookPayload::agent_transcript`]) into the session's log, in one transaction; the
    /// number of calls the transcript holds. Nothing without an agent id or a transcript.
    pub(super) async fn fold_subagent(&self, payload: &HookPayload) -> Result<usize, EngramError> {
        let agent = payload.agent_id.as_deref().filter(|a| !a.trim().is_empty());
        let (Some(agent), Some(transcript)) = (agent, payload.agent_transcript.as_deref()) else {
            return Ok(0);
        };
        let calls = calls_of_transcript(transcript);
        if calls.is_empty() {
            return Ok(0);
        }
        let session = payload.session_id.as_str();
        let ids: Vec<&str> = calls.iter().map(|c| c.call_id.as_str()).collect();
        let mut statements = vec![Statement::with_params(
            CLAIM_CALLS,
            vec![
                Value::from(self.project_id()),
                Value::from(session),
                Value::from(agent),
                Value::from(serde_json::to_string(&ids).unwrap_or_else(|_| "[]".into())),
            ],
        )];
        for mut call in calls.iter().cloned() {
            self.redact_events(&mut call.events);
            statements.push(self.insert_events(
                session,
                Some(agent),
                Some(&call.tool),
                Some(&call.call_id),
                &call.events,
            ));
        }
        self.transaction_with_behind(&statements).await?;
        Ok(calls.len())
    }
}

/// The session's logged calls among `?4` (a JSON array of call ids) that no agent claimed
/// yet become agent `?3`'s: a client that does not say which agent made a call.
const CLAIM_CALLS: &str = "UPDATE hook_events SET agent_id = ?3 \
WHERE project_id = ?1 AND session_id = ?2 AND agent_id IS NULL \
AND call_id IN (SELECT value FROM json_each(?4))";
