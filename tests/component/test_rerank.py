"""The rerank stage in the component under wasmtime: a rerank service (a local HTTP server
speaking the TEI and Cohere shapes, started here) reached over wasi:http reorders the best
candidates, its ranks fused with engram's; a service that is down leaves the order with a warning; a bad provider is a
typed error."""

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from host import ComponentHost, EngramError
from test_component import COMPONENT, TOKEN, server  # noqa: F401 (fixture)

QUERY = "deploy release staging"
MEMORIES = [
    "staging staging staging is reset every night",
    "deploy to staging before each release",
    "release notes are generated from commit messages",
]


def score(query, document):
    """The service prefers the memory engram ranks last, then query words present."""
    if document.startswith("release notes"):
        return 10.0
    return float(sum(1 for word in query.lower().split() if word in document.lower()))


class Service(BaseHTTPRequestHandler):
    requests = 0

    def do_POST(self):  # noqa: N802 (the http.server API)
        Service.requests += 1
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        tei = self.path == "/rerank"
        documents = request["texts"] if tei else request["documents"]
        scored = sorted(
            ({"index": i, "score": score(request["query"], d)} for i, d in enumerate(documents)),
            key=lambda r: -r["score"],
        )
        if not tei:
            scored = {"results": [{"index": r["index"], "relevance_score": r["score"]} for r in scored]}
        body = json.dumps(scored).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def service():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Service)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def host():
    return ComponentHost(COMPONENT)


def filled(host, server, reranker=None):  # noqa: F811
    engram = host.open(server, TOKEN, f"rerank-{uuid.uuid4()}", reranker=reranker)
    for content in MEMORIES:
        engram.remember({"type": "gotcha", "content": content})
    return engram


def contents(response):
    return [h["memory"]["content"] for h in response["hits"]]


def test_a_rerank_service_reorders_the_best_candidates(server, host, service):  # noqa: F811
    plain = filled(host, server).search(QUERY)
    assert contents(plain) == [MEMORIES[1], MEMORIES[0], MEMORIES[2]]
    for spec in ({"provider": "tei", "url": service}, {"provider": "cohere", "url": f"{service}/v2", "model": "m"}):
        before = Service.requests
        found = filled(host, server, spec).search(QUERY)
        assert Service.requests == before + 1
        assert found.get("warnings", []) == []
        # The service's ranks are fused with engram's (1/(60 + rank) each): its favourite,
        # engram's last, rises past the one both rank below engram's first, which stays.
        assert [h["breakdown"]["rerank"] for h in found["hits"]] == [3.0, 10.0, 1.0]
        assert [h["breakdown"]["rerankRank"] for h in found["hits"]] == [2, 1, 3]
        assert contents(found) == [MEMORIES[1], MEMORIES[2], MEMORIES[0]]


def test_a_service_that_is_down_keeps_the_order(server, host):  # noqa: F811
    plain = contents(filled(host, server).search(QUERY))
    found = filled(host, server, {"provider": "tei", "url": "http://127.0.0.1:9"}).search(QUERY)
    assert contents(found) == plain
    assert found["warnings"][0].startswith("rerank skipped: rerank service unreachable")


def test_a_bad_reranker_is_a_typed_error(server, host):  # noqa: F811
    for spec, field in (({"provider": "bm25", "url": "http://x"}, "reranker.provider"),
                        ({"provider": "cohere", "url": "http://x"}, "reranker.model")):
        with pytest.raises(EngramError) as error:
            host.open(server, TOKEN, "rerank-bad", reranker=spec)
        assert error.value.code == "invalid_input"
        assert error.value.violations[0][0] == field
