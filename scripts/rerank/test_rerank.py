"""Unit tests of the rerank service's parts that need no model (python3 -m pytest scripts/rerank).

The service's HTTP contract runs here against a fake embedder (letter counts); the real
model's figures come from `engram-eval` against the running service (docs/retrieval.md, "Rerank").
"""

import json
import math
import os
import sys
import threading
import urllib.error
import urllib.request

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpnet import erf, position_bucket  # noqa: E402
from service import VectorCache, make_server  # noqa: E402


def test_position_buckets_are_exact_near_and_log_spaced_far_in_each_direction():
    relative = np.array([0, -1, -7, -8, -20, -127, -200, 1, 7, 20, 200])
    # Keys before the query use buckets 0-15, keys after it 16-31.
    assert position_bucket(relative).tolist() == [0, 1, 7, 8, 10, 15, 15, 17, 23, 26, 31]


def test_erf_matches_the_standard_library_to_float32_precision():
    xs = np.linspace(-6, 6, 2001, dtype=np.float32)
    ours = erf(xs)
    exact = np.array([math.erf(float(x)) for x in xs])
    assert ours.dtype == np.float32
    assert np.max(np.abs(ours - exact)) < 5e-7


def fake_embed(texts):
    """Fake model: a unit vector of letter counts."""
    out = np.zeros((len(texts), 26), dtype=np.float32)
    for row, text in enumerate(texts):
        for ch in text.lower():
            if "a" <= ch <= "z":
                out[row, ord(ch) - 97] += 1
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def test_the_cache_embeds_each_text_once_and_survives_a_torn_record(tmp_path):
    path = str(tmp_path / "v.bin")
    calls = []

    def counting(texts):
        calls.append(list(texts))
        return fake_embed(texts)

    cache = VectorCache(26, path)
    vectors, fresh = cache.get_or_embed(["abc", "xyz", "abc"], counting)
    assert fresh == 2 and calls == [["abc", "xyz"]]
    assert np.allclose(vectors[0], vectors[2])
    cache.file.close()
    with open(path, "ab") as f:
        f.write(b"torn")
    reopened = VectorCache(26, path)
    assert len(reopened.vectors) == 2
    assert os.path.getsize(path) == 2 * (20 + 4 * 26)
    _, fresh = reopened.get_or_embed(["xyz", "new"], counting)
    assert fresh == 1 and calls[-1] == ["new"]


@pytest.fixture
def server():
    srv = make_server(fake_embed, VectorCache(26), port=0, log=lambda *a, **k: None)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()


def post(url, body):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="POST")
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_rerank_answers_every_index_once_best_first(server):
    status, body = post(server + "/rerank", {"query": "aaa", "texts": ["zzz", "aab", "aaa"], "truncate": True})
    assert status == 200
    assert [r["index"] for r in body] == [2, 1, 0]
    assert body[0]["score"] == pytest.approx(1.0)
    assert body[2]["score"] == pytest.approx(0.0)


def test_no_texts_get_no_scores(server):
    assert post(server + "/rerank", {"query": "q", "texts": []}) == (200, [])


@pytest.mark.parametrize("body, message", [
    (b"{not json", "not JSON"),
    ({"texts": ["a"]}, '"query"'),
    ({"query": "q", "texts": ["a", 3]}, '"texts"'),
    ([1, 2], "object"),
])
def test_bad_requests_are_refused_with_the_reason(server, body, message):
    status, answer = post(server + "/rerank", body)
    assert status == 400
    assert message in answer["error"]


def test_other_routes_are_not_found(server):
    status, answer = post(server + "/embed", {"inputs": "q"})
    assert status == 404
    assert "/rerank" in answer["error"]
