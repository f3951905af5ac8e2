//! The Model Context Protocol from JavaScript: the same request handling the CLI serves
//! over stdio, for a server that carries MCP over its own transport (the Worker's
//! streamable HTTP).

use engram::agent_loop::mcp::{self, Incoming};
use js_sys::{Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::EngramHandle;

/// Reads one MCP message (a JSON-RPC 2.0 request or notification, as text) and answers
/// what needs no database: `{ reply: string | null, needsEngram: false }` (a `null` reply
/// for a notification), or `{ reply: null, needsEngram: true }` for a tool call or a
/// prompt, which the engram's `answerMcp` answers. Malformed messages get their JSON-RPC
/// error as the reply.
#[wasm_bindgen(js_name = mcpMessage, unchecked_return_type = "{ reply: string | null; needsEngram: boolean }")]
pub fn mcp_message(message: &str) -> JsValue {
    let (reply, needs_engram) = match mcp::read(message) {
        Incoming::Reply(reply) => (JsValue::from_str(&reply.to_string()), false),
        Incoming::Silent => (JsValue::NULL, false),
        Incoming::Tool { .. } | Incoming::Prompt { .. } => (JsValue::NULL, true),
    };
    let answer = Object::new();
    let _ = Reflect::set(&answer, &"reply".into(), &reply);
    let _ = Reflect::set(
        &answer,
        &"needsEngram".into(),
        &JsValue::from_bool(needs_engram),
    );
    answer.into()
}

#[wasm_bindgen(js_class = Engram)]
impl EngramHandle {
    /// Answers one MCP message: resolves to the JSON-RPC response to send (text), or
    /// `null` for a notification. Tool failures are tool results marked as errors; a bad
    /// prompt argument is an invalid-params error.
    #[wasm_bindgen(js_name = answerMcp, unchecked_return_type = "Promise<string | null>")]
    pub fn answer_mcp(&self, message: String) -> Promise {
        let inner = self.inner.clone();
        future_to_promise(async move {
            Ok(inner
                .answer_mcp(&message)
                .await
                .map_or(JsValue::NULL, |reply| JsValue::from_str(&reply)))
        })
    }
}
