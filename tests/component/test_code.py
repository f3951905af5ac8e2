"""Code intelligence inside the component under wasmtime: the cross-host chunking and graph
vectors, a real 88 KB Rust file, and indexing + impact analysis against the libSQL test
server over wasi:http."""

import json
import re

import time

from test_component import ROOT, TOKEN, host, pipeline_requests, server  # noqa: F401 (fixtures)


def test_chunking_vectors_pass_in_wasmtime(host):  # noqa: F811
    cases = json.loads((ROOT / "tests/vectors/chunking.json").read_text())["cases"]
    for case in cases:
        chunks = host.chunk_file(case["path"], case["source"], case["maxChars"])
        got = [{k: c[k] for k in ("kind", "name", "startLine", "endLine")} for c in chunks]
        assert got == case["chunks"], case["path"]


def test_a_real_file_chunks_with_nothing_lost(host):  # noqa: F811
    source = (ROOT / "crates/engram-code/tests/fixtures/chunking/hashbrown_set_rs.txt").read_text()
    chunks = host.chunk_file("src/set.rs", source)
    assert len(chunks) > 50
    assert all(len(c["content"].encode()) <= 1500 for c in chunks)
    assert re.sub(r"\s", "", "".join(c["content"] for c in chunks)) == re.sub(r"\s", "", source)
    assert any(c["kind"] == "method" and c["name"] == "HashSet::contains" for c in chunks)


def test_graph_vectors_pass_in_wasmtime(host):  # noqa: F811
    cases = json.loads((ROOT / "tests/vectors/graph.json").read_text())["cases"]
    assert len(cases) == 6
    for case in cases:
        graph = host.code_graph(case["files"])
        assert [[n["id"], n["startLine"], n["endLine"]] for n in graph["nodes"]] == case["nodes"], case["name"]
        assert [[e["kind"], e["from"], e["to"], e["weight"]] for e in graph["edges"]] == case["edges"], case["name"]


def test_index_and_impact_over_wasi_http(server, host):  # noqa: F811
    engram = host.open(server, TOKEN, f"code-{time.time_ns()}")
    files = json.loads((ROOT / "tests/vectors/graph.json").read_text())["cases"][0]["files"]
    report = engram.index_files(files)
    assert (report["files"], report["added"]) == (3, 3)
    stored = engram.remember({"type": "gotcha", "content": "Store.get returns a copy",
                              "targetNodeId": "src/store.ts#method:Store.get"})
    impact = engram.analyze_impact("src/store.ts#method:Store.get")
    assert ["src/cache.ts#method:Cache.warm", 1] in [[n["id"], n["depth"]] for n in impact["impacted"]]
    assert [m["id"] for m in impact["memories"]] == [stored["id"]]
    before = pipeline_requests(server)
    engram.analyze_impact("src/store.ts")
    assert pipeline_requests(server) - before == 1
    assert [n["path"] for n in engram.neighbours(["src/cache.ts"])] == ["src/store.ts", "src/index.ts"]
    assert engram.dependencies("src/index.ts")["files"][0]["path"] == "src/cache.ts"
    assert engram.mark_stale(["src/store.ts"]) > 0
    edited = [dict(f) for f in files]
    edited[0]["content"] = edited[0]["content"].replace("return { id };", "return { id: id + 0 };")
    report = engram.index_files(edited)
    assert report["changed"] == 1
    # The class encloses the method: its text changed too.
    assert report["changedSymbols"] == ["src/store.ts#class:Store", "src/store.ts#method:Store.get"]
    assert [f["id"] for f in report["flagged"]] == [stored["id"]]
    assert engram.get(stored["id"])["flags"]["needsReview"] is True
