//! What one session added to the project's statistics, kept with the session so that
//! finalizing it again — Claude Code ends every turn, and sessions resume — adds only what
//! is new, and its earlier finalize is not counted as another session's evidence.

use std::collections::{BTreeMap, BTreeSet};

use engram_observer::fingerprint::stable_hash;
use engram_observer::{Outcome, Prior, Scratchpad};
use engram_store::{Statement, Value};
use serde::{Deserialize, Serialize};

use super::{json, sql};

/// A session's share of the statistics: what it observed, how often, as of its last
/// finalize. Every count only grows as the session goes on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Contribution {
    /// Observation key → occurrences.
    observed: BTreeMap<String, u32>,
    /// File → reads and edits.
    files: BTreeMap<String, u32>,
    /// `file_a\u{1f}file_b` (a < b) → times seen together.
    pairs: BTreeMap<String, u32>,
    /// Error pattern id → occurrences.
    errors: BTreeMap<String, u32>,
    /// Modules worked in.
    modules: BTreeSet<String>,
}

/// One error pattern as the session saw it.
struct ErrorSeen {
    id: String,
    subject: String,
    signature: String,
    line: String,
    count: u32,
    resolved: Option<String>,
}

/// One co-access pair as the session saw it: `a` < `b`, `a_first` counts `a` coming first.
struct PairSeen {
    a: String,
    b: String,
    count: u32,
    a_first: u32,
}

impl Contribution {
    /// Reads a stored contribution; `None` for a session finalized before contributions
    /// were kept (or an unreadable one): such a session is not finalized again.
    pub(super) fn decode(text: Option<&str>) -> Option<Contribution> {
        serde_json::from_str(text?).ok()
    }

    /// Takes this session's earlier share out of the prior statistics, so that its own
    /// evidence is not counted as another session's.
    pub(super) fn remove_from(&self, prior: &mut Prior) {
        for (key, count) in &self.observed {
            if let Some(sessions) = prior.sessions.get_mut(key) {
                *sessions = sessions.saturating_sub(1);
            }
            if let Some(occurrences) = prior.occurrences.get_mut(key) {
                *occurrences = occurrences.saturating_sub(*count);
            }
        }
        for module in &self.modules {
            if let Some(sessions) = prior.module_sessions.get_mut(module) {
                *sessions = sessions.saturating_sub(1);
            }
        }
    }
}

/// The statements that record the session and fold what it added since `previous` (all of
/// it on a first finalize) into the statistics. `project` is the project id.
pub(super) struct Statistics<'a> {
    pub project: &'a str,
    pub pad: &'a Scratchpad,
    pub outcome: Outcome,
    pub observed: &'a [(String, u32)],
    pub modules: &'a [String],
    pub promoted: usize,
    pub now: String,
    pub previous: Option<&'a Contribution>,
}

impl Statistics<'_> {
    pub(super) fn statements(&self) -> Vec<Statement> {
        let empty = Contribution::default();
        let previous = self.previous.unwrap_or(&empty);
        let pairs = pairs_of(self.pad);
        let errors = errors_of(self.pad, self.project);
        let mut now = previous.clone();
        let grow = |map: &mut BTreeMap<String, u32>, key: &str, count: u32| -> (u32, u32) {
            let before = map.get(key).copied();
            let after = before.unwrap_or(0).max(count);
            map.insert(key.to_owned(), after);
            (after - before.unwrap_or(0), u32::from(before.is_none()))
        };

        let mut signals = Vec::new();
        for (key, count) in self.observed {
            let (more, new) = grow(&mut now.observed, key, *count);
            if more > 0 || new > 0 {
                signals.push(serde_json::json!([key, new, more]));
            }
        }
        let mut files = Vec::new();
        for file in self.pad.files.iter().filter(|f| !f.deleted) {
            let (more, new) = grow(&mut now.files, &file.path, file.reads + file.edits);
            if more > 0 || new > 0 {
                files.push(serde_json::json!([file.path, more, new]));
            }
        }
        let mut pair_rows = Vec::new();
        for pair in &pairs {
            let key = format!("{}\u{1f}{}", pair.a, pair.b);
            let (more, new) = grow(&mut now.pairs, &key, pair.count);
            if more > 0 || new > 0 {
                pair_rows.push(serde_json::json!([
                    pair.a,
                    pair.b,
                    more,
                    pair.a_first,
                    new,
                    pair.count
                ]));
            }
        }
        let mut error_rows = Vec::new();
        for error in &errors {
            let (more, new) = grow(&mut now.errors, &error.id, error.count);
            if more > 0 || new > 0 {
                error_rows.push(serde_json::json!([
                    error.id,
                    error.subject,
                    error.signature,
                    error.line,
                    more,
                    error.resolved,
                    new
                ]));
            }
        }
        let new_modules: Vec<&String> = self
            .modules
            .iter()
            .filter(|m| now.modules.insert((*m).clone()))
            .collect();

        let project = Value::from(self.project);
        let session = Value::from(self.pad.session_id.as_str());
        let now_text = Value::from(self.now.as_str());
        let contribution = serde_json::to_string(&now).unwrap_or_else(|_| "{}".to_owned());
        let statement = |sql: &str, params: Vec<Value>| Statement::with_params(sql, params);
        vec![
            statement(
                sql::UPSERT_SESSION,
                vec![
                    project.clone(),
                    session.clone(),
                    Value::from(self.outcome.as_str()),
                    Value::Integer(i64::from(self.pad.step)),
                    Value::Integer(i64::try_from(self.pad.events).unwrap_or(i64::MAX)),
                    Value::Integer(self.promoted as i64),
                    now_text.clone(),
                ],
            ),
            statement(
                sql::UPSERT_CONTRIBUTION,
                vec![project.clone(), session.clone(), Value::from(contribution)],
            ),
            statement(
                sql::UPSERT_SIGNAL_COUNTS,
                vec![
                    project.clone(),
                    json(&signals),
                    session.clone(),
                    now_text.clone(),
                ],
            ),
            statement(
                sql::UPSERT_FILE_NODES,
                vec![project.clone(), json(&files), now_text.clone()],
            ),
            statement(
                sql::UPSERT_CO_ACCESS,
                vec![project.clone(), json(&pair_rows), now_text.clone()],
            ),
            statement(
                sql::UPSERT_ERRORS,
                vec![
                    project.clone(),
                    json(&error_rows),
                    session.clone(),
                    now_text,
                ],
            ),
            statement(
                sql::UPSERT_MODULES,
                vec![project.clone(), json(&new_modules)],
            ),
            statement(sql::DELETE_CHECKPOINT, vec![session, project]),
        ]
    }
}

/// The session's most frequent co-access pairs, each with `a` < `b`.
fn pairs_of(pad: &Scratchpad) -> Vec<PairSeen> {
    let mut pairs: Vec<PairSeen> = pad
        .pairs
        .iter()
        .filter_map(|(&key, p)| {
            let a = pad.file((key >> 32) as u32)?;
            let b = pad.file((key & 0xffff_ffff) as u32)?;
            Some(if a.path <= b.path {
                PairSeen {
                    a: a.path.clone(),
                    b: b.path.clone(),
                    count: p.count,
                    a_first: p.low_first,
                }
            } else {
                PairSeen {
                    a: b.path.clone(),
                    b: a.path.clone(),
                    count: p.count,
                    a_first: p.count - p.low_first,
                }
            })
        })
        .collect();
    pairs.sort_by(|x, y| {
        y.count
            .cmp(&x.count)
            .then(x.a.cmp(&y.a))
            .then(x.b.cmp(&y.b))
    });
    pairs.truncate(engram_observer::finalize::TOP_PAIRS * 5);
    pairs
}

/// The session's error patterns, each with how it was resolved, if it was.
fn errors_of(pad: &Scratchpad, project: &str) -> Vec<ErrorSeen> {
    pad.errors
        .values()
        .filter(|e| !e.signature.is_empty())
        .map(|e| {
            let resolved = e.resolved_step.map(|step| {
                let files: Vec<&str> = e
                    .fixed_by
                    .iter()
                    .filter_map(|&f| pad.file(f))
                    .map(|f| f.path.as_str())
                    .collect();
                if files.is_empty() {
                    format!("passed at step {step}")
                } else {
                    format!("passed at step {step} after editing {}", files.join(", "))
                }
            });
            ErrorSeen {
                id: stable_hash(&format!("{project}|{}|{}", e.subject, e.signature)),
                subject: e.subject.clone(),
                signature: e.signature.clone(),
                line: e.line.clone(),
                count: e.count,
                resolved,
            }
        })
        .collect()
}
