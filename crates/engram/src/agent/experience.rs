//! Experience brought back: the records of past sessions whose tasks are most like the new
//! one, at the start of a session and on each prompt. A record says what a past session on
//! a similar task changed, how it validated the work, what it fixed on the way and how it
//! ended, so a new session can start where that one stopped.

use engram_core::{Memory, MemoryType};
use engram_observer::finalize::{MAX_RECORD_TASK_CHARS, RECORD_TASK_PREFIX};
use engram_retrieval::packing::{pack_in_sections, PackedContext, PackingBudget};
use engram_retrieval::Candidate;

use crate::retrieve::query::{SearchIntent, SearchQuery, SearchResponse, MAX_FILTER_ENTRIES};

/// Past sessions brought back for one task, at most.
pub const SIMILAR_SESSIONS: usize = 2;
/// Tokens the past sessions may cost together.
pub const SIMILAR_SESSIONS_BUDGET: usize = 500;
/// The heading above them: what they are, and that they are a record, not an instruction.
pub const SIMILAR_SESSIONS_HEADING: &str =
    "Past sessions on similar tasks here (what they did, recorded by engram)";
/// Characters of a record's task shown: enough to recognise it; the record keeps more for
/// matching, and its chip leads to it.
const SHOWN_TASK_CHARS: usize = 240;
/// Records read for the task before the session's own are left out.
const RECORDS_READ: u32 = SIMILAR_SESSIONS as u32 + 2;

/// The search for the records of past sessions like `task`, without the memories in
/// `exclude` (those the session was shown). Records are matched on the task and what the
/// session changed; the search's relevance cut leaves out tasks that share nothing.
pub(crate) fn records_query(task: &str, exclude: &[String]) -> SearchQuery {
    // Tasks are matched by their heads, read as records keep them (framing and template
    // comments dropped).
    let head = engram_observer::scratchpad::task_text(task)
        .map(|t| t.chars().take(MAX_RECORD_TASK_CHARS).collect::<String>())
        .unwrap_or_else(|| task.chars().take(MAX_RECORD_TASK_CHARS).collect());
    let mut query = SearchQuery::new(head);
    query.types = vec![MemoryType::WorkUnitOutcome];
    query.limit = RECORDS_READ;
    query.intent = SearchIntent::Search;
    query.exclude_ids = exclude.iter().take(MAX_FILTER_ENTRIES).cloned().collect();
    query
}

/// The records in `found` worth bringing back to session `session`: not its own, not
/// stale, at most [`SIMILAR_SESSIONS`], best first.
pub(crate) fn similar_records(found: SearchResponse, session: Option<&str>) -> Vec<Memory> {
    found
        .hits
        .into_iter()
        .map(|hit| hit.memory)
        .filter(|m| {
            !m.flags.needs_review
                && !m.deprecated
                && (session.is_none() || m.session_id.as_deref() != session)
        })
        .take(SIMILAR_SESSIONS)
        .collect()
}

/// `records` packed under their heading within `budget` tokens, each task shortened to
/// what tells it.
pub(crate) fn pack_records(records: Vec<Memory>, budget: usize) -> PackedContext {
    let candidates: Vec<Candidate> = records
        .into_iter()
        .map(|mut memory| {
            memory.content = shortened_task(&memory.content);
            Candidate::new(memory)
        })
        .collect();
    let budget = PackingBudget::for_phase(None).with_total(budget);
    pack_in_sections(
        &candidates,
        &budget,
        &[(MemoryType::WorkUnitOutcome, SIMILAR_SESSIONS_HEADING)],
    )
}

/// A record's text with its task line cut to [`SHOWN_TASK_CHARS`].
fn shortened_task(content: &str) -> String {
    content
        .lines()
        .map(|line| match line.strip_prefix(RECORD_TASK_PREFIX) {
            Some(task) if task.chars().count() > SHOWN_TASK_CHARS => {
                let cut: String = task.chars().take(SHOWN_TASK_CHARS - 1).collect();
                format!("{RECORD_TASK_PREFIX}{}…", cut.trim_end())
            }
            _ => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
