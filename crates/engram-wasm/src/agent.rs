//! Agent-loop integration from JavaScript: engram's tools for an agent SDK, the
//! session start's context, tool-result augmentation, the step-injection decider, and
//! planning (calibrations, the step limit, the planner's context).

use std::future::Future;

use engram::agent_loop::tools::{render, ToolFormat};
use engram::{
    CalibrationSample, EngramError, PlannerRequest, SessionStart, StepLimitRequest, StepRequest,
    ToolResultContext, ValidationError,
};
use js_sys::Promise;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::errors::{js_error, to_js_error};
use crate::{types, EngramHandle};
use engram::ErrorCode;

/// engram's tools (`search_memory`, `record_memory`, `analyze_impact`) with JSON schemas,
/// in the shape `format` names: `"anthropic"` (default: `{name, description,
/// input_schema}`), `"openai"` (`{type: "function", function: {…, parameters}}`) or
/// `"mcp"` (`{name, description, inputSchema}`).
#[wasm_bindgen(js_name = toolDefinitions, unchecked_return_type = "ToolDefinition[]")]
pub fn tool_definitions(
    #[wasm_bindgen(unchecked_param_type = "ToolFormat | undefined")] format: JsValue,
) -> Result<JsValue, JsValue> {
    let format = match format.as_string() {
        None if format.is_undefined() || format.is_null() => ToolFormat::default(),
        Some(name) => ToolFormat::parse(&name).ok_or_else(|| {
            js_error(
                ErrorCode::InvalidInput,
                &format!("format: unknown {name:?}; one of anthropic, openai, mcp"),
                Some(("format", "must be anthropic, openai or mcp")),
            )
        })?,
        None => {
            return Err(js_error(
                ErrorCode::InvalidInput,
                "format must be a string",
                Some(("format", "must be a string")),
            ))
        }
    };
    types::to_js(&render(format))
}

/// What a server offering engram's tools tells the model about engram when a client
/// connects (MCP's `instructions`).
#[wasm_bindgen(js_name = serverInstructions)]
pub fn server_instructions() -> String {
    engram::agent_loop::tools::SERVER_INSTRUCTIONS.to_owned()
}

/// engram's prompts (`session_context`) as a Model Context Protocol `prompts/list` lists
/// them: `{name, title, description, arguments: [{name, description, required}]}`.
#[wasm_bindgen(js_name = promptDefinitions, unchecked_return_type = "PromptDefinition[]")]
pub fn prompt_definitions() -> Result<JsValue, JsValue> {
    types::to_js(&engram::agent_loop::prompts::definitions())
}

/// `arguments` as the JSON text of an object: the model's arguments arrive as an object
/// from some SDKs and as JSON text from others.
fn arguments_json(arguments: &JsValue) -> Result<String, JsValue> {
    match arguments.as_string() {
        Some(text) => Ok(text),
        None => types::stringify(arguments, "arguments"),
    }
}

#[wasm_bindgen(js_class = Engram)]
impl EngramHandle {
    /// Runs the model's call of one of engram's tools. `args` is the object the model
    /// wrote (or its JSON text). Resolves to `{ tool, text, memoryIds, data }`: `text` is
    /// the tool result for the model; a call the tool cannot take rejects with an
    /// `invalid_input` error naming the argument, to hand back to the model.
    #[wasm_bindgen(js_name = callTool, unchecked_return_type = "Promise<ToolOutput>")]
    pub fn call_tool(
        &self,
        name: String,
        #[wasm_bindgen(unchecked_param_type = "Record<string, unknown> | string")] args: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let json = arguments_json(&args)?;
            let output = inner
                .call_tool(&name, &json)
                .await
                .map_err(|e| to_js_error(&e))?;
            types::to_js(&output)
        })
    }

    /// Runs one of engram's prompts. `args` is an object of strings (or its JSON text, or
    /// undefined for none): for `session_context`, `task`, `files` and `modules` (comma- or
    /// line-separated), `phase` and `budget`. Resolves to `{ prompt, description, text,
    /// memoryIds, data }`: `text` is the user message; a request the prompt cannot take
    /// rejects with an `invalid_input` error naming `name` or the argument.
    #[wasm_bindgen(js_name = getPrompt, unchecked_return_type = "Promise<PromptOutput>")]
    pub fn get_prompt(
        &self,
        name: String,
        #[wasm_bindgen(unchecked_param_type = "Record<string, string> | string | undefined")]
        args: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let json = if args.is_undefined() || args.is_null() {
                String::new()
            } else {
                arguments_json(&args)?
            };
            let output = inner
                .get_prompt(&name, &json)
                .await
                .map_err(|e| to_js_error(&e))?;
            types::to_js(&output)
        })
    }

    /// The context for a session's system prompt: memories for the task and its files and
    /// modules, standing preferences, requirements and decisions, the latest work in
    /// progress; packed into the phase's budget with citation chips.
    #[wasm_bindgen(js_name = sessionContext, unchecked_return_type = "Promise<SessionContext>")]
    pub fn session_context(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SessionStart | undefined")] start: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            let start = if start.is_undefined() || start.is_null() {
                SessionStart::default()
            } else {
                SessionStart::from_json(&types::stringify(&start, "start")?)
                    .map_err(|e| to_js_error(&e.into()))?
            };
            let context = inner
                .session_context(&start)
                .await
                .map_err(|e| to_js_error(&e))?;
            types::to_js(&context)
        })
    }

    /// What to append to a tool's result: for a call that read or edited files, the
    /// unseen gotchas, error patterns, dead ends and observations about them. Resolves to
    /// an `Injection` or `null`.
    #[wasm_bindgen(js_name = augmentToolResult, unchecked_return_type = "Promise<Injection | null>")]
    pub fn augment_tool_result(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ToolResultContext")] context: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        request_call(
            context,
            "context",
            ToolResultContext::from_json,
            move |c| async move { inner.augment_tool_result(&c).await },
        )
    }

    /// Whether to add a system message before the next step (three triggers: unseen
    /// memories about files just read or edited, the agent's own records, a grep memory
    /// already answers; nothing before step 5). Resolves to an `Injection` or `null`.
    #[wasm_bindgen(js_name = stepInjection, unchecked_return_type = "Promise<Injection | null>")]
    pub fn step_injection(
        &self,
        #[wasm_bindgen(unchecked_param_type = "StepRequest")] request: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        request_call(
            request,
            "request",
            StepRequest::from_json,
            move |r| async move { inner.step_injection(&r).await },
        )
    }

    /// Records a finished work unit's planned and actual steps in its module
    /// (`{ module, plannedSteps, actualSteps, methodology?, sessionId? }`). Resolves to the
    /// module's `Calibration`: actual over planned steps over every work unit reported; its
    /// `task_calibration` memory is replaced by one that says so.
    #[wasm_bindgen(js_name = recordCalibration, unchecked_return_type = "Promise<Calibration>")]
    pub fn record_calibration(
        &self,
        #[wasm_bindgen(unchecked_param_type = "CalibrationSample")] sample: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        request_call(
            sample,
            "sample",
            CalibrationSample::from_json,
            move |s| async move { inner.record_calibration(&s).await },
        )
    }

    /// The step limit for a task (`{ baseMaxSteps, modules?, methodology?, maxSteps? }`):
    /// the base scaled by how many steps work in its modules really takes against its
    /// plans, at most 2×. Resolves to a `StepLimit`: `maxSteps`, the `factor`, the
    /// calibration that set it and the reason.
    #[wasm_bindgen(js_name = stepLimit, unchecked_return_type = "Promise<StepLimit>")]
    pub fn step_limit(
        &self,
        #[wasm_bindgen(unchecked_param_type = "StepLimitRequest")] request: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        request_call(
            request,
            "request",
            StepLimitRequest::from_json,
            move |r| async move { inner.step_limit(&r).await },
        )
    }

    /// The planner's context for a task (`{ task, modules?, methodology?, budget? }`):
    /// calibrations, dead ends, coupled files, recent outcomes and recipes, in sections
    /// packed into the budget (default 2,500 tokens).
    #[wasm_bindgen(js_name = plannerContext, unchecked_return_type = "Promise<PlannerContext>")]
    pub fn planner_context(
        &self,
        #[wasm_bindgen(unchecked_param_type = "PlannerRequest")] request: JsValue,
    ) -> Promise {
        let inner = self.inner.clone();
        request_call(
            request,
            "request",
            PlannerRequest::from_json,
            move |r| async move { inner.planner_context(&r).await },
        )
    }
}

/// Parses `value` (the argument named `what`) with `parse` and resolves to `run`'s answer
/// as a JS value; a bad request rejects with an `invalid_input` error naming its field.
fn request_call<R, O, Fut>(
    value: JsValue,
    what: &'static str,
    parse: fn(&str) -> Result<R, ValidationError>,
    run: impl FnOnce(R) -> Fut + 'static,
) -> Promise
where
    R: 'static,
    O: Serialize,
    Fut: Future<Output = Result<O, EngramError>> + 'static,
{
    future_to_promise(async move {
        let request =
            parse(&types::stringify(&value, what)?).map_err(|e| to_js_error(&e.into()))?;
        let answer = run(request).await.map_err(|e| to_js_error(&e))?;
        types::to_js(&answer)
    })
}
