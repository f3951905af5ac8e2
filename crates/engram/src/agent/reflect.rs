//! The step-injection decider's reflection trigger from hooks: what the agent recorded
//! this session (its calls of the record tool, found in the session's log) is said back
//! once it has drifted out of view, so a long session keeps its own conclusions in sight.

use engram_agent::hook::recorded_entry;
use engram_agent::inject::Injection;
use engram_agent::step::{self, RecordedEntry, StepRequest};
use engram_observer::Event;
use engram_store::{Database, Statement, Value};

use crate::{Engram, EngramError};

impl<D: Database> Engram<D> {
    /// The session's recorded memories not yet shown to it and recorded at least
    /// `after_calls` tool calls ago, said back (at most [`step::MAX_REFLECTED`], newest
    /// last); none when there are none. One read.
    pub(super) async fn reflection(
        &self,
        session: &str,
        after_calls: u32,
    ) -> Result<Option<Injection>, EngramError> {
        let rows = self
            .single(Statement::with_params(
                RECORDED_UNSHOWN,
                vec![
                    Value::from(self.project_id()),
                    Value::from(session),
                    Value::Integer(i64::from(after_calls)),
                ],
            ))
            .await?;
        let mut recorded: Vec<RecordedEntry> = Vec::new();
        for row in &rows.rows {
            let Some(value) = row.first() else { continue };
            // A row that cannot be read is skipped: the others are still said back.
            let Ok(events) = serde_json::from_str::<Vec<Event>>(value.as_text("events")?) else {
                continue;
            };
            if let Some(entry) = recorded_entry(&events) {
                if !recorded.iter().any(|r| r.id == entry.id) {
                    recorded.push(entry);
                }
            }
        }
        if recorded.is_empty() {
            return Ok(None);
        }
        let request = StepRequest {
            step: step::FIRST_INJECTED_STEP,
            recent_tool_calls: Vec::new(),
            recorded,
            shown_ids: Vec::new(),
            phase: None,
        };
        Ok(step::reflection(&request))
    }
}

/// The session's calls of the record tool whose memory it was not shown since, with at
/// least `?3` calls logged after them, oldest first.
const RECORDED_UNSHOWN: &str = "SELECT e.events FROM hook_events e \
WHERE e.project_id = ?1 AND e.session_id = ?2 AND e.recorded_id IS NOT NULL \
AND NOT EXISTS (SELECT 1 FROM session_shown s WHERE s.project_id = ?1 \
AND s.session_id = ?2 AND s.memory_id = e.recorded_id) \
AND (SELECT count(*) FROM hook_events l WHERE l.project_id = ?1 AND l.session_id = ?2 \
AND l.id > e.id) >= ?3 \
ORDER BY e.id";
