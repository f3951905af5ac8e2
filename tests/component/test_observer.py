"""The observer inside the component under wasmtime, storing into engram-testserver over
wasi:http: events in, hot files and promoted memories out, checkpoint and recovery, typed
errors, and the transcript parser on a real trajectory."""

import json
import os
import time
from pathlib import Path

import pytest

from host import EngramError
from test_component import ROOT, TOKEN, host, server  # noqa: F401  (fixtures)

EVAL = Path(os.environ.get("ENGRAM_EVAL_DIR", ROOT.parent / "shared/eval"))


def typical(host, session_id):
    session = host.start_session(session_id, None, ["/repo"])
    calls = [
        ("Read", {"file_path": "/repo/src/auth/session.py"}),
        ("Read", {"file_path": "/repo/src/auth/tokens.py"}),
        ("Edit", {"file_path": "/repo/src/auth/tokens.py", "old_string": "60", "new_string": "600"}),
    ]
    for i, (tool, args) in enumerate(calls):
        session.observe({"type": "tool_call", "step": i + 1, "id": f"c{i}", "tool": tool, "input": args})
        session.observe({"type": "tool_result", "step": i + 1, "id": f"c{i}", "output": "ok"})
    return session


def test_co_access_promoted_on_the_third_session(server, host):  # noqa: F811
    engram = host.open(server, TOKEN, f"observer-{time.time_ns()}")
    reports = []
    for sid in ["a", "b", "c"]:
        session = typical(host, sid)
        assert session.hot_files(1)[0]["path"] == "src/auth/tokens.py"
        reports.append(engram.finalize_session(session, "success"))
    co_access = [[m for m in r["promoted"] if m["signal"] == "co_access"] for r in reports]
    assert co_access[0] == [] and len(co_access[2]) == 1
    stored = engram.get(co_access[2][0]["id"])
    assert stored["source"] == "observer_inferred"
    assert engram.finalize_session(typical(host, "a"), "success")["alreadyFinalized"] is True


def test_checkpoint_and_recover(server, host):  # noqa: F811
    engram = host.open(server, TOKEN, f"observer-recover-{time.time_ns()}")
    session = typical(host, "crashed")
    session.observe({"type": "reasoning", "step": 4, "text": "This approach won't work: `token_cache` is per process."})
    engram.checkpoint_session(session)
    reports = engram.recover_sessions()
    assert [r["outcome"] for r in reports] == ["cancelled"]
    assert [m["type"] for m in reports[0]["promoted"]] == ["dead_end"]
    assert engram.recover_sessions() == []


def test_bad_input_is_a_typed_error(server, host):  # noqa: F811
    engram = host.open(server, TOKEN, f"observer-bad-{time.time_ns()}")
    with pytest.raises(EngramError) as bad_kind:
        host.start_session("x", "party", [])
    assert bad_kind.value.code == "invalid_input"
    session = host.start_session("x", None, [])
    with pytest.raises(EngramError) as bad_event:
        session.observe({"type": "teleport"})
    assert bad_event.value.code == "invalid_input"
    with pytest.raises(EngramError) as bad_outcome:
        engram.finalize_session(session, "maybe")
    assert bad_outcome.value.code == "invalid_input"
    with pytest.raises(EngramError):
        host.parse_transcript("plain text")


def test_a_real_trajectory_finds_the_gold_file(host):  # noqa: F811
    path = EVAL / "trajectories/psf__requests-1142/psf__requests-1142.traj.json"
    if not path.exists():
        pytest.skip(f"no evaluation data at {EVAL}")
    parsed = host.parse_transcript(path.read_text())
    assert parsed["format"] == "mini-swe-agent"
    session = host.start_session(parsed["id"], None, parsed["roots"])
    assert session.observe_many(parsed["events"]) == len(parsed["events"])
    assert session.hot_files(1)[0]["path"] == "requests/models.py"
    assert all(t["step"] >= 1 for t in session.triggers())
