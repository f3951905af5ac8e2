//! `engram mcp`: a Model Context Protocol client's session with the binary over stdio —
//! the handshake, the tool list, a memory recorded, found again and corrected by another
//! that replaces it, a bad call answered as
//! a tool error the model can read, the session-context prompt, and a malformed line
//! answered with a JSON-RPC error.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

#[test]
fn an_mcp_client_records_and_finds_a_memory_over_stdio() {
    let dir = std::env::temp_dir().join(format!("engram-cli-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_engram"))
        .arg("--db")
        .arg(dir.join("e.db"))
        .args(["--no-embed", "mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("engram mcp starts");
    let mut input = child.stdin.take().expect("stdin");
    let mut output = BufReader::new(child.stdout.take().expect("stdout"));
    let mut next_id = 0;
    let mut request = |method: &str, params: Value| -> Value {
        next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params});
        writeln!(input, "{line}").expect("request written");
        input.flush().expect("flushed");
        loop {
            let mut text = String::new();
            assert!(
                output.read_line(&mut text).expect("response read") > 0,
                "server closed"
            );
            let message: Value = serde_json::from_str(&text).expect("JSON-RPC line");
            if message["id"] == next_id {
                return message;
            }
        }
    };

    let init = request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "engram");
    assert!(init["result"]["capabilities"]["tools"].is_object());
    assert!(init["result"]["capabilities"]["prompts"].is_object());

    let listed = request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["search_memory", "record_memory", "analyze_impact"]);
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["query"]));

    let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    let recorded = request(
        "tools/call",
        call(
            "record_memory",
            json!({"type": "gotcha", "content": "The seed script needs the users migration first", "files": ["db/seed.rs"]}),
        ),
    );
    assert_eq!(recorded["result"]["isError"], false, "{recorded}");
    let text = recorded["result"]["content"][0]["text"].as_str().unwrap();
    let id = text
        .strip_prefix("Recorded gotcha as memory #")
        .and_then(|rest| rest.strip_suffix(".\n"))
        .expect("the new id")
        .to_owned();

    let found = request(
        "tools/call",
        call("search_memory", json!({"query": "seed script migration"})),
    );
    let text = found["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains(&format!("[Memory #{id}:")), "{text}");

    let bad = request(
        "tools/call",
        call("search_memory", json!({"query": "x", "limit": 99})),
    );
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    let text = bad["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("arguments.limit"), "{text}");

    let prompts = request("prompts/list", json!({}));
    let listed = &prompts["result"]["prompts"];
    assert_eq!(listed[0]["name"], "session_context", "{prompts}");
    let arguments: Vec<&str> = listed[0]["arguments"]
        .as_array()
        .expect("arguments")
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(arguments, ["task", "files", "modules", "phase", "budget"]);

    let prompt = request(
        "prompts/get",
        json!({"name": "session_context", "arguments": {"task": "run the seed script", "files": "db/seed.rs"}}),
    );
    let message = &prompt["result"]["messages"][0];
    assert_eq!(message["role"], "user", "{prompt}");
    let text = message["content"]["text"].as_str().expect("text");
    assert!(text.contains(&format!("[Memory #{id}:")), "{text}");
    assert!(text.contains("users migration"), "{text}");
    assert!(
        prompt["result"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("run the seed script")),
        "{prompt}"
    );

    // The agent corrects the memory it was shown: the old one is retired, searchable no
    // more. A memory that is not there is an error the model can read; nothing is stored.
    let corrected = request(
        "tools/call",
        call(
            "record_memory",
            json!({"type": "gotcha", "content": "db/seed.rs now runs every pending migration itself before loading fixtures",
                   "files": ["db/seed.rs"], "replaces": id}),
        ),
    );
    let text = corrected["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("It replaces memory #{id}, now retired")),
        "{text}"
    );
    let found = request(
        "tools/call",
        call("search_memory", json!({"query": "seed script migration"})),
    );
    let text = found["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        !text.contains(&format!("[Memory #{id}:")) && text.contains("every pending migration"),
        "{text}"
    );
    let missing = request(
        "tools/call",
        call(
            "record_memory",
            json!({"type": "gotcha", "content": "Never seed production", "replaces": "ffffffff-0000"}),
        ),
    );
    assert_eq!(missing["result"]["isError"], true, "{missing}");
    let found = request(
        "tools/call",
        call("search_memory", json!({"query": "seed production"})),
    );
    let text = found["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        !text.contains("Never seed production"),
        "nothing stored: {text}"
    );

    let bad = request(
        "prompts/get",
        json!({"name": "session_context", "arguments": {"budget": "lots"}}),
    );
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("arguments.budget")),
        "{bad}"
    );
    // A person teaches engram from inside the agent: stored as theirs, and the agent told.
    let names: Vec<&str> = listed
        .as_array()
        .expect("prompts")
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["session_context", "remember"]);
    let taught = request(
        "prompts/get",
        json!({"name": "remember", "arguments": {"text": "Money is stored in integer cents", "type": "requirement", "files": "billing/money.py"}}),
    );
    let text = taught["result"]["messages"][0]["content"]["text"]
        .as_str()
        .expect("text");
    assert!(
        text.contains("stored as their own memory") && text.contains("integer cents"),
        "{taught}"
    );
    let found = request(
        "tools/call",
        call("search_memory", json!({"query": "money integer cents"})),
    );
    let text = found["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Money is stored in integer cents"), "{text}");
    let empty = request("prompts/get", json!({"name": "remember", "arguments": {}}));
    assert_eq!(empty["error"]["code"], -32602, "{empty}");
    assert!(
        empty["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("arguments.text")),
        "{empty}"
    );

    let unknown = request("prompts/get", json!({"name": "standup"}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    // A line that is not a JSON-RPC request is answered with its error, not dropped, and
    // the server keeps serving: malformed JSON, bytes that are not UTF-8, a batch, a
    // request without a method.
    let hostile: [(&[u8], i64); 5] = [
        (b"{not json", -32700),
        (b"\xff\xfe{\"jsonrpc\"", -32700),
        (
            b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
            -32600,
        ),
        (b"{\"jsonrpc\":\"2.0\",\"id\":7}", -32600),
        (
            b"{\"jsonrpc\":\"1.0\",\"id\":8,\"method\":\"ping\"}",
            -32600,
        ),
    ];
    for (line, code) in hostile {
        input.write_all(line).expect("line written");
        input.write_all(b"\n").expect("line written");
        input.flush().expect("flushed");
        let mut text = String::new();
        output.read_line(&mut text).expect("response read");
        let answer: Value = serde_json::from_str(&text).expect("JSON-RPC line");
        assert_eq!(answer["error"]["code"], code, "{answer}");
    }
    writeln!(
        input,
        "{}",
        json!({"jsonrpc": "2.0", "id": "alive", "method": "ping"})
    )
    .unwrap();
    input.flush().expect("flushed");
    let mut text = String::new();
    output.read_line(&mut text).expect("response read");
    let alive: Value = serde_json::from_str(&text).expect("JSON-RPC line");
    assert_eq!(alive["result"], json!({}), "{alive}");

    drop(input);
    let status = child.wait().expect("engram mcp exits");
    assert!(status.success(), "{status}");
    let _ = std::fs::remove_dir_all(&dir);
}
