"""The engram:memory component under wasmtime (the PyPI embedding), over wasi:http against
engram-testserver (a real libSQL engine)."""

import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from api_vectors import run_api_vectors
from host import ComponentHost, EngramError

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
COMPONENT = Path(os.environ.get("ENGRAM_COMPONENT", TARGET / "wasm32-wasip2/wasm-release/engram_component.wasm"))
SERVER_BIN = Path(os.environ.get("ENGRAM_TESTSERVER_BIN", TARGET / "debug/engram-testserver"))
TOKEN = "component-test-token"


@pytest.fixture(scope="module")
def server():
    proc = subprocess.Popen([str(SERVER_BIN), "--auth-token", TOKEN], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    assert line.startswith("ENGRAM_TESTSERVER_URL="), line
    yield line.split("=", 1)[1]
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def host():
    return ComponentHost(COMPONENT)


def pipeline_requests(url):
    with urllib.request.urlopen(f"{url}/engram-test/stats") as response:
        return json.load(response)["pipelineRequests"]


def test_api_vectors_pass_in_wasmtime(server, host):
    vectors = json.loads((ROOT / "tests/vectors/api.json").read_text())
    steps = run_api_vectors(vectors, lambda project, options=None: host.open(server, TOKEN, project, extra=options), f"wasmtime-{time.time_ns()}")
    assert steps > 30


def test_a_search_is_exactly_one_http_request(server, host):
    engram = host.open(server, TOKEN, f"count-{time.time_ns()}")
    engram.remember({"type": "gotcha", "content": "components need wasi:http from the host"})
    before = pipeline_requests(server)
    found = engram.search("wasi:http host")
    assert len(found["hits"]) == 1
    assert pipeline_requests(server) - before == 1


def test_wrong_token_and_bad_input_are_typed_errors(server, host):
    with pytest.raises(EngramError) as wrong:
        host.open(server, "not-the-token", "x")
    assert wrong.value.code == "unauthorized"
    assert "not-the-token" not in str(wrong.value)
    engram = host.open(server, TOKEN, f"bad-{time.time_ns()}")
    with pytest.raises(EngramError) as bad:
        engram.remember('{"type": "gotcha", "content": ')
    assert bad.value.code == "invalid_input"
    with pytest.raises(EngramError) as bad_type:
        engram.remember({"type": "hearsay", "content": "x"})
    assert bad_type.value.violations[0][0] == "type"
    with pytest.raises(EngramError) as bad_url:
        host.open("ftp://nowhere", None, "x")
    # Checked by the options, as in every host, before any request is sent.
    assert bad_url.value.code == "invalid_input"
    assert bad_url.value.violations[0][0] == "url"
    # The instance keeps working after errors.
    stored = engram.remember({"type": "decision", "content": "components survive bad input"})
    assert engram.get(stored["id"])["content"] == "components survive bad input"


def _start_server(db, listen="127.0.0.1:0"):
    proc = subprocess.Popen([str(SERVER_BIN), "--auth-token", TOKEN, "--db", str(db), "--listen", listen],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline().strip()
    assert line.startswith("ENGRAM_TESTSERVER_URL="), line
    return proc, line.split("=", 1)[1]


def test_a_write_while_the_server_is_down_is_buffered_and_flushed(host, tmp_path):
    db = tmp_path / "durable.db"
    proc, url = _start_server(db)
    engram = host.open(url, TOKEN, f"durable-{time.time_ns()}", extra={"retryDelaysMs": [5, 10]})
    assert engram.write_status() == {"degraded": False, "pending": 0, "capacity": 50, "dropped": 0}
    proc.terminate()
    proc.wait(timeout=10)
    stored = engram.remember({"type": "gotcha", "content": "the component keeps a write while its server restarts"})
    assert stored["pending"] is True
    status = engram.write_status()
    assert status["degraded"] is True and status["pending"] == 1
    proc, _ = _start_server(db, url.removeprefix("http://"))
    try:
        assert engram.flush_writes()["pending"] == 0
        assert engram.get(stored["id"])["content"] == "the component keeps a write while its server restarts"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_session_context_prompt_reads_as_one_user_message(server, host):
    prompts = host.prompt_definitions()
    assert [p["name"] for p in prompts] == ["session_context", "remember"]
    prompt = prompts[0]
    assert [a["name"] for a in prompt["arguments"]] == ["task", "files", "modules", "phase", "budget"]
    engram = host.open(server, TOKEN, f"prompt-{time.time_ns()}")
    stored = engram.remember({"type": "gotcha", "content": "the cache key must include the locale", "relatedFiles": ["src/cache.rs"]})
    found = engram.get_prompt("session_context", {"task": "change the cache key", "files": "src/cache.rs"})
    assert found["memoryIds"] == [stored["id"]]
    assert f"[Memory #{stored['id']}" in found["text"]
    with pytest.raises(EngramError) as bad:
        engram.get_prompt("session_context", {"budget": "lots"})
    assert bad.value.code == "invalid_input"
    assert bad.value.violations[0][0] == "arguments.budget"


def test_tool_definitions_come_in_every_sdk_shape(host):
    for fmt, key in [("anthropic", "input_schema"), ("openai", "function"), ("mcp", "inputSchema")]:
        tools = host.tool_definitions(fmt)
        assert [t.get("name") or t["function"]["name"] for t in tools] == ["search_memory", "record_memory", "analyze_impact"]
        assert all(key in t for t in tools)
    with pytest.raises(EngramError) as bad:
        host.tool_definitions("gemini")
    assert bad.value.code == "invalid_input"


def test_a_persons_operations_in_wasmtime(server, host):
    """A real instruction file imported, browsed, taught, corrected, pinned, flagged; health;
    Markdown; the trust level and the injection that obeys it; the session review; the export refused by the database that holds it; bad input typed."""
    eval_dir = Path(os.environ.get("ENGRAM_EVAL_DIR", ROOT.parent / "shared/eval"))
    name = "platformplatform__PlatformPlatform__.cursor__rules__backend__strongly-typed-ids.mdc"
    text = (eval_dir / "instructions" / name).read_text()
    engram = host.open(server, TOKEN, f"person-{time.time_ns()}")
    report = engram.import_instructions({"files": [{"path": ".cursor/rules/backend/strongly-typed-ids.mdc", "text": text}]})
    rules = report["files"][0]["rules"]
    assert len(rules) >= 10
    assert engram.count() == len({r["id"] for r in rules})
    page = engram.list({"limit": 3, "filter": {"tags": ["imported"]}})
    assert len(page["memories"]) == 3 and page["nextCursor"]
    taught = engram.teach({"content": "Money is stored in integer cents", "type": "requirement"})
    edited = engram.update(taught["id"][:8], {"content": "Money is stored in integer cents, never floats"}, True)
    assert edited["flags"]["userVerified"] is True
    assert engram.pin(taught["id"], True)["flags"]["pinned"] is True
    assert engram.confirm(rules[0]["id"])["flags"]["userVerified"] is True
    assert engram.flag_wrong(rules[-1]["id"], "not how we do it")["deprecated"] is True
    assert engram.count({"status": "retired"}) == 1
    health = engram.health()
    assert 0 <= health["score"] <= 100 and health["live"] == engram.count()
    assert "never floats" in engram.export_markdown()
    # The trust level: the default until set, and the injection beside a file obeys it.
    assert [engram.trust_level()[k] for k in ("level", "set")] == [2, False]
    hunch = engram.remember({"type": "gotcha", "content": "Ledger rows lock while invoices reconcile",
                             "confidence": 0.6, "relatedFiles": ["src/ledger.ts"]})
    read = {"tool": "Read", "input": {"file_path": "src/ledger.ts"}, "shownIds": []}
    assert engram.augment_tool_result(read) is None
    assert engram.set_trust_level(4)["injectionThreshold"] == 0.45
    assert engram.augment_tool_result(read)["memoryIds"] == [hunch["id"]]
    with pytest.raises(EngramError) as level:
        engram.set_trust_level(0)
    assert level.value.code == "invalid_input" and level.value.violations[0][0] == "trustLevel"
    engram.set_trust_level(2)
    engram.forget(hunch["id"])
    assert engram.session_review() is None
    assert engram.session_review("no-such-session")["trust"]["level"] == 2
    exported = engram.export_json()
    assert exported["format"] == "engram-export" and len(exported["memories"]) == engram.count({"status": "all"})
    with pytest.raises(EngramError) as again:
        engram.load_export(exported)
    assert again.value.code == "invalid_input"
    with pytest.raises(EngramError) as bad:
        engram.list({"limit": 0})
    assert bad.value.code == "invalid_input" and bad.value.violations[0][0] == "limit"
    with pytest.raises(EngramError) as missing:
        engram.update("ffffffff-0000-4000-8000-000000000000", {"content": "x"})
    assert missing.value.code == "not_found"
    engram.purge(taught["id"])
    assert engram.count({"pinned": True, "status": "all"}) == 0
