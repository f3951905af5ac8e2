//! The observer's SQL: prior statistics read in one pipeline, updates written with the
//! promoted memories in one transaction. Lists travel as one JSON parameter each.

/// `?1` project, `?2` session id: whether the session was finalized before, and what it
/// contributed then.
pub const SESSION_SEEN: &str =
    "SELECT c.contribution FROM observer_sessions s LEFT JOIN observer_session_contributions c \
ON c.project_id = s.project_id AND c.session_id = s.session_id \
WHERE s.project_id = ?1 AND s.session_id = ?2";

/// `?1` project, `?2` JSON array of keys: sessions and occurrences so far.
pub const SIGNAL_COUNTS: &str = "SELECT key, sessions, occurrences FROM observer_signal_counts \
WHERE project_id = ?1 AND key IN (SELECT value FROM json_each(?2))";

/// `?1` project, `?2` JSON array of observer tags: those carried by live memories.
pub const PROMOTED_TAGS: &str = "SELECT DISTINCT t.value FROM memories m, json_each(m.tags) t \
WHERE m.project_id = ?1 AND m.deprecated = 0 AND m.source = 'observer_inferred' \
AND t.value IN (SELECT value FROM json_each(?2))";

/// `?1` project, `?2` JSON array of modules: sessions recorded per module.
pub const MODULE_COUNTS: &str = "SELECT module, count FROM observer_module_session_counts \
WHERE project_id = ?1 AND module IN (SELECT value FROM json_each(?2))";

/// `?1` project: per signal class (first tag), observer memories and how many were forgotten.
pub const CLASS_REJECTIONS: &str = "SELECT json_extract(tags, '$[0]') AS class, count(*), \
sum(deprecated) FROM memories WHERE project_id = ?1 AND source = 'observer_inferred' GROUP BY class";

/// `?1` project, `?2` session, `?3` outcome, `?4` steps, `?5` events, `?6` memories promoted
/// by this finalize, `?7` now.
pub const UPSERT_SESSION: &str = "INSERT INTO observer_sessions \
(project_id, session_id, outcome, steps, events, promoted, finalized_at) \
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
ON CONFLICT (project_id, session_id) DO UPDATE SET outcome = excluded.outcome, \
steps = excluded.steps, events = excluded.events, promoted = promoted + excluded.promoted, \
finalized_at = excluded.finalized_at";

/// `?1` project, `?2` session, `?3` the session's contribution so far (JSON).
pub const UPSERT_CONTRIBUTION: &str = "INSERT INTO observer_session_contributions \
(project_id, session_id, contribution) VALUES (?1, ?2, ?3) \
ON CONFLICT (project_id, session_id) DO UPDATE SET contribution = excluded.contribution";

/// `?1` project, `?2` JSON `[[key, new session (0 or 1), more occurrences], …]`, `?3`
/// session, `?4` now.
pub const UPSERT_SIGNAL_COUNTS: &str = "INSERT INTO observer_signal_counts \
(project_id, key, sessions, occurrences, last_session_id, updated_at) \
SELECT ?1, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), ?3, ?4 \
FROM json_each(?2) WHERE true \
ON CONFLICT (project_id, key) DO UPDATE SET sessions = sessions + excluded.sessions, \
occurrences = occurrences + excluded.occurrences, last_session_id = excluded.last_session_id, \
updated_at = excluded.updated_at";

/// `?1` project, `?2` JSON `[[key, sessions], …]`, `?3` source, `?4` now: evidence from
/// outside agent sessions (a git log), raising each key's sessions to at least the given
/// count.
pub const SEED_SIGNAL_COUNTS: &str = "INSERT INTO observer_signal_counts \
(project_id, key, sessions, occurrences, last_session_id, updated_at) \
SELECT ?1, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[1]'), ?3, ?4 \
FROM json_each(?2) WHERE true \
ON CONFLICT (project_id, key) DO UPDATE SET sessions = max(sessions, excluded.sessions), \
occurrences = max(occurrences, excluded.occurrences), updated_at = excluded.updated_at";

/// `?1` project, `?2` JSON `[[file_a, file_b, commits], …]`, `?3` now: co-commit edges from a
/// git log; agent sessions stay 0, the commits go to `raw_count` and the `git` entry of the
/// breakdown.
pub const SEED_CO_ACCESS: &str = "INSERT INTO observer_co_access_edges \
(file_a, file_b, project_id, weight, raw_count, session_count, directional, task_type_breakdown, last_observed_at) \
SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), ?1, 0.0, json_extract(value, '$[2]'), 0, 0, \
json_object('git', json_extract(value, '$[2]')), ?3 FROM json_each(?2) WHERE true \
ON CONFLICT (file_a, file_b, project_id) DO UPDATE SET raw_count = raw_count + excluded.raw_count, \
task_type_breakdown = json_set(task_type_breakdown, '$.git', \
  coalesce(json_extract(task_type_breakdown, '$.git'), 0) + excluded.raw_count)";

/// `?1` project, `?2` JSON `[[path, more accesses, new session (0 or 1)], …]`, `?3` now.
pub const UPSERT_FILE_NODES: &str = "INSERT INTO observer_file_nodes \
(file_path, project_id, access_count, last_accessed_at, session_count) \
SELECT json_extract(value, '$[0]'), ?1, json_extract(value, '$[1]'), ?3, json_extract(value, '$[2]') \
FROM json_each(?2) WHERE true \
ON CONFLICT (file_path, project_id) DO UPDATE SET access_count = access_count + excluded.access_count, \
last_accessed_at = excluded.last_accessed_at, session_count = session_count + excluded.session_count";

/// `?1` project, `?2` JSON `[[file_a, file_b, more times, a_first, new session (0 or 1),
/// times], …]` (a < b; `a_first` and `times` are the session's totals), `?3` now. The weight
/// is the share of the project's observed sessions that showed the pair; the edge is
/// directional when one file came first at least 80% of the time.
pub const UPSERT_CO_ACCESS: &str = "INSERT INTO observer_co_access_edges \
(file_a, file_b, project_id, weight, raw_count, session_count, directional, last_observed_at) \
SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), ?1, \
1.0 / max(1, (SELECT count(*) FROM observer_sessions WHERE project_id = ?1)), \
json_extract(value, '$[2]'), json_extract(value, '$[4]'), \
CASE WHEN json_extract(value, '$[3]') * 5 >= json_extract(value, '$[5]') * 4 \
  OR json_extract(value, '$[3]') * 5 <= json_extract(value, '$[5]') THEN 1 ELSE 0 END, ?3 \
FROM json_each(?2) WHERE true \
ON CONFLICT (file_a, file_b, project_id) DO UPDATE SET raw_count = raw_count + excluded.raw_count, \
session_count = session_count + excluded.session_count, \
weight = min(1.0, (session_count + excluded.session_count) * 1.0 / max(1, (SELECT count(*) FROM observer_sessions WHERE project_id = ?1))), \
directional = directional AND excluded.directional, last_observed_at = excluded.last_observed_at";

/// `?1` project, `?2` JSON `[[id, subject, fingerprint, line, more occurrences, resolved_how,
/// new session (0 or 1)], …]`, `?3` session, `?4` now. A session is listed once.
pub const UPSERT_ERRORS: &str = "INSERT INTO observer_error_patterns \
(id, project_id, tool_name, error_fingerprint, error_message, occurrence_count, last_seen_at, resolved_how, sessions) \
SELECT json_extract(value, '$[0]'), ?1, json_extract(value, '$[1]'), json_extract(value, '$[2]'), \
json_extract(value, '$[3]'), json_extract(value, '$[4]'), ?4, json_extract(value, '$[5]'), \
CASE WHEN json_extract(value, '$[6]') THEN json_array(?3) ELSE '[]' END \
FROM json_each(?2) WHERE true \
ON CONFLICT (id) DO UPDATE SET occurrence_count = occurrence_count + excluded.occurrence_count, \
last_seen_at = excluded.last_seen_at, resolved_how = coalesce(excluded.resolved_how, resolved_how), \
sessions = CASE WHEN excluded.sessions = '[]' THEN sessions ELSE json_insert(sessions, '$[#]', ?3) END";

/// `?1` project, `?2` JSON array of modules.
pub const UPSERT_MODULES: &str =
    "INSERT INTO observer_module_session_counts (module, project_id, count) \
SELECT value, ?1, 1 FROM json_each(?2) WHERE true \
ON CONFLICT (module, project_id) DO UPDATE SET count = count + 1";

/// `?1` session, `?2` project, `?3` state, `?4` step, `?5` now.
pub const SAVE_CHECKPOINT: &str = "INSERT INTO observer_scratchpad_checkpoints \
(session_id, project_id, state, step, updated_at) VALUES (?1, ?2, ?3, ?4, ?5) \
ON CONFLICT (session_id) DO UPDATE SET state = excluded.state, step = excluded.step, updated_at = excluded.updated_at";

/// `?1` project: every checkpoint.
pub const LIST_CHECKPOINTS: &str = "SELECT session_id, state FROM observer_scratchpad_checkpoints \
WHERE project_id = ?1 ORDER BY updated_at, session_id";

/// `?1` session, `?2` project.
pub const DELETE_CHECKPOINT: &str =
    "DELETE FROM observer_scratchpad_checkpoints WHERE session_id = ?1 AND project_id = ?2";

/// `?1` vector, `?2` project, `?3` memory type, `?4` model, `?5` dims: the highest cosine
/// similarity between the vector and a live memory of that type (novelty check).
pub const NEAREST_OF_TYPE: &str = "SELECT max(1.0 - vector_distance_cos(e.embedding, ?1)) \
FROM memory_embeddings e JOIN memories m ON m.id = e.memory_id \
WHERE m.project_id = ?2 AND m.deprecated = 0 AND m.type = ?3 AND e.model_id = ?4 AND e.dims = ?5";

/// Sets the evidence (`?3`, JSON) of memory `?2`'s `created` history entry, written in the
/// same transaction.
pub const SET_CREATED_EVIDENCE: &str = "UPDATE memory_history SET after = ?3, \
reason = 'observed' WHERE project_id = ?1 AND memory_id = ?2 AND action = 'created' \
AND after IS NULL";

/// `?1` project, `?2` session: the id of the session's live record, if it left one (its
/// own, or another session's its record merged into, word for word).
pub const SESSION_RECORD: &str = "SELECT id FROM memories WHERE project_id = ?1 \
AND type = 'work_unit_outcome' AND deprecated = 0 \
AND (session_id = ?2 OR EXISTS (SELECT 1 FROM json_each(memories.provenance_session_ids) \
WHERE value = ?2)) \
AND EXISTS (SELECT 1 FROM json_each(memories.tags) WHERE value = 'session_record') \
ORDER BY session_id = ?2 DESC LIMIT 1";

/// Brings a session's record up to what the session has done since (`?1` id, `?2`
/// project, `?3` content, `?4` content key, `?5` files, `?6` modules, `?7` confidence,
/// `?8` now): a record is rewritten as its session goes on, not said again.
/// A record whose new wording another record already has keeps its old wording.
pub const UPDATE_RECORD: &str = "UPDATE memories SET content = ?3, content_key = ?4, \
related_files = ?5, related_modules = ?6, confidence = ?7, updated_at = ?8 \
WHERE id = ?1 AND project_id = ?2 AND deprecated = 0 \
AND NOT EXISTS (SELECT 1 FROM memories o WHERE o.project_id = ?2 AND o.type = memories.type \
AND o.content_key = ?4 AND o.id <> ?1)";
