//! The Model Context Protocol's messages, read and answered without I/O: every host that
//! serves MCP (the CLI over stdio, the Worker over streamable HTTP) hands each incoming
//! JSON-RPC message here, runs the tool call or prompt it names (with `engram`), and sends
//! back what this module writes. A tool or prompt added to [`crate::tools`] or
//! [`crate::prompts`] is therefore served by every host at once.
//!
//! Every message gets an answer or, for notifications and responses, deliberately none:
//! malformed JSON, a batch or a message that is not JSON-RPC 2.0 are JSON-RPC errors.

use serde_json::{json, Value};

use crate::tools::{self, ToolFormat};

/// Protocol versions this server speaks, newest first; a client asking for another is
/// offered the newest.
pub const PROTOCOL_VERSIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

/// JSON-RPC's error codes.
pub mod error_code {
    /// The message is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The message is JSON but not a JSON-RPC 2.0 request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The method's parameters are wrong.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The server failed.
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// What one incoming message asks of the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// Answered without the database: send this response.
    Reply(Value),
    /// A notification or a response to the server: send nothing.
    Silent,
    /// `tools/call`: run the tool, then answer with [`tool_reply`].
    Tool {
        /// The request's id.
        id: Value,
        /// The tool.
        name: String,
        /// Its arguments (a JSON object, as text).
        arguments: String,
    },
    /// `prompts/get`: render the prompt, then answer with [`prompt_reply`].
    Prompt {
        /// The request's id.
        id: Value,
        /// The prompt.
        name: String,
        /// Its arguments (a JSON object, as text).
        arguments: String,
    },
}

/// Reads one message (one line of stdio, one HTTP body).
pub fn read(message: &str) -> Incoming {
    let value: Value = match serde_json::from_str(message) {
        Ok(value) => value,
        Err(e) => {
            return Incoming::Reply(error(
                &Value::Null,
                error_code::PARSE_ERROR,
                &format!("malformed JSON: {e}"),
            ))
        }
    };
    if value.is_array() {
        return Incoming::Reply(error(
            &Value::Null,
            error_code::INVALID_REQUEST,
            "send one JSON-RPC message at a time (batches are not supported)",
        ));
    }
    let id = value.get("id").cloned();
    if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Incoming::Reply(error(
            id.as_ref().unwrap_or(&Value::Null),
            error_code::INVALID_REQUEST,
            "expected a JSON-RPC 2.0 message",
        ));
    }
    let method = value.get("method").and_then(Value::as_str);
    let is_response = value.get("result").is_some() || value.get("error").is_some();
    let (Some(id), Some(method)) = (id, method) else {
        if let (Some(id), None, false) = (value.get("id"), method, is_response) {
            return Incoming::Reply(error(
                id,
                error_code::INVALID_REQUEST,
                "a request needs a method (a string)",
            ));
        }
        // A notification (`notifications/initialized`, a cancellation) or a response.
        return Incoming::Silent;
    };
    let params = match value.get("params") {
        Some(Value::Object(params)) => params.clone(),
        _ => serde_json::Map::new(),
    };
    let text_of = |key: &str| params.get(key).and_then(Value::as_str).unwrap_or_default();
    let arguments = || {
        params
            .get("arguments")
            .cloned()
            .unwrap_or_else(|| json!({}))
            .to_string()
    };
    match method {
        "initialize" => Incoming::Reply(result(&id, initialize(text_of("protocolVersion")))),
        "ping" => Incoming::Reply(result(&id, json!({}))),
        "tools/list" => Incoming::Reply(result(
            &id,
            json!({ "tools": tools::render(ToolFormat::Mcp) }),
        )),
        "prompts/list" => Incoming::Reply(result(
            &id,
            json!({ "prompts": crate::prompts::definitions() }),
        )),
        "tools/call" => Incoming::Tool {
            name: text_of("name").to_owned(),
            arguments: arguments(),
            id,
        },
        "prompts/get" => Incoming::Prompt {
            name: text_of("name").to_owned(),
            arguments: arguments(),
            id,
        },
        other => Incoming::Reply(error(
            &id,
            error_code::METHOD_NOT_FOUND,
            &format!("method {other:?} is not offered"),
        )),
    }
}

/// The answer to `initialize`: the version both sides speak, what this server offers, and
/// how to use it.
fn initialize(asked: &str) -> Value {
    let version = PROTOCOL_VERSIONS
        .iter()
        .find(|v| **v == asked)
        .unwrap_or(&PROTOCOL_VERSIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": { "tools": {}, "prompts": {} },
        "serverInfo": { "name": "engram", "version": env!("CARGO_PKG_VERSION") },
        "instructions": tools::SERVER_INSTRUCTIONS,
    })
}

/// The answer to a tool call: its text, or why it failed. A failure is a tool result
/// marked as an error, not a protocol error, so the model reads why its call failed.
pub fn tool_reply(id: &Value, outcome: Result<String, String>) -> Value {
    let (text, is_error) = match outcome {
        Ok(text) => (text, false),
        Err(why) => (format!("engram: {why}"), true),
    };
    result(
        id,
        json!({ "content": [{ "type": "text", "text": text }], "isError": is_error }),
    )
}

/// Why a prompt could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptFailure {
    /// The request's arguments or name were wrong (a person picked the prompt, so it is
    /// the request's fault): invalid params.
    Invalid(String),
    /// The server failed.
    Failed(String),
}

/// The answer to `prompts/get`: one user message with the rendered text, or the failure.
pub fn prompt_reply(id: &Value, outcome: Result<(String, String), PromptFailure>) -> Value {
    match outcome {
        Ok((description, text)) => result(
            id,
            json!({
                "description": description,
                "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
            }),
        ),
        Err(PromptFailure::Invalid(why)) => {
            error(id, error_code::INVALID_PARAMS, &format!("engram: {why}"))
        }
        Err(PromptFailure::Failed(why)) => {
            error(id, error_code::INTERNAL_ERROR, &format!("engram: {why}"))
        }
    }
}

/// A JSON-RPC result.
fn result(id: &Value, result: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": result })
}

/// A JSON-RPC error.
pub fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(message: &str) -> Value {
        match read(message) {
            Incoming::Reply(value) => value,
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    #[test]
    fn the_handshake_negotiates_a_version_and_lists_tools_and_prompts() {
        let init = reply(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#,
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-03-26");
        assert_eq!(init["result"]["serverInfo"]["name"], "engram");
        let later = reply(
            r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2099-01-01"}}"#,
        );
        assert_eq!(later["result"]["protocolVersion"], PROTOCOL_VERSIONS[0]);
        let tools = reply(r#"{"jsonrpc":"2.0","id":"t","method":"tools/list"}"#);
        assert_eq!(tools["id"], "t");
        assert_eq!(tools["result"]["tools"][0]["name"], "search_memory");
        assert!(tools["result"]["tools"][0]["inputSchema"].is_object());
        let prompts = reply(r#"{"jsonrpc":"2.0","id":3,"method":"prompts/list"}"#);
        assert_eq!(prompts["result"]["prompts"][0]["name"], "session_context");
    }

    #[test]
    fn every_bad_message_is_answered_with_its_jsonrpc_error() {
        let code = |message: &str| reply(message)["error"]["code"].as_i64();
        assert_eq!(code("{not json"), Some(error_code::PARSE_ERROR));
        assert_eq!(code(""), Some(error_code::PARSE_ERROR));
        assert_eq!(
            code(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            Some(error_code::INVALID_REQUEST)
        );
        assert_eq!(
            code(r#"{"id":1,"method":"ping"}"#),
            Some(error_code::INVALID_REQUEST)
        );
        assert_eq!(code(r#""text""#), Some(error_code::INVALID_REQUEST));
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#),
            Some(error_code::METHOD_NOT_FOUND)
        );
    }

    #[test]
    fn notifications_and_responses_get_no_answer() {
        assert_eq!(
            read(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Incoming::Silent
        );
        assert_eq!(
            read(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
            Incoming::Silent
        );
    }

    #[test]
    fn calls_carry_their_id_name_and_arguments() {
        let call = read(
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search_memory","arguments":{"query":"x"}}}"#,
        );
        assert_eq!(
            call,
            Incoming::Tool {
                id: json!(9),
                name: "search_memory".into(),
                arguments: r#"{"query":"x"}"#.into()
            }
        );
        let prompt = read(
            r#"{"jsonrpc":"2.0","id":10,"method":"prompts/get","params":{"name":"session_context"}}"#,
        );
        assert_eq!(
            prompt,
            Incoming::Prompt {
                id: json!(10),
                name: "session_context".into(),
                arguments: "{}".into()
            }
        );
        let failed = tool_reply(&json!(9), Err("arguments.limit: too big".into()));
        assert_eq!(failed["result"]["isError"], true);
        let invalid = prompt_reply(
            &json!(10),
            Err(PromptFailure::Invalid("arguments.budget".into())),
        );
        assert_eq!(invalid["error"]["code"], error_code::INVALID_PARAMS);
    }
}
