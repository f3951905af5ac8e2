"""Code intelligence inside the component under wasmtime: the cross-host chunking vectors
and a real 88 KB Rust file."""

import json
import re

from test_component import ROOT, host  # noqa: F401 (fixture)


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
