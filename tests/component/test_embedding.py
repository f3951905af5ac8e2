"""The embedding model inside the component under wasmtime: the reference vectors
(tests/vectors/embeddings.json, cosine >= 0.99) and hybrid search with the model."""

import json
import math
import os
import time
import urllib.request
from pathlib import Path

import pytest

from host import ComponentHost, EngramError
from test_component import COMPONENT, ROOT, TOKEN, server  # noqa: F401 (fixture)

MODEL_DIR = Path(os.environ.get("ENGRAM_MODEL_DIR", Path.home() / ".cache/engram/models")) / "all-minilm-l6-v2-int8"


@pytest.fixture(scope="module")
def host():
    # The model folder is preopened read-only at /model.
    return ComponentHost(COMPONENT, preopen=MODEL_DIR)


@pytest.fixture(scope="module")
def model(host):
    started = time.perf_counter()
    loaded = host.load_model_dir("/model")
    print(f"component model load from a preopened dir: {(time.perf_counter() - started) * 1000:.0f} ms")
    return loaded


def test_model_bytes_through_the_boundary_give_the_same_vectors(host, model):
    loaded = host.load_model((MODEL_DIR / "model.onnx").read_bytes(), (MODEL_DIR / "tokenizer.json").read_bytes())
    text = ["fn main() { println!(\"hi\"); }"]
    assert cosine(loaded.embed(text)[0], model.embed(text)[0]) > 0.99999


def test_missing_model_dir_is_a_typed_error(host):
    with pytest.raises(EngramError) as error:
        host.load_model_dir("/model/nowhere")
    assert error.value.code == "model_error"
    assert "cannot read /model/nowhere/model.onnx" in str(error.value)


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_reference_vectors_in_wasmtime(model):
    reference = json.loads((ROOT / "tests/vectors/embeddings.json").read_text())
    assert model.model_id == "all-minilm-l6-v2-int8"
    assert model.dims == 384
    texts = [r["text"] for r in reference["texts"]]
    started = time.perf_counter()
    vectors = model.embed(texts)
    per_text = (time.perf_counter() - started) * 1000 / len(texts)
    assert len(vectors) == len(texts)
    worst = 1.0
    for record, vector in zip(reference["texts"], vectors):
        assert len(vector) == 384
        c = cosine(vector, record["embedding"])
        worst = min(worst, c)
        assert c >= 0.99, f"cosine {c} for {record['text'][:40]!r}"
    print(f"component model: {per_text:.1f} ms/text over the reference set, worst cosine {worst:.6f}")


def test_hybrid_search_with_the_model(server, host, model):  # noqa: F811
    engram = host.open(server, TOKEN, f"model-{time.time_ns()}", model=model)
    locked = engram.remember({"type": "error_pattern",
                              "content": "SQLite reports 'database is locked' when two test processes share one database file"})
    assert locked["embeddingModel"] == "all-minilm-l6-v2-int8"
    engram.remember({"type": "preference", "content": "Use CSS grid instead of flexbox for the dashboard layout"})
    paraphrase = "parallel unit runs collide on the same storage"
    assert engram.search({"text": paraphrase, "mode": "keyword"})["hits"] == []
    dense = engram.search({"text": paraphrase, "mode": "dense"})
    assert dense["hits"][0]["memory"]["id"] == locked["id"]
    assert engram.embed_pending(10) == {"embedded": 0, "remaining": 0}


def test_memories_stored_without_the_model_are_embedded_later(server, host, model):  # noqa: F811
    project = f"pending-{time.time_ns()}"
    plain = host.open(server, TOKEN, project)
    stored = plain.remember({"type": "gotcha", "content": "run make schema after editing proto files"})
    assert "embeddingModel" not in stored
    with_model = host.open(server, TOKEN, project, model=model)
    assert with_model.embed_pending(10) == {"embedded": 1, "remaining": 0}
    found = with_model.search({"text": "regenerate code from protobuf definitions", "mode": "dense"})
    assert found["hits"][0]["memory"]["id"] == stored["id"]


def test_resident_vectors_find_what_the_exact_scan_finds(server, host, model):  # noqa: F811
    project = f"resident-{time.time_ns()}"
    exact = host.open(server, TOKEN, project, model=model)
    resident = host.open(server, TOKEN, project, model=model, resident_vectors=True)
    for content in ["SQLite reports 'database is locked' when two test processes share one file",
                    "Use CSS grid instead of flexbox for the dashboard layout",
                    "Vite picks another port when 5173 is taken; set strictPort in CI"]:
        exact.remember({"type": "gotcha", "content": content})
    ranked = lambda r: [(h["memory"]["id"], h["breakdown"]["dense"]["rank"]) for h in r["hits"]]  # noqa: E731
    query = {"text": "parallel unit runs collide on the same storage", "mode": "dense"}
    # Loaded ahead of the first search: every vector of the project.
    assert exact.load_resident_vectors() == 0
    assert resident.load_resident_vectors() == 3
    assert ranked(resident.search(query)) == ranked(exact.search(query))
    # Another instance's write reaches the resident set with the next search.
    newer = exact.remember({"type": "gotcha", "content": "Two pytest workers writing one SQLite file lock each other out"})
    found = resident.search(query)
    assert newer["id"] in [h["memory"]["id"] for h in found["hits"]]
    assert ranked(found) == ranked(exact.search(query))
    with pytest.raises(EngramError) as error:
        host.open(server, TOKEN, project, resident_vectors=True)
    assert error.value.code == "invalid_input"


def server_rows(url, sql):
    """Rows of one statement run on the test server directly, over Hrana."""
    body = json.dumps({"requests": [{"type": "execute", "stmt": {"sql": sql}}, {"type": "close"}]}).encode()
    request = urllib.request.Request(f"{url}/v3/pipeline", data=body, method="POST", headers={
        "authorization": f"Bearer {TOKEN}", "content-type": "application/json"})
    with urllib.request.urlopen(request) as response:
        result = json.load(response)["results"][0]["response"]["result"]
    return [[value.get("value") for value in row] for row in result["rows"]]


def test_vector_index_ranks_as_the_exact_scan(server, host, model):  # noqa: F811
    project = f"vector-index-{time.time_ns()}"
    exact = host.open(server, TOKEN, project, model=model)
    exact.remember({"type": "gotcha", "content": "SQLite reports 'database is locked' when two test processes share one file"})
    indexed = host.open(server, TOKEN, project, model=model, vector_index=True)
    # Stored after the index exists by an instance without it: the triggers index it.
    for content in ["Use CSS grid instead of flexbox for the dashboard layout",
                    "Vite picks another port when 5173 is taken; set strictPort in CI",
                    "Two pytest workers writing one SQLite file lock each other out"]:
        exact.remember({"type": "gotcha", "content": content})
    index = server_rows(server, "SELECT tbl_name, sql FROM sqlite_master WHERE sql LIKE '%libsql_vector_idx%'")
    assert len(index) == 1 and "compress_neighbors=float8" in index[0][1]
    stored = server_rows(server, f"SELECT count(*) FROM {index[0][0]} v JOIN memories m ON m.id = v.memory_id "
                                 f"WHERE m.project_id = '{project}'")
    assert int(stored[0][0]) == 4
    ranked = lambda r: [(h["memory"]["id"], h["breakdown"]["dense"]["rank"]) for h in r["hits"]]  # noqa: E731
    for text in ["parallel unit runs collide on the same storage", "dev server port taken"]:
        query = {"text": text, "mode": "dense"}
        assert ranked(indexed.search(query)) == ranked(exact.search(query))
    with pytest.raises(EngramError) as error:
        host.open(server, TOKEN, project, vector_index=True)
    assert error.value.code == "invalid_input"


def test_garbage_model_bytes_are_a_typed_error(host):  # noqa: F811
    with pytest.raises(EngramError) as error:
        host.load_model(b"\x01\x02\x03", b"{}")
    assert error.value.code == "model_error"


def test_resident_keywords_give_the_keyword_paths_results(server, host):  # noqa: F811
    project = f"resident-keywords-{time.time_ns()}"
    plain = host.open(server, TOKEN, project)
    resident = host.open(server, TOKEN, project, resident_keywords=True)
    for content in ["SQLite reports 'database is locked' when two test processes share one file",
                    "Use CSS grid instead of flexbox for the dashboard layout",
                    "Vite picks another port when 5173 is taken; set strictPort in CI",
                    "The database pool is exhausted under load; raise its size"]:
        plain.remember({"type": "gotcha", "content": content})
    ranked = lambda r: [(h["memory"]["id"], h["breakdown"]["keyword"]["rank"]) for h in r["hits"]]  # noqa: E731
    query = {"text": "database locked by another test process", "mode": "keyword"}
    assert plain.load_resident_keywords() == 0
    assert resident.load_resident_keywords() >= 4
    assert ranked(resident.search(query)) == ranked(plain.search(query))
    newer = plain.remember({"type": "gotcha", "content": "Two test processes lock one database file"})
    found = resident.search(query)
    assert newer["id"] in [h["memory"]["id"] for h in found["hits"]]
    assert ranked(found) == ranked(plain.search(query))
