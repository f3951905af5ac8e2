//! The `engram:memory` component: the engram API exported through WIT, storing into a libSQL
//! server through the host's `wasi:http`.
//!
//! Component calls are synchronous, and so is `wasi:http` here (the transport blocks on the
//! response pollable), so each engram future completes without ever pending; [`run`] polls
//! it to completion and reports a would-block as an error instead of spinning.

mod http;

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use std::rc::Rc;

use ::engram::{
    Capabilities, DatabaseTarget, Engram, EngramError, EngramOptions, ErrorCode, Host, SearchQuery,
    SharedTransport,
};
use engram_embed::{Embedder, EngramEmbedder, MINILM_INT8_ID};
use engram_hrana::HranaClient;

/// The bindings wit-bindgen generates from `wit/engram.wit`: the component ABI needs
/// `unsafe` and its generated items carry the WIT's docs, not Rust doc comments.
#[allow(unsafe_code, missing_docs)]
mod bindings {
    wit_bindgen::generate!({
        world: "engram",
        path: "../../wit",
    });
}

use bindings::engram::memory::types::Violation;
use bindings::exports::engram::memory::api::{Error, IndexOptions, SourceFile};
use bindings::exports::engram::memory::api::{
    Guest, GuestEngram, GuestModel, GuestSession, ModelBorrow, SessionBorrow,
};

struct Component;

/// One open engram.
pub struct EngramResource {
    inner: Engram<HranaClient<SharedTransport>>,
}

/// One agent session under observation.
pub struct SessionResource {
    pad: std::cell::RefCell<::engram::observer::Scratchpad>,
}

/// One loaded embedding model, shareable by several engrams.
pub struct ModelResource {
    inner: Rc<EngramEmbedder>,
}

impl Guest for Component {
    type Engram = EngramResource;
    type Model = ModelResource;
    type Session = SessionResource;

    fn tool_definitions(format: String) -> Result<String, Error> {
        let format = ::engram::ToolFormat::parse(&format)
            .ok_or_else(|| invalid("format", "must be anthropic, openai or mcp"))?;
        to_json(&::engram::agent_loop::tools::render(format))
    }

    fn prompt_definitions() -> String {
        // Plain data; serializing it cannot fail.
        serde_json::to_string(&::engram::agent_loop::prompts::definitions())
            .unwrap_or_else(|_| "[]".to_owned())
    }

    fn parse_transcript(text: String) -> Result<String, Error> {
        let session = ::engram::observer::transcript::parse(&text)
            .map_err(|e| invalid("text", &e.to_string()))?;
        to_json(&session)
    }

    fn chunk_file(path: String, source: String, max_chars: Option<u32>) -> String {
        let mut options = engram_code::ChunkOptions::default();
        if let Some(max) = max_chars {
            options.max_chars = max.max(1) as usize;
        }
        let chunks = engram_code::chunk_file(&path, &source, &options);
        // Plain data; serializing it cannot fail.
        serde_json::to_string(&chunks).unwrap_or_else(|_| "[]".to_owned())
    }

    fn code_graph(files: Vec<SourceFile>) -> String {
        let graph = engram_code::graph_of_files(
            files.iter().map(|f| (f.path.as_str(), f.content.as_str())),
        );
        serde_json::to_string(&graph).unwrap_or_else(|_| "{}".to_owned())
    }
}

impl GuestModel for ModelResource {
    fn load(
        onnx: Vec<u8>,
        tokenizer: Vec<u8>,
    ) -> Result<bindings::exports::engram::memory::api::Model, Error> {
        let embedder = Embedder::load(&onnx, &tokenizer, MINILM_INT8_ID).map_err(|e| Error {
            code: ErrorCode::ModelError.as_str().into(),
            message: e.to_string(),
            violations: Vec::new(),
        })?;
        Ok(bindings::exports::engram::memory::api::Model::new(
            ModelResource {
                inner: Rc::new(EngramEmbedder::new(embedder)),
            },
        ))
    }

    fn load_dir(path: String) -> Result<bindings::exports::engram::memory::api::Model, Error> {
        let dir = std::path::Path::new(&path);
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| Error {
                code: ErrorCode::ModelError.as_str().into(),
                message: format!("cannot read {}: {e}", dir.join(name).display()),
                violations: Vec::new(),
            })
        };
        Self::load(read("model.onnx")?, read("tokenizer.json")?)
    }

    fn id(&self) -> String {
        ::engram::Embed::model_id(self.inner.as_ref()).to_owned()
    }

    fn dims(&self) -> u32 {
        ::engram::Embed::dims(self.inner.as_ref()) as u32
    }

    fn embed(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, Error> {
        texts
            .iter()
            .map(|t| {
                self.inner.embed_one(t).map_err(|message| Error {
                    code: ErrorCode::ModelError.as_str().into(),
                    message,
                    violations: Vec::new(),
                })
            })
            .collect()
    }
}

/// Waits on a `wasi:clocks` timer. Component calls are synchronous, so the wait blocks
/// and the future is ready when polled.
struct WasiSleep;

impl ::engram::Sleep for WasiSleep {
    fn sleep(&self, millis: u64) -> ::engram::SleepFuture<'_> {
        let nanos = millis.saturating_mul(1_000_000);
        wasip2::clocks::monotonic_clock::subscribe_duration(nanos).block();
        Box::pin(std::future::ready(()))
    }
}

/// Where a host preopens the project's files for the file probe.
const PROJECT_DIR: &str = "/project";

/// Opens engram as the options JSON says; the database, remote providers and rerank
/// services are reached through `wasi:http`.
fn open_engram(
    options_json: &str,
    model: Option<Rc<EngramEmbedder>>,
) -> Result<bindings::exports::engram::memory::api::Engram, Error> {
    let options = EngramOptions::from_json(options_json).map_err(|e| convert(&e.into()))?;
    let http = SharedTransport::new(http::WasiHttpTransport);
    let db = match options.database() {
        DatabaseTarget::Remote {
            url,
            auth_token,
            max_request_bytes,
        } => {
            let client = HranaClient::new(http.clone(), &url, auth_token);
            match max_request_bytes {
                Some(bytes) => {
                    client.with_max_request_bytes(usize::try_from(bytes).unwrap_or(usize::MAX))
                }
                None => client,
            }
        }
        DatabaseTarget::Local { .. } => {
            return Err(convert(&EngramError::invalid(
                "local",
                "the component stores into a libSQL server; give url",
            )))
        }
    };
    // The native clock and randomness work under WASI; the wait is a WASI timer (there are
    // no threads to time it with).
    let mut host = Host::new(::engram::SystemClock, ::engram::OsEntropy).with_sleep(WasiSleep);
    // A host that preopens the project at `/project` lets engram see which cited files
    // are gone.
    if std::fs::metadata(PROJECT_DIR).is_ok_and(|m| m.is_dir()) {
        host = host.with_file_probe(::engram::DirectoryProbe::new(PROJECT_DIR));
    }
    let mut capabilities = Capabilities::new(host).with_http(http);
    if let Some(model) = model {
        capabilities = capabilities.with_model(Box::new(model));
    }
    let inner = run(Engram::open_with(db, &options, capabilities))?;
    Ok(bindings::exports::engram::memory::api::Engram::new(
        EngramResource { inner },
    ))
}

impl GuestEngram for EngramResource {
    fn open(options_json: String) -> Result<bindings::exports::engram::memory::api::Engram, Error> {
        open_engram(&options_json, None)
    }

    fn open_with_model(
        options_json: String,
        model: ModelBorrow<'_>,
    ) -> Result<bindings::exports::engram::memory::api::Engram, Error> {
        let model = model.get::<ModelResource>().inner.clone();
        open_engram(&options_json, Some(model))
    }

    fn embed_pending(&self, batch: u32) -> Result<String, Error> {
        let progress = run(self.inner.embed_pending(batch))?;
        to_json(&progress)
    }

    fn write_status(&self) -> Result<String, Error> {
        to_json(&self.inner.write_status())
    }

    fn flush_writes(&self) -> Result<String, Error> {
        let status = run(async { Ok(self.inner.flush_writes().await) })?;
        to_json(&status)
    }

    fn load_resident_vectors(&self) -> Result<u64, Error> {
        run(self.inner.load_resident_vectors()).map(|count| count as u64)
    }

    fn load_resident_keywords(&self) -> Result<u64, Error> {
        run(self.inner.load_resident_keywords()).map(|count| count as u64)
    }

    fn remember(&self, memory_json: String) -> Result<String, Error> {
        let stored = run(self.inner.remember_json(&memory_json))?;
        to_json(&stored)
    }

    fn search(&self, query_json: String) -> Result<String, Error> {
        let query = SearchQuery::from_json(&query_json).map_err(|e| convert(&e.into()))?;
        let response = run(self.inner.search(&query))?;
        to_json(&response)
    }

    fn search_many(&self, queries_json: String) -> Result<String, Error> {
        let queries = SearchQuery::list_from_json(&queries_json).map_err(|e| convert(&e.into()))?;
        to_json(&run(self.inner.search_many(&queries))?)
    }

    fn call_tool(&self, name: String, arguments_json: String) -> Result<String, Error> {
        to_json(&run(self.inner.call_tool(&name, &arguments_json))?)
    }

    fn get_prompt(&self, name: String, arguments_json: String) -> Result<String, Error> {
        to_json(&run(self.inner.get_prompt(&name, &arguments_json))?)
    }

    fn session_context(&self, start_json: String) -> Result<String, Error> {
        let start =
            ::engram::SessionStart::from_json(&start_json).map_err(|e| convert(&e.into()))?;
        to_json(&run(self.inner.session_context(&start))?)
    }

    fn augment_tool_result(&self, context_json: String) -> Result<Option<String>, Error> {
        let context = ::engram::ToolResultContext::from_json(&context_json)
            .map_err(|e| convert(&e.into()))?;
        run(self.inner.augment_tool_result(&context))?
            .map(|found| to_json(&found))
            .transpose()
    }

    fn step_injection(&self, request_json: String) -> Result<Option<String>, Error> {
        let request =
            ::engram::StepRequest::from_json(&request_json).map_err(|e| convert(&e.into()))?;
        run(self.inner.step_injection(&request))?
            .map(|found| to_json(&found))
            .transpose()
    }

    fn record_calibration(&self, sample_json: String) -> Result<String, Error> {
        let sample =
            ::engram::CalibrationSample::from_json(&sample_json).map_err(|e| convert(&e.into()))?;
        to_json(&run(self.inner.record_calibration(&sample))?)
    }

    fn step_limit(&self, request_json: String) -> Result<String, Error> {
        let request =
            ::engram::StepLimitRequest::from_json(&request_json).map_err(|e| convert(&e.into()))?;
        to_json(&run(self.inner.step_limit(&request))?)
    }

    fn planner_context(&self, request_json: String) -> Result<String, Error> {
        let request =
            ::engram::PlannerRequest::from_json(&request_json).map_err(|e| convert(&e.into()))?;
        to_json(&run(self.inner.planner_context(&request))?)
    }

    fn get(&self, id: String) -> Result<Option<String>, Error> {
        match run(self.inner.get(&id))? {
            Some(memory) => to_json(&memory).map(Some),
            None => Ok(None),
        }
    }

    fn index_files(&self, files: Vec<SourceFile>, options: IndexOptions) -> Result<String, Error> {
        let files: Vec<::engram::SourceFile> = files
            .into_iter()
            .map(|f| ::engram::SourceFile::new(f.path, f.content))
            .collect();
        let options = ::engram::IndexOptions {
            complete: options.complete,
            removed: options.removed,
        };
        let report = run(self.inner.index_files(&files, &options))?;
        to_json(&report)
    }

    fn analyze_impact(&self, target: String, max_depth: u32) -> Result<String, Error> {
        to_json(&run(self.inner.analyze_impact(&target, max_depth))?)
    }

    fn dependencies(&self, file: String, max_depth: u32) -> Result<String, Error> {
        let (nodes, files) = run(self.inner.dependencies(&file, max_depth))?;
        to_json(&serde_json::json!({ "nodes": nodes, "files": files }))
    }

    fn neighbours(&self, files: Vec<String>) -> Result<String, Error> {
        to_json(&run(self.inner.neighbours(&files))?)
    }

    fn mark_stale(&self, paths: Vec<String>) -> Result<u64, Error> {
        run(self.inner.mark_stale(&paths))
    }

    fn forget(&self, id: String) -> Result<bool, Error> {
        run(self.inner.forget(&id))
    }

    fn get_any(&self, id: String) -> Result<Option<String>, Error> {
        match run(self.inner.get_any(&id))? {
            Some(memory) => to_json(&memory).map(Some),
            None => Ok(None),
        }
    }

    fn history(&self, id: String) -> Result<String, Error> {
        to_json(&run(self.inner.history(&id))?)
    }

    fn restore(&self, id: String) -> Result<String, Error> {
        to_json(&run(self.inner.restore(&id))?)
    }

    fn list_memories(&self, request_json: String) -> Result<String, Error> {
        to_json(&run(self.inner.list_json(&request_json))?)
    }

    fn count_memories(&self, filter_json: String) -> Result<u64, Error> {
        let filter =
            engram::MemoryFilter::from_json(&filter_json).map_err(|e| convert(&e.into()))?;
        run(self.inner.count(&filter))
    }

    fn update(&self, id: String, update_json: String, confirm: bool) -> Result<String, Error> {
        let update =
            engram::MemoryUpdate::from_json(&update_json).map_err(|e| convert(&e.into()))?;
        let memory = if confirm {
            run(self.inner.correct(&id, &update))?
        } else {
            run(self.inner.update(&id, &update))?
        };
        to_json(&memory)
    }

    fn confirm(&self, id: String) -> Result<String, Error> {
        to_json(&run(self.inner.confirm(&id))?)
    }

    fn flag_wrong(&self, id: String, reason: Option<String>) -> Result<String, Error> {
        to_json(&run(self.inner.flag_wrong(&id, reason.as_deref()))?)
    }

    fn pin(&self, id: String, pinned: bool) -> Result<String, Error> {
        to_json(&run(self.inner.pin(&id, pinned))?)
    }

    fn teach(&self, taught_json: String) -> Result<String, Error> {
        let taught = engram::Taught::from_json(&taught_json).map_err(|e| convert(&e.into()))?;
        to_json(&run(self.inner.teach(taught))?)
    }

    fn purge(&self, id: String) -> Result<(), Error> {
        run(self.inner.purge(&id))
    }

    fn import_instructions(&self, request_json: String) -> Result<String, Error> {
        let request =
            engram::ImportRequest::from_json(&request_json).map_err(|e| convert(&e.into()))?;
        to_json(&run(self.inner.import_instructions(request))?)
    }

    fn export_json(&self) -> Result<String, Error> {
        to_json(&run(self.inner.export())?)
    }

    fn load_export(&self, export_json: String) -> Result<String, Error> {
        let export =
            engram::ProjectExport::from_json(&export_json).map_err(|e| convert(&e.into()))?;
        to_json(&run(self.inner.load_export(&export))?)
    }

    fn export_markdown(&self) -> Result<String, Error> {
        run(self.inner.export_markdown())
    }

    fn health(&self) -> Result<String, Error> {
        to_json(&run(self.inner.health())?)
    }

    fn reset(&self, confirm: String) -> Result<u64, Error> {
        run(self.inner.reset_confirmed(&confirm))
    }

    fn trust_level(&self) -> Result<String, Error> {
        to_json(&run(self.inner.trust_level())?)
    }

    fn set_trust_level(&self, level: u8) -> Result<String, Error> {
        let level =
            engram::TrustLevel::from_number(level.into()).map_err(|e| convert(&e.into()))?;
        to_json(&run(self.inner.set_trust_level(level))?)
    }

    fn session_review(&self, session_id: Option<String>) -> Result<Option<String>, Error> {
        match run(self.inner.session_review(session_id.as_deref()))? {
            Some(review) => to_json(&review).map(Some),
            None => Ok(None),
        }
    }

    fn recent_sessions(&self, limit: Option<u32>) -> Result<String, Error> {
        to_json(&run(self
            .inner
            .recent_sessions(limit.unwrap_or(engram::DEFAULT_SESSIONS)))?)
    }

    fn module_map(&self, request_json: String) -> Result<String, Error> {
        let request =
            engram::MapRequest::from_json(&request_json).map_err(|e| convert(&e.into()))?;
        to_json(&run(self.inner.module_map(&request))?)
    }

    fn preview_teach(&self, taught_json: String) -> Result<String, Error> {
        let taught = engram::Taught::from_json(&taught_json).map_err(|e| convert(&e.into()))?;
        to_json(&self.inner.preview_teach(taught).map_err(|e| convert(&e))?)
    }

    fn origins(&self, id: String) -> Result<String, Error> {
        to_json(&run(self.inner.origins(&id))?)
    }

    fn prune(&self, request_json: String) -> Result<String, Error> {
        to_json(&run(self.inner.prune_json(&request_json))?)
    }

    fn flush_uses(&self) -> Result<String, Error> {
        to_json(&run(self.inner.flush_uses())?)
    }

    fn checkpoint_session(&self, session: SessionBorrow<'_>) -> Result<(), Error> {
        let pad = session.get::<SessionResource>().pad.borrow().clone();
        run(self.inner.checkpoint_session(&pad))
    }

    fn finalize_session(
        &self,
        session: SessionBorrow<'_>,
        outcome: String,
    ) -> Result<String, Error> {
        let outcome: ::engram::observer::Outcome =
            serde_json::from_value(serde_json::Value::String(outcome.clone())).map_err(|_| {
                invalid(
                    "outcome",
                    &format!("unknown outcome {outcome:?}; success, failure or cancelled"),
                )
            })?;
        let pad = session.get::<SessionResource>().pad.borrow().clone();
        to_json(&run(self.inner.finalize_session(&pad, outcome))?)
    }

    fn recover_sessions(&self) -> Result<String, Error> {
        to_json(&run(self.inner.recover_sessions())?)
    }
}

impl GuestSession for SessionResource {
    fn start(
        session_id: String,
        kind: Option<String>,
        roots: Vec<String>,
    ) -> Result<bindings::exports::engram::memory::api::Session, Error> {
        use ::engram::observer::{PathNormalizer, Scratchpad, SessionKind};
        let kind = match kind {
            None => SessionKind::Build,
            Some(kind) => serde_json::from_value(serde_json::Value::String(kind.clone()))
                .map_err(|_| invalid("kind", &format!("unknown session kind {kind:?}")))?,
        };
        if session_id.trim().is_empty() {
            return Err(invalid("session-id", "must not be empty"));
        }
        let pad = Scratchpad::new(session_id, kind, PathNormalizer::new(roots));
        Ok(bindings::exports::engram::memory::api::Session::new(
            SessionResource {
                pad: std::cell::RefCell::new(pad),
            },
        ))
    }

    fn observe(&self, event_json: String) -> Result<(), Error> {
        let event: ::engram::observer::Event = serde_json::from_str(&event_json)
            .map_err(|e| invalid("event", &format!("invalid event: {e}")))?;
        self.pad.borrow_mut().observe(&event);
        Ok(())
    }

    fn observe_many(&self, events_json: String) -> Result<u32, Error> {
        let events: Vec<::engram::observer::Event> = serde_json::from_str(&events_json)
            .map_err(|e| invalid("events", &format!("invalid events: {e}")))?;
        let mut pad = self.pad.borrow_mut();
        for event in &events {
            pad.observe(event);
        }
        Ok(u32::try_from(events.len()).unwrap_or(u32::MAX))
    }

    fn triggers(&self) -> String {
        serde_json::to_string(&self.pad.borrow().triggers).unwrap_or_else(|_| "[]".into())
    }

    fn hot_files(&self, n: u32) -> String {
        serde_json::to_string(&self.pad.borrow().hot_files(n as usize))
            .unwrap_or_else(|_| "[]".into())
    }
}

fn invalid(field: &str, message: &str) -> Error {
    Error {
        code: ErrorCode::InvalidInput.as_str().into(),
        message: message.to_owned(),
        violations: vec![Violation {
            field: field.to_owned(),
            problem: message.to_owned(),
        }],
    }
}

/// Drives a future that never pends (all I/O below it blocks) to completion.
fn run<T>(future: impl Future<Output = Result<T, EngramError>>) -> Result<T, Error> {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    match future.as_mut().poll(&mut cx) {
        Poll::Ready(result) => result.map_err(|e| convert(&e)),
        Poll::Pending => Err(Error {
            code: ErrorCode::Internal.as_str().into(),
            message: "internal: an operation tried to suspend inside a synchronous component call"
                .into(),
            violations: Vec::new(),
        }),
    }
}

fn convert(error: &EngramError) -> Error {
    Error {
        code: error.code().as_str().to_owned(),
        message: error.to_string(),
        violations: error
            .violations()
            .iter()
            .map(|v| Violation {
                field: v.field.clone(),
                problem: v.problem.clone(),
            })
            .collect(),
    }
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, Error> {
    serde_json::to_string(value).map_err(|e| Error {
        code: ErrorCode::Internal.as_str().into(),
        message: format!("cannot encode result: {e}"),
        violations: Vec::new(),
    })
}

/// The exports' ABI glue, which needs `unsafe`.
#[allow(unsafe_code)]
mod export {
    use super::{bindings, Component};
    bindings::export!(Component with_types_in bindings);
}
