"""Replays tests/vectors/api.json against an engram surface (remember/search/get/forget),
exactly as the Rust and JavaScript runners do."""

import json

from host import EngramError


def run_api_vectors(vectors, open_engram, prefix):
    """`open_engram(project, options=None)` opens the case's project; `open` steps call it
    again with the step's options, laid over the host's own."""
    steps = 0
    for i, case in enumerate(vectors["cases"]):
        project = f"{prefix}-{i}"
        engram = open_engram(project)
        ids = {}
        for j, step in enumerate(case["steps"]):
            try:
                if step["op"] == "open":
                    _open_step(lambda: open_engram(project, step["options"]), step)
                else:
                    _run_step(engram, step, ids, project)
            except AssertionError as e:
                raise AssertionError(f"{case['name']} / step {j} ({step['op']}): {e}") from None
            steps += 1
    return steps


def _expect_error(error, want):
    assert error.code == want["code"], f"error code {error.code} ({error}), expected {want['code']}"
    if "field" in want:
        first = error.violations[0][0] if error.violations else None
        assert first == want["field"], f"error field {first} ({error}), expected {want['field']}"


def _attempt(fn):
    try:
        return fn(), None
    except EngramError as e:
        return None, e


def _open_step(opening, step):
    value, error = _attempt(opening)
    if "expectError" in step:
        assert error is not None, "expected an error, opened"
        _expect_error(error, step["expectError"])
        return
    assert error is None, f"unexpected error {error}"


def _run_step(engram, step, ids, project):
    expect = step.get("expect", {})
    op = step["op"]
    if op in ("remember", "rememberRaw"):
        if op == "rememberRaw":
            payload = step["input"]
        else:
            memory = dict(step["input"])
            if "contentRepeat" in step:
                memory["content"] = step["contentRepeat"]["text"] * step["contentRepeat"]["times"]
            payload = json.dumps(memory)
        value, error = _attempt(lambda: engram.remember(payload))
        if "expectError" in step:
            assert error is not None, f"expected an error, stored {value}"
            _expect_error(error, step["expectError"])
            return
        assert error is None, f"unexpected error {error}"
        if "as" in step:
            ids[step["as"]] = value["id"]
        if "redacted" in expect:
            assert value["redacted"] == expect["redacted"], f"redacted {value['redacted']}"
        if "replayOf" in expect:
            assert value.get("replayed") is True, f"expected a replay, got {value}"
            assert value["id"] == ids[expect["replayOf"]], f"replayed {value['id']}"
        else:
            assert not value.get("replayed"), f"a new write was answered as a replay: {value}"
        _check_placement(value, expect, ids)
    elif op == "search":
        value, error = _attempt(lambda: engram.search(step["input"]))
        if "expectError" in step:
            assert error is not None, "expected an error"
            _expect_error(error, step["expectError"])
            return
        assert error is None, f"unexpected error {error}"
        _check_search(value, expect, ids)
    elif op == "searchMany":
        value, error = _attempt(lambda: engram.search_many(step["input"]))
        if "expectError" in step:
            assert error is not None, "expected an error"
            _expect_error(error, step["expectError"])
            return
        assert error is None, f"unexpected error {error}"
        each = expect.get("each", [])
        assert len(value) == len(each), f"{len(value)} answers, expected {len(each)}"
        for i, (answer, want) in enumerate(zip(value, each)):
            try:
                _check_search(answer, want, ids)
            except AssertionError as e:
                raise AssertionError(f"answer {i}: {e}") from None
    elif op == "get":
        memory_id = step.get("literalId") or ids.get(step["id"])
        memory = engram.get(memory_id)
        if expect.get("null"):
            assert memory is None, "expected no memory"
            return
        assert memory is not None, "memory not found"
        _check_answer_excludes(memory, expect)
        if "content" in expect:
            assert memory["content"] == expect["content"], f"content {memory['content']}"
        if "contentContains" in expect:
            assert expect["contentContains"] in memory["content"]
        if "contentExcludes" in expect:
            assert expect["contentExcludes"] not in memory["content"]
        for key, want in expect.get("fields", {}).items():
            assert memory.get(key) == want, f"field {key}: {memory.get(key)} expected {want}"
    elif op == "forget":
        memory_id = step.get("literalId") or ids.get(step["id"])
        forgotten = engram.forget(memory_id)
        assert forgotten == expect.get("forgotten", True), f"forgot {forgotten}"
    elif op == "agent":
        _run_agent_step(engram, step, ids)
    elif op == "lifecycle":
        _run_lifecycle_step(engram, step, ids)
    elif op == "person":
        _run_person_step(engram, step, ids, project)
    else:
        raise AssertionError(f"unknown op {op}")


def _check_answer_excludes(value, expect):
    """`answerExcludes`: strings (secrets) that must appear nowhere in the answer."""
    text = json.dumps(value)
    for part in expect.get("answerExcludes", []):
        assert part not in text, f"the answer holds {part!r}"


def _check_search(value, expect, ids):
    """One search answer against a step's expectations: count, first, contains, excludes,
    order (memory names), response fields and packedAtMost."""
    _check_answer_excludes(value, expect)
    got = [h["memory"]["id"] for h in value["hits"]]
    if "count" in expect:
        assert len(got) == expect["count"], f"{len(got)} hits, expected {expect['count']}"
    if "first" in expect:
        assert got and got[0] == ids.get(expect["first"]), f"first hit {got[:1]}, expected {expect['first']}"
    for name in expect.get("contains", []):
        assert ids.get(name) in got, f"{name} missing"
    for name in expect.get("excludes", []):
        assert ids.get(name) not in got, f"{name} should be absent"
    if "order" in expect:
        want = [ids.get(name) for name in expect["order"]]
        assert got == want, f"order {got}, expected {expect['order']}"
    for key, want in expect.get("response", {}).items():
        assert value.get(key) == want, f"response {key}: {value.get(key)}, expected {want}"
    if "packedAtMost" in expect:
        tokens = (value.get("packed") or {}).get("tokens")
        assert tokens is not None and tokens <= expect["packedAtMost"], f"packed tokens {tokens}"


def _check_placement(stored, expect, ids):
    """A write's consolidation: `mergedInto` names the memory it merged into, `supersedes`
    the one it replaced; without them it must have done neither."""
    if "mergedInto" in expect:
        assert stored.get("merged") is True and stored["id"] == ids.get(expect["mergedInto"]), f"expected a merge into {expect['mergedInto']}, got {stored}"
    else:
        assert not stored.get("merged"), f"an unexpected merge: {stored}"
    if "supersedes" in expect:
        assert stored.get("superseded") == ids.get(expect["supersedes"]), f"expected it to supersede {expect['supersedes']}, got {stored}"
    else:
        assert "superseded" not in stored, f"an unexpected supersession: {stored}"


def _answer(calls, step, kind):
    """Runs the step's call out of `calls`: `(True, answer)`, or `(False, None)` once the
    error the step expects was checked."""
    assert step["call"] in calls, f"unknown {kind} call {step['call']}"
    answer, error = _attempt(calls[step["call"]])
    if "expectError" in step:
        assert error is not None, f"expected an error, got {answer}"
        _expect_error(error, step["expectError"])
        return False, None
    assert error is None, f"unexpected error {error}"
    return True, answer


def _run_lifecycle_step(engram, step, ids):
    """`getAny`, `history` and `restore` of a memory, `prune` with a request, `flushUses`."""
    memory_id = step.get("literalId") or ids.get(step.get("id"))
    calls = {
        "getAny": lambda: engram.get_any(memory_id),
        "history": lambda: engram.history(memory_id),
        "restore": lambda: engram.restore(memory_id),
        "prune": lambda: engram.prune(step.get("input", {})),
        "flushUses": lambda: engram.flush_uses(),
    }
    answered, answer = _answer(calls, step, "lifecycle")
    if answered:
        _check_call(answer, step.get("expect", {}), ids)


def _import_input(request):
    """An import request with each file's `textRepeat` (`{text, times}`) spelled out."""
    files = request.get("files")
    if isinstance(files, list):
        files = [
            {**{k: v for k, v in f.items() if k != "textRepeat"}, "text": f["textRepeat"]["text"] * f["textRepeat"]["times"]}
            if "textRepeat" in f else f
            for f in files
        ]
    return {**request, "files": files}


def _run_person_step(engram, step, ids, project):
    """A person's operations, as the Rust and JavaScript runners run them."""
    full = step.get("literalId") or ids.get(step.get("id"))
    memory_id = full[:8] if step.get("short") and full else full
    level = step.get("level")
    if step["call"] == "setTrustLevel" and not (isinstance(level, int) and 0 <= level <= 255):
        # WIT passes the level as a u8: a value of another type is refused by the binding
        # before engram sees it, which is this host's typed refusal.
        assert "expectError" in step, f"level {level!r} cannot cross the WIT boundary"
        try:
            engram.set_trust_level(level)
        except EngramError:
            raise
        except Exception:  # noqa: BLE001 - the binding's own type error
            return
        raise AssertionError(f"the binding took level {level!r}")
    calls = {
        "list": lambda: engram.list(step.get("input")),
        "count": lambda: engram.count(step.get("input")),
        "update": lambda: engram.update(memory_id, step.get("input", {}), step.get("confirm") is True),
        "confirm": lambda: engram.confirm(memory_id),
        "flagWrong": lambda: engram.flag_wrong(memory_id, step.get("reason")),
        "pin": lambda: engram.pin(memory_id, step.get("pinned") is not False),
        "teach": lambda: engram.teach(step.get("input", {})),
        "purge": lambda: engram.purge(memory_id),
        "importInstructions": lambda: engram.import_instructions(_import_input(step.get("input", {}))),
        "exportMarkdown": lambda: engram.export_markdown(),
        "health": lambda: engram.health(),
        "trustLevel": lambda: engram.trust_level(),
        "setTrustLevel": lambda: engram.set_trust_level(level),
        "sessionReview": lambda: engram.session_review(step.get("session")),
        "recentSessions": lambda: engram.recent_sessions(step.get("limit")),
        "moduleMap": lambda: engram.module_map(step.get("input", {})),
        "previewTeach": lambda: engram.preview_teach(step.get("input", {})),
        "origins": lambda: engram.origins(memory_id),
        "reset": lambda: engram.reset(step.get("confirm", project)),
    }
    answered, answer = _answer(calls, step, "person")
    if not answered:
        return
    if "as" in step:
        ids[step["as"]] = answer["id"]
    _check_call(answer, step.get("expect", {}), ids)


def _lookup(value, key):
    """A dotted path into an answer: `flags.pinned`, `files.0.rules`."""
    for part in key.split("."):
        if isinstance(value, list) and part.isdigit():
            value = value[int(part)] if int(part) < len(value) else None
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return None
    return value


def _check_call(answer, expect, ids):
    """A lifecycle or person call's answer: `null`, `value`, `fields` (dotted paths),
    `named`, `actions`, `memories` (a page's, by name, in order), `includes`."""
    if expect.get("null"):
        assert answer is None, f"expected null, got {answer}"
        return
    for key, want in expect.get("fields", {}).items():
        got = _lookup(answer, key)
        assert got == want and type(got) is type(want), f"field {key}: {got!r}, expected {want!r}"
    for key, name in expect.get("named", {}).items():
        assert answer.get(key) == ids.get(name), f"field {key}: {answer.get(key)}, expected the id of {name}"
    if "actions" in expect:
        got = [entry["action"] for entry in answer]
        assert got == expect["actions"], f"actions {got}, expected {expect['actions']}"
    if "value" in expect:
        assert answer == expect["value"], f"answered {answer!r}, expected {expect['value']!r}"
    if "memories" in expect:
        got = [m["id"] for m in answer["memories"]]
        assert got == [ids.get(n) for n in expect["memories"]], f"memories {got}, expected {expect['memories']}"
    for part in expect.get("includes", []):
        text = answer if isinstance(answer, str) else json.dumps(answer)
        assert part in text, f"the answer lacks {part!r}"


def _run_agent_step(engram, step, ids):
    """The agent loop: `call` names the method; `shownIds` in the input hold memory names."""
    data = json.loads(json.dumps(step["input"]))
    if isinstance(data.get("shownIds"), list):
        data["shownIds"] = [ids.get(name, name) for name in data["shownIds"]]
    calls = {
        "callTool": lambda: engram.call_tool(data.get("name", ""), data.get("arguments", {})),
        "augment": lambda: engram.augment_tool_result(data),
        "step": lambda: engram.step_injection(data),
        "sessionContext": lambda: engram.session_context(data),
        "getPrompt": lambda: engram.get_prompt(data.get("name", ""), data.get("arguments", {})),
        "calibrate": lambda: engram.record_calibration(data),
        "stepLimit": lambda: engram.step_limit(data),
        "plannerContext": lambda: engram.planner_context(data),
    }
    answered, answer = _answer(calls, step, "agent")
    if not answered:
        return
    if "as" in step:
        ids[step["as"]] = answer["data"]["id"] if "data" in answer else answer["memoryId"]
    expect = step.get("expect", {})
    if expect.get("null"):
        assert answer is None, f"expected null, got {answer}"
        return
    assert answer is not None, "expected an answer, got null"
    shown = answer.get("memoryIds", [])
    for key, want in expect.get("fields", {}).items():
        assert answer.get(key) == want, f"field {key}: {answer.get(key)!r}, expected {want!r}"
    if "kind" in expect:
        assert answer["kind"] == expect["kind"], f"kind {answer['kind']}, expected {expect['kind']}"
    if "memoryIds" in expect:
        want = [ids.get(name) for name in expect["memoryIds"]]
        assert shown == want, f"memoryIds {shown}, expected {expect['memoryIds']}"
    for name in expect.get("includes", []):
        assert ids.get(name) in shown, f"{name} missing from {shown}"
    for name in expect.get("excludes", []):
        assert ids.get(name) not in shown, f"{name} should not be in {shown}"
    for part in expect.get("textContains", []):
        assert part in answer["text"], f"text {answer['text']!r} lacks {part!r}"
    if expect.get("withinBudget"):
        assert answer["tokens"] <= answer["budget"], f"tokens {answer['tokens']} over budget {answer['budget']}"
