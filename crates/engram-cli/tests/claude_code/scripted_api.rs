//! A scripted stand-in for the Anthropic Messages API on 127.0.0.1: it plays assistant
//! turns written in advance (tool calls, then text) as server-sent events, the way the real
//! API streams them, and records every request body it receives — which is where the tests
//! look for what Claude Code showed the model.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use serde_json::{json, Value};

/// One content block of an assistant turn.
#[derive(Debug, Clone)]
pub enum Block {
    /// Text for the user.
    Text(String),
    /// A tool call Claude Code is to run.
    Tool { name: String, input: Value },
}

impl Block {
    /// A `Bash` call of `command`.
    pub fn bash(command: &str) -> Block {
        Block::Tool {
            name: "Bash".into(),
            input: json!({ "command": command, "description": "scripted step" }),
        }
    }

    /// A `Read` of `path`.
    pub fn read(path: &std::path::Path) -> Block {
        Block::Tool {
            name: "Read".into(),
            input: json!({ "file_path": path }),
        }
    }
}

#[derive(Default)]
struct Script {
    /// Turn `k` answers a request that already holds `k` assistant messages.
    turns: Vec<Vec<Block>>,
    /// Which play this is (tool ids stay unique across sessions).
    generation: usize,
    requests: Vec<Value>,
}

/// The server; it lives as long as the test process.
pub struct ScriptedApi {
    /// `http://127.0.0.1:PORT`, for `ANTHROPIC_BASE_URL`.
    pub url: String,
    script: Arc<Mutex<Script>>,
}

impl ScriptedApi {
    /// Starts the server on a free port.
    pub fn start() -> ScriptedApi {
        let script = Arc::new(Mutex::new(Script::default()));
        let app = Router::new()
            .fallback(answer)
            .with_state(Arc::clone(&script));
        let url = engram_testserver::serve_router(app).expect("the scripted API starts");
        ScriptedApi { url, script }
    }

    /// Plays `turns` from now on, with a fresh record of requests.
    pub fn play(&self, turns: Vec<Vec<Block>>) {
        let mut script = self.script.lock().expect("script");
        script.turns = turns;
        script.generation += 1;
        script.requests.clear();
    }

    /// The agent loop's request bodies received since the last [`ScriptedApi::play`].
    pub fn requests(&self) -> Vec<Value> {
        self.script.lock().expect("script").requests.clone()
    }
}

async fn answer(State(script): State<Arc<Mutex<Script>>>, uri: Uri, body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if uri.path().ends_with("/count_tokens") {
        return axum::Json(json!({ "input_tokens": 100 })).into_response();
    }
    if !uri.path().ends_with("/messages") {
        return (axum::http::StatusCode::NOT_FOUND, "not scripted").into_response();
    }
    let assistant_turns = request["messages"]
        .as_array()
        .map(|m| m.iter().filter(|m| m["role"] == "assistant").count())
        .unwrap_or(0);
    let is_agent_loop = request["tools"].as_array().is_some_and(|t| !t.is_empty());
    let (blocks, generation) = {
        let mut script = script.lock().expect("script");
        if is_agent_loop {
            script.requests.push(request.clone());
        }
        let blocks = match script.turns.get(assistant_turns) {
            Some(blocks) if is_agent_loop => blocks.clone(),
            _ => vec![Block::Text("Done.".into())],
        };
        (blocks, script.generation)
    };
    let model = request["model"].as_str().unwrap_or("claude-scripted");
    let events = stream(&blocks, model, &format!("{generation}_{assistant_turns}"));
    ([(header::CONTENT_TYPE, "text/event-stream")], events).into_response()
}

/// The server-sent events of one assistant message holding `blocks`.
fn stream(blocks: &[Block], model: &str, id: &str) -> String {
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": format!("msg_{id}"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 100, "output_tokens": 1}}}),
    )];
    let mut stop_reason = "end_turn";
    for (index, block) in blocks.iter().enumerate() {
        let (start, delta) = match block {
            Block::Text(text) => (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": text}),
            ),
            Block::Tool { name, input } => {
                stop_reason = "tool_use";
                (
                    json!({"type": "tool_use", "id": format!("toolu_{id}_{index}"), "name": name, "input": {}}),
                    json!({"type": "input_json_delta", "partial_json": input.to_string()}),
                )
            }
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        ));
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": 10}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

/// Every text the request's non-assistant messages carry (strings, text blocks, tool results).
pub fn user_texts(request: &Value) -> Vec<String> {
    let mut texts = Vec::new();
    for message in request["messages"].as_array().into_iter().flatten() {
        // Claude Code sends hook context in system-role messages of their own.
        if message["role"] == "assistant" {
            continue;
        }
        collect_text(&message["content"], &mut texts);
    }
    texts
}

fn collect_text(content: &Value, texts: &mut Vec<String>) {
    match content {
        Value::String(text) => texts.push(text.clone()),
        Value::Array(blocks) => blocks.iter().for_each(|b| collect_text(b, texts)),
        Value::Object(block) => {
            if let Some(text) = block.get("text").and_then(Value::as_str) {
                texts.push(text.to_owned());
            }
            if let Some(inner) = block.get("content") {
                collect_text(inner, texts);
            }
        }
        _ => {}
    }
}
