"""A rerank service in the shape of Hugging Face text-embeddings-inference (TEI), scoring
documents by their all-mpnet-base-v2 cosine with the query.

    bash scripts/rerank/fetch-mpnet.sh
    python3 scripts/rerank/service.py ~/.cache/engram/models/all-mpnet-base-v2 --port 8089 \
        --cache ~/.cache/engram/rerank/mpnet.vectors
    engram-eval --rerank-provider tei --rerank-url http://127.0.0.1:8089 cosqa

`POST /rerank` with `{"query": "...", "texts": ["...", ...]}` answers
`[{"index": i, "score": s}, ...]`, best first. This is a bi-encoder used as a reranker: a
second, larger model (768 dimensions, 12 layers, 384 tokens) than the one engram embeds
with, reordering engram's best 20. It is not a cross-encoder — no package registry ships
one — and it runs in NumPy on the CPU, so a first pass over a corpus is slow (about 400
tokens a second on two cores); every vector is kept in the cache file, so later runs only
embed the query.
"""

import argparse
import hashlib
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

KEY_BYTES = 20  # SHA-1 of the UTF-8 text


class VectorCache:
    """Vectors by text hash, in memory and appended to a file (records of hash + float32s)."""

    def __init__(self, dims, path=None):
        self.dims = dims
        self.vectors = {}
        self.file = None
        record = KEY_BYTES + 4 * dims
        if path:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            if os.path.exists(path):
                data = open(path, "rb").read()
                # A torn last record (an interrupted write) is ignored, not misread.
                for offset in range(0, len(data) - record + 1, record):
                    key = data[offset : offset + KEY_BYTES]
                    self.vectors[key] = np.frombuffer(data, np.float32, dims, offset + KEY_BYTES)
                if len(data) % record:
                    with open(path, "r+b") as f:
                        f.truncate(len(data) - len(data) % record)
            self.file = open(path, "ab")

    @staticmethod
    def key(text):
        return hashlib.sha1(text.encode("utf-8")).digest()

    def get_or_embed(self, texts, embed):
        """Vectors for `texts`, embedding (in one call) only those not cached yet."""
        keys = [self.key(t) for t in texts]
        first = {}  # each uncached text once, at its first index
        for i, k in enumerate(keys):
            if k not in self.vectors:
                first.setdefault(k, i)
        missing = list(first.values())
        if missing:
            fresh = embed([texts[i] for i in missing])
            for i, vector in zip(missing, fresh):
                vector = np.asarray(vector, dtype=np.float32)
                self.vectors[keys[i]] = vector
                if self.file:
                    self.file.write(keys[i] + vector.tobytes())
            if self.file:
                self.file.flush()
        return np.stack([self.vectors[k] for k in keys]), len(missing)


class BadRequest(ValueError):
    pass


def parse_request(raw):
    """`(query, texts)` from a TEI rerank body; BadRequest says what is wrong."""
    try:
        body = json.loads(raw)
    except ValueError as e:
        raise BadRequest(f"body is not JSON: {e}") from None
    if not isinstance(body, dict):
        raise BadRequest("body must be a JSON object")
    query, texts = body.get("query"), body.get("texts")
    if not isinstance(query, str):
        raise BadRequest('"query" must be a string')
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise BadRequest('"texts" must be a list of strings')
    return query, texts


def make_server(embed, cache, port=0, log=print):
    """An HTTP server (not yet serving) whose /rerank scores by `embed`'s cosines."""
    lock = threading.Lock()
    embedded = [0]

    def scores(query, texts):
        if not texts:
            return []
        with lock:
            vectors, fresh = cache.get_or_embed([query] + texts, embed)
            before = embedded[0] // 500
            embedded[0] += fresh
            if embedded[0] // 500 > before:
                log(f"{embedded[0]} texts embedded, {len(cache.vectors)} cached", flush=True)
        cosines = vectors[1:] @ vectors[0]
        ranked = sorted(range(len(texts)), key=lambda i: -cosines[i])
        return [{"index": i, "score": float(cosines[i])} for i in ranked]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, status, payload):
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            if self.path.rstrip("/") != "/rerank":
                self.answer(404, {"error": f"no route {self.path}; POST /rerank"})
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
                query, texts = parse_request(self.rfile.read(length))
            except (BadRequest, ValueError) as e:
                self.answer(400, {"error": str(e)})
                return
            self.answer(200, scores(query, texts))

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", help="all-mpnet-base-v2 (scripts/rerank/fetch-mpnet.sh)")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--cache", help="file that keeps every vector between runs")
    args = parser.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from mpnet import HIDDEN, MPNet

    model = MPNet(args.model_dir)
    cache = VectorCache(HIDDEN, args.cache)
    server = make_server(model.embed, cache, args.port)
    print(f"rerank service on http://127.0.0.1:{server.server_port} "
          f"({len(cache.vectors)} cached vectors)", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
