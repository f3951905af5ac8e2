//! A person's operations on the package: browse, edit and judge memories, teach, import
//! instruction files, export and load, health, the trust level, sessions and their review,
//! the module map and a taught memory's preview. Each call decodes its input with the
//! core's validators, calls engram once and encodes the answer.

use engram::{
    EngramError, ImportRequest, MapRequest, MemoryFilter, MemoryUpdate, ProjectExport, Taught,
    TrustLevel,
};
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::errors::to_js_error;
use crate::types;
use crate::EngramHandle;

/// `value` as JSON text: `{}` when it is undefined or null.
fn json_or_empty(value: &JsValue, what: &str) -> Result<String, JsValue> {
    if value.is_undefined() || value.is_null() {
        Ok("{}".to_owned())
    } else {
        types::stringify(value, what)
    }
}

/// A JavaScript number as JSON (`4`, not `4.0`, for a whole one), anything else as `null`,
/// for the core's validator to accept or name.
fn number_json(value: &JsValue) -> String {
    match value.as_f64() {
        Some(n) if n.fract() == 0.0 && n.abs() < 1e15 => format!("{}", n as i64),
        Some(n) if n.is_finite() => format!("{n}"),
        _ => "null".to_owned(),
    }
}

/// A value decoded by the core's validator, its error as engram's typed error.
fn decoded<T>(result: Result<T, engram::ValidationError>) -> Result<T, JsValue> {
    result.map_err(|e| to_js_error(&EngramError::from(e)))
}

#[wasm_bindgen(js_class = Engram)]
impl EngramHandle {
    /// One page of memories by a filter, in an order, with a cursor for the next page.
    #[wasm_bindgen(unchecked_return_type = "Promise<ListPage>")]
    pub fn list(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ListRequest | undefined")] request: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let json = json_or_empty(&request, "request")?;
            types::answer(inner.list_json(&json).await)
        })
    }

    /// How many memories a filter matches.
    #[wasm_bindgen(unchecked_return_type = "Promise<number>")]
    pub fn count(
        &self,
        #[wasm_bindgen(unchecked_param_type = "MemoryFilter | undefined")] filter: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let json = json_or_empty(&filter, "filter")?;
            let filter = decoded(MemoryFilter::from_json(&json))?;
            types::answer(inner.count(&filter).await)
        })
    }

    /// Changes a memory's fields (re-validated, re-redacted, re-embedded); with
    /// `confirm: true` it is a correction and the memory becomes user-verified.
    #[wasm_bindgen(unchecked_return_type = "Promise<Memory>")]
    pub fn update(
        &self,
        id: String,
        #[wasm_bindgen(unchecked_param_type = "MemoryUpdate")] update: JsValue,
        confirm: Option<bool>,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let update = decoded(MemoryUpdate::from_json(&types::stringify(
                &update, "update",
            )?))?;
            types::answer(if confirm.unwrap_or(false) {
                inner.correct(&id, &update).await
            } else {
                inner.update(&id, &update).await
            })
        })
    }

    /// A person says the memory is right: user-verified, review cleared.
    #[wasm_bindgen(unchecked_return_type = "Promise<Memory>")]
    pub fn confirm(&self, id: String) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { types::answer(inner.confirm(&id).await) })
    }

    /// A person says the memory is wrong: retired, and counted against the observer signal
    /// that made it.
    #[wasm_bindgen(js_name = flagWrong, unchecked_return_type = "Promise<Memory>")]
    pub fn flag_wrong(&self, id: String, reason: Option<String>) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(
            async move { types::answer(inner.flag_wrong(&id, reason.as_deref()).await) },
        )
    }

    /// Pins (`true`) or unpins a memory: a pinned memory never decays and is never pruned.
    #[wasm_bindgen(unchecked_return_type = "Promise<Memory>")]
    pub fn pin(&self, id: String, pinned: bool) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { types::answer(inner.pin(&id, pinned).await) })
    }

    /// A person's own memory (source `user_taught`, confirmed).
    #[wasm_bindgen(unchecked_return_type = "Promise<Remembered>")]
    pub fn teach(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Taught")] taught: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let taught = decoded(Taught::from_json(&types::stringify(&taught, "taught")?))?;
            types::answer(inner.teach(taught).await)
        })
    }

    /// The context an agent would be given for a taught memory alone (validated and
    /// redacted as `teach` stores it; its chip names the id `new`). Nothing is written.
    #[wasm_bindgen(js_name = previewTeach, unchecked_return_type = "PackedContext")]
    pub fn preview_teach(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Taught")] taught: JsValue,
    ) -> Result<JsValue, JsValue> {
        let taught = decoded(Taught::from_json(&types::stringify(&taught, "taught")?))?;
        types::answer(self.inner.preview_teach(taught))
    }

    /// Deletes a memory for good (its history is kept).
    #[wasm_bindgen(unchecked_return_type = "Promise<void>")]
    pub fn purge(&self, id: String) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            inner.purge(&id).await.map_err(|e| to_js_error(&e))?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Imports instruction files (CLAUDE.md, AGENTS.md, Cursor rules…) given as
    /// `{ files: [{ path, text }] }`: new rules are stored, changed ones supersede, removed
    /// ones retire.
    #[wasm_bindgen(js_name = importInstructions, unchecked_return_type = "Promise<ImportReport>")]
    pub fn import_instructions(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ImportRequest")] request: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let request = decoded(ImportRequest::from_json(&types::stringify(
                &request, "request",
            )?))?;
            types::answer(inner.import_instructions(request).await)
        })
    }

    /// The project's memories whole (every field, history and origins), for `loadExport`.
    #[wasm_bindgen(js_name = exportJson, unchecked_return_type = "Promise<ProjectExport>")]
    pub fn export_json(&self) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { types::answer(inner.export().await) })
    }

    /// Stores an export in this (empty) project: the same memories, history and origins.
    #[wasm_bindgen(js_name = loadExport, unchecked_return_type = "Promise<ExportLoaded>")]
    pub fn load_export(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ProjectExport")] export: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let export = decoded(ProjectExport::from_json(&types::stringify(
                &export, "export",
            )?))?;
            types::answer(inner.load_export(&export).await)
        })
    }

    /// The live memories as Markdown, by module and type.
    #[wasm_bindgen(js_name = exportMarkdown, unchecked_return_type = "Promise<string>")]
    pub fn export_markdown(&self) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { types::answer(inner.export_markdown().await) })
    }

    /// The health score with its parts, counts by type and source, growth and coverage.
    #[wasm_bindgen(unchecked_return_type = "Promise<HealthReport>")]
    pub fn health(&self) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { types::answer(inner.health().await) })
    }

    /// The project's trust level: its number, name, injection threshold, how much of a
    /// session review to show, and whether a person set it.
    #[wasm_bindgen(js_name = trustLevel, unchecked_return_type = "Promise<TrustSetting>")]
    pub fn trust_level(&self) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { types::answer(inner.trust_level().await) })
    }

    /// Sets the project's trust level, 1 (cautious) to 4 (autonomous); every injection
    /// from then on uses its threshold.
    #[wasm_bindgen(js_name = setTrustLevel, unchecked_return_type = "Promise<TrustSetting>")]
    pub fn set_trust_level(
        &self,
        #[wasm_bindgen(unchecked_param_type = "1 | 2 | 3 | 4")] level: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let level = decoded(TrustLevel::from_json(&number_json(&level)))?;
            types::answer(inner.set_trust_level(level).await)
        })
    }

    /// The review of a session (the last finalized one when no id is given), sorted by the
    /// trust level; `null` when there is none.
    #[wasm_bindgen(
        js_name = sessionReview,
        unchecked_return_type = "Promise<SessionReview | null>"
    )]
    pub fn session_review(&self, session_id: Option<String>) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            types::answer(inner.session_review(session_id.as_deref()).await)
        })
    }

    /// The instruction files and lines that state memory `id` (empty for a memory no
    /// import wrote).
    #[wasm_bindgen(unchecked_return_type = "Promise<RuleOrigin[]>")]
    pub fn origins(&self, id: String) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { types::answer(inner.origins(&id).await) })
    }

    /// The sessions seen last (`limit`, 1 to 200, default 20), latest first, each with its
    /// outcome and how many memories it was shown and learned.
    #[wasm_bindgen(
        js_name = recentSessions,
        unchecked_return_type = "Promise<SessionSummary[]>"
    )]
    pub fn recent_sessions(&self, limit: Option<u32>) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            types::answer(
                inner
                    .recent_sessions(limit.unwrap_or(engram::DEFAULT_SESSIONS))
                    .await,
            )
        })
    }

    /// The module map: the files with the most memories (then the most opened), the
    /// observer's co-access pairs and the code's dependencies between them. Two round trips.
    #[wasm_bindgen(js_name = moduleMap, unchecked_return_type = "Promise<ModuleMap>")]
    pub fn module_map(
        &self,
        #[wasm_bindgen(unchecked_param_type = "MapRequest | undefined")] request: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let json = json_or_empty(&request, "request")?;
            let request = decoded(MapRequest::from_json(&json))?;
            types::answer(inner.module_map(&request).await)
        })
    }

    /// Deletes every memory of the project for good (their history stays); `confirm` must
    /// be the project's id. Resolves to how many memories went.
    #[wasm_bindgen(unchecked_return_type = "Promise<number>")]
    pub fn reset(&self, confirm: String) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move { types::answer(inner.reset_confirmed(&confirm).await) })
    }
}
