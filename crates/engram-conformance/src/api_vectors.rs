//! Replays `tests/vectors/api.json` against an engram instance.

use std::collections::HashMap;
use std::future::Future;

use engram::{
    CalibrationSample, Database, Engram, EngramError, PlannerRequest, SearchQuery, SessionStart,
    StepLimitRequest, StepRequest, ToolResultContext,
};
use serde_json::Value as Json;

use crate::{ensure, Failure};

/// How a runner is asked to open engram: for a case (a fresh project, no options of its
/// own) or for an `open` step (the case's project and the step's options).
#[derive(Debug, Clone)]
pub struct Opening {
    /// The project of the case.
    pub project_id: String,
    /// The step's options (a JSON object), laid over the host's own.
    pub options: serde_json::Map<String, Json>,
}

impl Opening {
    /// The open options: the host's `base` (its database fields, e.g. `{"local": true}` or
    /// `{"url": …}`), the project, then the step's options, parsed and validated as every
    /// host parses them.
    pub fn options(&self, base: Json) -> Result<engram::EngramOptions, EngramError> {
        let mut merged = match base {
            Json::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        merged.insert("projectId".into(), Json::from(self.project_id.as_str()));
        merged.extend(self.options.clone());
        Ok(engram::EngramOptions::from_json(
            &Json::Object(merged).to_string(),
        )?)
    }
}

/// Runs every case of the vectors file `vectors` (the text of `tests/vectors/api.json`).
///
/// `open` is called once per case with a fresh project id (`{prefix}-{case index}`) and must
/// return an engram instance for it, so cases never see each other's memories even on a
/// shared database; `open` steps call it again with their options. Returns the number of
/// steps checked.
pub async fn run_api_vectors<D, F, Fut>(
    vectors: &str,
    prefix: &str,
    mut open: F,
) -> Result<usize, Failure>
where
    D: Database,
    F: FnMut(Opening) -> Fut,
    Fut: Future<Output = Result<Engram<D>, EngramError>>,
{
    let file: Json = serde_json::from_str(vectors).map_err(|e| Failure {
        check: "vectors file".into(),
        detail: e.to_string(),
    })?;
    let cases = file["cases"].as_array().cloned().unwrap_or_default();
    ensure(!cases.is_empty(), "vectors file", || "no cases".into())?;
    let mut steps_run = 0;
    for (i, case) in cases.iter().enumerate() {
        let name = case["name"].as_str().unwrap_or("unnamed case");
        let project_id = format!("{prefix}-{i}");
        let engram = open(Opening {
            project_id: project_id.clone(),
            options: serde_json::Map::new(),
        })
        .await
        .map_err(|e| Failure {
            check: name.into(),
            detail: format!("cannot open engram: {e}"),
        })?;
        let mut ids: HashMap<String, String> = HashMap::new();
        for (j, step) in case["steps"].as_array().into_iter().flatten().enumerate() {
            let check = format!("{name} / step {j} ({})", step["op"].as_str().unwrap_or("?"));
            let outcome = if step["op"] == "open" {
                let options = step["options"].as_object().cloned().unwrap_or_default();
                let opened = open(Opening {
                    project_id: project_id.clone(),
                    options,
                })
                .await;
                open_step(opened.map(|_| ()), step)
            } else {
                run_step(&engram, step, &mut ids).await
            };
            outcome.map_err(|detail| Failure { check, detail })?;
            steps_run += 1;
        }
    }
    Ok(steps_run)
}

async fn run_step<D: Database>(
    engram: &Engram<D>,
    step: &Json,
    ids: &mut HashMap<String, String>,
) -> Result<(), String> {
    let expect = &step["expect"];
    match step["op"].as_str().unwrap_or_default() {
        "remember" | "rememberRaw" => {
            let json = if step["op"] == "rememberRaw" {
                step["input"].as_str().unwrap_or_default().to_owned()
            } else {
                let mut input = step["input"].clone();
                if let Some(rep) = step.get("contentRepeat") {
                    let text = rep["text"].as_str().unwrap_or_default();
                    let times = rep["times"].as_u64().unwrap_or(0) as usize;
                    input["content"] = Json::from(text.repeat(times));
                }
                input.to_string()
            };
            match (engram.remember_json(&json).await, step.get("expectError")) {
                (Ok(stored), None) => {
                    if let Some(name) = step["as"].as_str() {
                        ids.insert(name.to_owned(), stored.id.clone());
                    }
                    if let Some(kinds) = expect.get("redacted") {
                        let got = serde_json::to_value(&stored.redacted).unwrap_or_default();
                        check(&got == kinds, || format!("redacted {got} expected {kinds}"))?;
                    }
                    // A write repeating an earlier one's idempotency key answers with its id.
                    let first = expect["replayOf"].as_str().map(|name| ids.get(name));
                    check(
                        first.is_none_or(|id| stored.replayed && id == Some(&stored.id)),
                        || format!("expected a replay of {first:?}, got {stored:?}"),
                    )?;
                    check(first.is_some() || !stored.replayed, || {
                        format!("a new write was answered as a replay: {stored:?}")
                    })?;
                    check_placement(&stored, expect, ids)
                }
                (Ok(stored), Some(_)) => Err(format!("expected an error, stored {}", stored.id)),
                (Err(e), Some(want)) => expect_error(&e, want),
                (Err(e), None) => Err(format!("unexpected error: {e}")),
            }
        }
        "search" => {
            let result = match SearchQuery::from_json(&step["input"].to_string()) {
                Ok(query) => engram.search(&query).await,
                Err(e) => Err(e.into()),
            };
            let response = match (result, step.get("expectError")) {
                (Ok(r), None) => r,
                (Ok(r), Some(_)) => {
                    return Err(format!("expected an error, got {} hits", r.hits.len()))
                }
                (Err(e), Some(want)) => return expect_error(&e, want),
                (Err(e), None) => return Err(format!("unexpected error: {e}")),
            };
            let json = serde_json::to_value(&response).map_err(|e| e.to_string())?;
            check_search(&json, expect, ids)
        }
        "searchMany" => {
            let result = match SearchQuery::list_from_json(&step["input"].to_string()) {
                Ok(queries) => engram.search_many(&queries).await,
                Err(e) => Err(e.into()),
            };
            let responses = match (result, step.get("expectError")) {
                (Ok(r), None) => r,
                (Ok(r), Some(_)) => {
                    return Err(format!("expected an error, got {} answers", r.len()))
                }
                (Err(e), Some(want)) => return expect_error(&e, want),
                (Err(e), None) => return Err(format!("unexpected error: {e}")),
            };
            let each = expect["each"].as_array().cloned().unwrap_or_default();
            check(responses.len() == each.len(), || {
                format!("{} answers, expected {}", responses.len(), each.len())
            })?;
            for (i, (response, want)) in responses.iter().zip(&each).enumerate() {
                let json = serde_json::to_value(response).map_err(|e| e.to_string())?;
                check_search(&json, want, ids).map_err(|e| format!("answer {i}: {e}"))?;
            }
            Ok(())
        }
        "get" => {
            let id = step_id(step, ids)?;
            let memory = engram
                .get(&id)
                .await
                .map_err(|e| format!("get failed: {e}"))?;
            if expect["null"] == Json::Bool(true) {
                return check(memory.is_none(), || "expected no memory".into());
            }
            let memory = memory.ok_or("memory not found")?;
            let json = serde_json::to_value(&memory).map_err(|e| e.to_string())?;
            check_answer_excludes(&json, expect)?;
            if let Some(content) = expect["content"].as_str() {
                check(memory.content == content, || {
                    format!("content {:?}", memory.content)
                })?;
            }
            if let Some(part) = expect["contentContains"].as_str() {
                check(memory.content.contains(part), || {
                    format!("content {:?} lacks {part:?}", memory.content)
                })?;
            }
            if let Some(part) = expect["contentExcludes"].as_str() {
                check(!memory.content.contains(part), || {
                    format!("content {:?} has {part:?}", memory.content)
                })?;
            }
            for (key, want) in expect["fields"].as_object().into_iter().flatten() {
                check(&json[key] == want, || {
                    format!("field {key}: got {}, expected {want}", json[key])
                })?;
            }
            Ok(())
        }
        "forget" => {
            let id = step_id(step, ids)?;
            let forgotten = engram
                .forget(&id)
                .await
                .map_err(|e| format!("forget failed: {e}"))?;
            let want = expect["forgotten"].as_bool().unwrap_or(true);
            check(forgotten == want, || {
                format!("forgot {forgotten}, expected {want}")
            })
        }
        "agent" => agent_step(engram, step, ids).await,
        "lifecycle" => lifecycle_step(engram, step, ids).await,
        "person" => person_step(engram, step, ids).await,
        other => Err(format!("unknown op {other:?}")),
    }
}

/// A write's consolidation: `mergedInto` names the memory it merged into (the answer is
/// that memory's id, `merged`), `supersedes` the one it replaced; without them it must have
/// done neither.
fn check_placement(
    stored: &engram::Remembered,
    expect: &Json,
    ids: &HashMap<String, String>,
) -> Result<(), String> {
    let named = |key: &str| expect[key].as_str().map(|name| ids.get(name).cloned());
    match named("mergedInto") {
        Some(id) => check(stored.merged && Some(&stored.id) == id.as_ref(), || {
            format!("expected a merge into {id:?}, got {stored:?}")
        })?,
        None => check(!stored.merged, || {
            format!("an unexpected merge: {stored:?}")
        })?,
    }
    match named("supersedes") {
        Some(id) => check(stored.superseded == id, || {
            format!("expected it to supersede {id:?}, got {stored:?}")
        }),
        None => check(stored.superseded.is_none(), || {
            format!("an unexpected supersession: {stored:?}")
        }),
    }
}

/// A call's answer, or `None` once the error the step expects was checked.
fn answer_or_expected(
    result: Result<Json, EngramError>,
    step: &Json,
) -> Result<Option<Json>, String> {
    match (result, step.get("expectError")) {
        (Ok(answer), None) => Ok(Some(answer)),
        (Ok(answer), Some(_)) => Err(format!("expected an error, got {answer}")),
        (Err(e), Some(want)) => expect_error(&e, want).map(|()| None),
        (Err(e), None) => Err(format!("unexpected error: {e}")),
    }
}

/// The lifecycle calls: `getAny`, `history` and `restore` of a memory (`id` or `literalId`), `prune`
/// with a request, `flushUses`. `fields` are compared as JSON, `named` fields hold the id
/// of a named memory, `actions` is the history's actions in order.
async fn lifecycle_step<D: Database>(
    engram: &Engram<D>,
    step: &Json,
    ids: &HashMap<String, String>,
) -> Result<(), String> {
    let result: Result<Json, EngramError> = match step["call"].as_str().unwrap_or_default() {
        "getAny" => engram
            .get_any(&step_id(step, ids)?)
            .await
            .map(|m| serde_json::to_value(m).unwrap_or_default()),
        "history" => engram
            .history(&step_id(step, ids)?)
            .await
            .map(|h| serde_json::to_value(h).unwrap_or_default()),
        "restore" => engram
            .restore(&step_id(step, ids)?)
            .await
            .map(|m| serde_json::to_value(m).unwrap_or_default()),
        "prune" => engram
            .prune_json(&step["input"].to_string())
            .await
            .map(|r| serde_json::to_value(r).unwrap_or_default()),
        "flushUses" => engram
            .flush_uses()
            .await
            .map(|f| serde_json::to_value(f).unwrap_or_default()),
        other => return Err(format!("unknown lifecycle call {other:?}")),
    };
    let Some(answer) = answer_or_expected(result, step)? else {
        return Ok(());
    };
    check_call(&answer, &step["expect"], ids)
}

/// `value` as JSON.
fn to_json<T: serde::Serialize>(value: T) -> Json {
    serde_json::to_value(value).unwrap_or_default()
}

/// The id a person's step names: `literalId`, or the named memory's id (its first 8
/// characters with `short: true`, as the CLI prints it).
fn person_id(step: &Json, ids: &HashMap<String, String>) -> Result<String, String> {
    let id = step_id(step, ids)?;
    Ok(if step["short"] == Json::Bool(true) {
        id.chars().take(8).collect()
    } else {
        id
    })
}

/// A person's operations: `list` and `count` (`input` the request or filter), `update`
/// (`input` the update, `confirm`), `confirm`, `flagWrong` (`reason`), `pin` (`pinned`),
/// `teach` (`input`; `as` names the memory), `purge`, `importInstructions` (`input`, a
/// file's text given as `textRepeat: {text, times}` when large), `exportMarkdown`,
/// `health`, `trustLevel`, `setTrustLevel` (`level`), `sessionReview` (`session`),
/// `recentSessions` (`limit`), `moduleMap` (`input`), `previewTeach` (`input`), `origins`
/// and `reset` (`confirm`; the case's project id when absent).
async fn person_step<D: Database>(
    engram: &Engram<D>,
    step: &Json,
    ids: &mut HashMap<String, String>,
) -> Result<(), String> {
    let id = || person_id(step, ids);
    let input = match &step["input"] {
        Json::Null => "{}".to_owned(),
        given => given.to_string(),
    };
    let result: Result<Json, EngramError> = match step["call"].as_str().unwrap_or_default() {
        "list" => engram.list_json(&input).await.map(to_json),
        "count" => match engram::MemoryFilter::from_json(&input) {
            Ok(filter) => engram.count(&filter).await.map(to_json),
            Err(e) => Err(e.into()),
        },
        "update" => match engram::MemoryUpdate::from_json(&input) {
            Ok(update) if step["confirm"] == Json::Bool(true) => {
                engram.correct(&id()?, &update).await.map(to_json)
            }
            Ok(update) => engram.update(&id()?, &update).await.map(to_json),
            Err(e) => Err(e.into()),
        },
        "confirm" => engram.confirm(&id()?).await.map(to_json),
        "flagWrong" => engram
            .flag_wrong(&id()?, step["reason"].as_str())
            .await
            .map(to_json),
        "pin" => engram
            .pin(&id()?, step["pinned"] != Json::Bool(false))
            .await
            .map(to_json),
        "teach" => match engram::Taught::from_json(&input) {
            Ok(taught) => engram.teach(taught).await.map(to_json),
            Err(e) => Err(e.into()),
        },
        "purge" => engram.purge(&id()?).await.map(|()| Json::Null),
        "importInstructions" => match engram::ImportRequest::from_json(&import_input(step)) {
            Ok(request) => engram.import_instructions(request).await.map(to_json),
            Err(e) => Err(e.into()),
        },
        "exportMarkdown" => engram.export_markdown().await.map(to_json),
        "health" => engram.health().await.map(to_json),
        "trustLevel" => engram.trust_level().await.map(to_json),
        "setTrustLevel" => match engram::TrustLevel::from_json(&step["level"].to_string()) {
            Ok(level) => engram.set_trust_level(level).await.map(to_json),
            Err(e) => Err(e.into()),
        },
        "reset" => {
            let confirm = match step["confirm"].as_str() {
                Some(given) => given.to_owned(),
                None => engram.project_id().to_owned(),
            };
            engram.reset_confirmed(&confirm).await.map(to_json)
        }
        "sessionReview" => engram
            .session_review(step["session"].as_str())
            .await
            .map(to_json),
        "recentSessions" => {
            let limit = step["limit"]
                .as_u64()
                .map_or(engram::DEFAULT_SESSIONS, |n| {
                    u32::try_from(n).unwrap_or(u32::MAX)
                });
            engram.recent_sessions(limit).await.map(to_json)
        }
        "moduleMap" => match engram::MapRequest::from_json(&input) {
            Ok(request) => engram.module_map(&request).await.map(to_json),
            Err(e) => Err(e.into()),
        },
        "previewTeach" => match engram::Taught::from_json(&input) {
            Ok(taught) => engram.preview_teach(taught).map(to_json),
            Err(e) => Err(e.into()),
        },
        "origins" => engram.origins(&id()?).await.map(to_json),
        other => return Err(format!("unknown person call {other:?}")),
    };
    let Some(answer) = answer_or_expected(result, step)? else {
        return Ok(());
    };
    if let Some(name) = step["as"].as_str() {
        let id = answer["id"].as_str().ok_or("no id to name")?;
        ids.insert(name.to_owned(), id.to_owned());
    }
    check_call(&answer, &step["expect"], ids)
}

/// An import step's request: its `input`, with each file's `textRepeat` (`{text, times}`)
/// spelled out as its `text`.
pub fn import_input(step: &Json) -> String {
    let mut input = step["input"].clone();
    for file in input["files"].as_array_mut().into_iter().flatten() {
        if let Some(repeat) = file.get("textRepeat").cloned() {
            let text = repeat["text"].as_str().unwrap_or_default();
            let times = repeat["times"].as_u64().unwrap_or(0) as usize;
            file["text"] = Json::from(text.repeat(times));
            if let Some(map) = file.as_object_mut() {
                map.remove("textRepeat");
            }
        }
    }
    input.to_string()
}

/// Checks a lifecycle or person call's answer: `null`, `value` (the whole answer),
/// `fields` (compared as JSON), `named` (fields holding a named memory's id), `actions`
/// (a history's actions in order; `fields` keys may be dotted paths: `flags.pinned`, `files.0.rules`),
/// `memories` (a page's memories, by name, in order) and
/// `includes` (text the answer holds).
fn check_call(answer: &Json, expect: &Json, ids: &HashMap<String, String>) -> Result<(), String> {
    if expect["null"] == Json::Bool(true) {
        return check(answer.is_null(), || format!("expected null, got {answer}"));
    }
    for (key, want) in expect["fields"].as_object().into_iter().flatten() {
        let got = key
            .split('.')
            .fold(answer, |value, part| match part.parse::<usize>() {
                Ok(i) if value.is_array() => &value[i],
                _ => &value[part],
            });
        check(got == want, || {
            format!("field {key}: got {got}, expected {want}")
        })?;
    }
    for (key, name) in expect["named"].as_object().into_iter().flatten() {
        let id = ids.get(name.as_str().unwrap_or_default());
        check(answer[key].as_str() == id.map(String::as_str), || {
            format!(
                "field {key}: got {}, expected the id of {name}",
                answer[key]
            )
        })?;
    }
    if let Some(want) = expect["actions"].as_array() {
        let got: Vec<&Json> = answer
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| &e["action"])
            .collect();
        check(got.iter().copied().eq(want.iter()), || {
            format!("actions {got:?}, expected {want:?}")
        })?;
    }
    if let Some(want) = expect.get("value") {
        check(answer == want, || {
            format!("answered {answer}, expected {want}")
        })?;
    }
    if let Some(names) = expect["memories"].as_array() {
        let got: Vec<&str> = answer["memories"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| m["id"].as_str().unwrap_or_default())
            .collect();
        let want: Vec<&str> = names
            .iter()
            .map(|n| {
                ids.get(n.as_str().unwrap_or_default())
                    .map_or("?", String::as_str)
            })
            .collect();
        check(got == want, || {
            format!("memories {got:?}, expected {names:?}")
        })?;
    }
    for part in expect["includes"].as_array().into_iter().flatten() {
        let part = part.as_str().unwrap_or_default();
        let text = answer
            .as_str()
            .map_or_else(|| answer.to_string(), str::to_owned);
        check(text.contains(part), || format!("the answer lacks {part:?}"))?;
    }
    Ok(())
}

/// Checks one search answer (as JSON) against a step's expectations: `count`, `first`,
/// `contains`, `excludes`, `order` (memory names), `response` fields and `packedAtMost`.
/// `answerExcludes`: strings (secrets) that must appear nowhere in the answer's JSON.
fn check_answer_excludes(json: &Json, expect: &Json) -> Result<(), String> {
    let text = json.to_string();
    for part in expect["answerExcludes"].as_array().into_iter().flatten() {
        let part = part.as_str().unwrap_or_default();
        check(!text.contains(part), || {
            format!("the answer holds {part:?}")
        })?;
    }
    Ok(())
}

fn check_search(json: &Json, expect: &Json, ids: &HashMap<String, String>) -> Result<(), String> {
    check_answer_excludes(json, expect)?;
    let got: Vec<&str> = json["hits"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| h["memory"]["id"].as_str().unwrap_or_default())
        .collect();
    let named = |n: &Json| {
        ids.get(n.as_str().unwrap_or_default())
            .cloned()
            .unwrap_or_default()
    };
    if let Some(n) = expect["count"].as_u64() {
        check(got.len() as u64 == n, || {
            format!("{} hits, expected {n}", got.len())
        })?;
    }
    if let Some(first) = expect.get("first") {
        let id = named(first);
        check(got.first() == Some(&id.as_str()), || {
            format!("first hit {:?}, expected {first} ({id})", got.first())
        })?;
    }
    for name in expect["contains"].as_array().into_iter().flatten() {
        let id = named(name);
        check(got.contains(&id.as_str()), || {
            format!("{name} missing from {got:?}")
        })?;
    }
    for name in expect["excludes"].as_array().into_iter().flatten() {
        let id = named(name);
        check(!got.contains(&id.as_str()), || {
            format!("{name} should not be in {got:?}")
        })?;
    }
    if let Some(order) = expect["order"].as_array() {
        let want: Vec<String> = order.iter().map(named).collect();
        check(got == want, || format!("order {got:?}, expected {order:?}"))?;
    }
    for (key, want) in expect["response"].as_object().into_iter().flatten() {
        check(&json[key] == want, || {
            format!("response {key}: got {}, expected {want}", json[key])
        })?;
    }
    if let Some(most) = expect["packedAtMost"].as_u64() {
        let tokens = json["packed"]["tokens"].as_u64();
        check(tokens.is_some_and(|t| t <= most), || {
            format!("packed tokens {tokens:?}, expected at most {most}")
        })?;
    }
    Ok(())
}

fn step_id(step: &Json, ids: &HashMap<String, String>) -> Result<String, String> {
    if let Some(literal) = step["literalId"].as_str() {
        return Ok(literal.to_owned());
    }
    let name = step["id"].as_str().unwrap_or_default();
    ids.get(name)
        .cloned()
        .ok_or_else(|| format!("no memory bound to {name:?}"))
}

/// An `open` step: the options open, or fail as the step expects.
fn open_step(opened: Result<(), EngramError>, step: &Json) -> Result<(), String> {
    match (opened, step.get("expectError")) {
        (Ok(()), None) => Ok(()),
        (Ok(()), Some(want)) => Err(format!("expected {want}, opened")),
        (Err(e), Some(want)) => expect_error(&e, want),
        (Err(e), None) => Err(format!("unexpected error: {e}")),
    }
}

fn expect_error(error: &EngramError, want: &Json) -> Result<(), String> {
    let code = want["code"].as_str().unwrap_or_default();
    check(error.code() == code, || {
        format!("error code {} ({error}), expected {code}", error.code())
    })?;
    if let Some(field) = want["field"].as_str() {
        let first = error.violations().first().map(|v| v.field.as_str());
        check(first == Some(field), || {
            format!("error field {first:?} ({error}), expected {field}")
        })?;
    }
    Ok(())
}

fn check(condition: bool, detail: impl FnOnce() -> String) -> Result<(), String> {
    ensure(condition, "", detail).map_err(|f| f.detail)
}

/// `input` with the memory names in its `shownIds` replaced by their ids.
fn with_ids(input: &Json, ids: &HashMap<String, String>) -> Json {
    let mut input = input.clone();
    if let Some(shown) = input.get_mut("shownIds").and_then(Json::as_array_mut) {
        for name in shown.iter_mut() {
            if let Some(id) = name.as_str().and_then(|n| ids.get(n)) {
                *name = Json::from(id.as_str());
            }
        }
    }
    input
}

/// One agent-loop call (`call`: callTool, augment, step, sessionContext, getPrompt,
/// calibrate, stepLimit or plannerContext) and its expectations on the answer's JSON.
async fn agent_step<D: Database>(
    engram: &Engram<D>,
    step: &Json,
    ids: &mut HashMap<String, String>,
) -> Result<(), String> {
    let input = with_ids(&step["input"], ids);
    let text = input.to_string();
    let result: Result<Json, EngramError> = match step["call"].as_str().unwrap_or_default() {
        "callTool" => {
            let name = input["name"].as_str().unwrap_or_default();
            let arguments = match &input["arguments"] {
                Json::String(raw) => raw.clone(),
                other => other.to_string(),
            };
            engram
                .call_tool(name, &arguments)
                .await
                .map(|o| serde_json::to_value(o).unwrap_or_default())
        }
        "augment" => match ToolResultContext::from_json(&text) {
            Ok(context) => engram
                .augment_tool_result(&context)
                .await
                .map(|o| serde_json::to_value(o).unwrap_or_default()),
            Err(e) => Err(e.into()),
        },
        "step" => match StepRequest::from_json(&text) {
            Ok(request) => engram
                .step_injection(&request)
                .await
                .map(|o| serde_json::to_value(o).unwrap_or_default()),
            Err(e) => Err(e.into()),
        },
        "sessionContext" => match SessionStart::from_json(&text) {
            Ok(start) => engram
                .session_context(&start)
                .await
                .map(|o| serde_json::to_value(o).unwrap_or_default()),
            Err(e) => Err(e.into()),
        },
        "calibrate" => match CalibrationSample::from_json(&text) {
            Ok(sample) => engram
                .record_calibration(&sample)
                .await
                .map(|o| serde_json::to_value(o).unwrap_or_default()),
            Err(e) => Err(e.into()),
        },
        "stepLimit" => match StepLimitRequest::from_json(&text) {
            Ok(request) => engram
                .step_limit(&request)
                .await
                .map(|o| serde_json::to_value(o).unwrap_or_default()),
            Err(e) => Err(e.into()),
        },
        "plannerContext" => match PlannerRequest::from_json(&text) {
            Ok(request) => engram
                .planner_context(&request)
                .await
                .map(|o| serde_json::to_value(o).unwrap_or_default()),
            Err(e) => Err(e.into()),
        },
        "getPrompt" => engram
            .get_prompt(
                input["name"].as_str().unwrap_or_default(),
                &input["arguments"].to_string(),
            )
            .await
            .map(|o| serde_json::to_value(o).unwrap_or_default()),
        other => return Err(format!("unknown agent call {other:?}")),
    };
    let Some(answer) = answer_or_expected(result, step)? else {
        return Ok(());
    };
    if let Some(name) = step["as"].as_str() {
        let id = answer["data"]["id"]
            .as_str()
            .or_else(|| answer["memoryId"].as_str())
            .ok_or("no data.id or memoryId to bind")?;
        ids.insert(name.to_owned(), id.to_owned());
    }
    check_agent_answer(&answer, &step["expect"], ids)
}

fn check_agent_answer(
    answer: &Json,
    expect: &Json,
    ids: &HashMap<String, String>,
) -> Result<(), String> {
    if expect["null"] == Json::Bool(true) {
        return check(answer.is_null(), || format!("expected null, got {answer}"));
    }
    check(!answer.is_null(), || "expected an answer, got null".into())?;
    let named = |n: &Json| {
        ids.get(n.as_str().unwrap_or_default())
            .cloned()
            .unwrap_or_default()
    };
    let shown: Vec<&str> = answer["memoryIds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    for (key, want) in expect["fields"].as_object().into_iter().flatten() {
        check(&answer[key] == want, || {
            format!("field {key}: {}, expected {want}", answer[key])
        })?;
    }
    if let Some(kind) = expect.get("kind") {
        check(&answer["kind"] == kind, || {
            format!("kind {}, expected {kind}", answer["kind"])
        })?;
    }
    if let Some(order) = expect["memoryIds"].as_array() {
        let want: Vec<String> = order.iter().map(named).collect();
        check(shown == want, || {
            format!("memoryIds {shown:?}, expected {order:?}")
        })?;
    }
    for name in expect["includes"].as_array().into_iter().flatten() {
        let id = named(name);
        check(shown.contains(&id.as_str()), || {
            format!("{name} missing from {shown:?}")
        })?;
    }
    for name in expect["excludes"].as_array().into_iter().flatten() {
        let id = named(name);
        check(!shown.contains(&id.as_str()), || {
            format!("{name} should not be in {shown:?}")
        })?;
    }
    let text = answer["text"].as_str().unwrap_or_default();
    for part in expect["textContains"].as_array().into_iter().flatten() {
        let part = part.as_str().unwrap_or_default();
        check(text.contains(part), || {
            format!("text {text:?} lacks {part:?}")
        })?;
    }
    if expect["withinBudget"] == Json::Bool(true) {
        let (tokens, budget) = (answer["tokens"].as_u64(), answer["budget"].as_u64());
        check(tokens.is_some() && tokens <= budget, || {
            format!("tokens {tokens:?} over budget {budget:?}")
        })?;
    }
    Ok(())
}
