#!/usr/bin/env python3
"""Size, speed and recall of libSQL's vector index (DiskANN) for one set of index options,
on real MiniLM vectors: the ones `engram-eval` caches (~/.cache/engram/eval-cq from
`engram-eval cosqa`; for more than 6,267 vectors also ~/.cache/engram/eval-pooled and
~/.cache/engram/eval, from the SWE-bench evals). The 500 CoSQA dev queries are the queries.

It builds the index as engram does (created empty, then filled row by row), asks it for
`--candidates` neighbours per query and re-ranks them by exact cosine, as the dense path
does, and reports the recall of the exact top 30 and the time per query, with the exact
scan's time beside it. This is how engram's `INDEX_OPTIONS` (crates/engram/src/
vector_index.rs) were chosen.

    python3 -m pip install libsql==0.1.11 numpy==2.4.6
    python3 scripts/vector-index-options.py --size 20000 \
        --options "compress_neighbors=float8 max_neighbors=32"
    python3 scripts/vector-index-options.py --size 6000 --options ""   # libSQL's defaults
"""

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import libsql
import numpy as np

MODEL = "all-minilm-l6-v2-int8"
DIMS = 384
RECORD = 32 + 4 * DIMS
CACHE = Path.home() / ".cache" / "engram"
TOP = 30


def load(path):
    """Keys (sha256 of model id, NUL, text) and vectors of one eval vector cache file."""
    data = path.read_bytes()
    n = len(data) // RECORD
    rows = np.frombuffer(data[: n * RECORD], dtype=np.uint8).reshape(n, RECORD)
    keys = [bytes(r[:32]) for r in rows]
    vectors = rows[:, 32:].copy().view("<f4").reshape(n, DIMS)
    return keys, vectors


def key(text):
    digest = hashlib.sha256()
    digest.update(MODEL.encode())
    digest.update(b"\0")
    digest.update(text.encode())
    return digest.digest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=6000, help="vectors indexed")
    parser.add_argument("--options", default="compress_neighbors=float8 max_neighbors=32",
                        help="libsql_vector_idx options besides metric=cosine, space-separated")
    parser.add_argument("--candidates", type=int, default=240,
                        help="neighbours asked of the index (engram asks 8 x 30)")
    parser.add_argument("--eval", default=str(Path(__file__).resolve().parents[2] / "shared" / "eval"),
                        help="the eval data folder (../shared/eval)")
    args = parser.parse_args()

    cosqa = CACHE / "eval-cq" / f"{MODEL}.vectors"
    if not cosqa.exists():
        sys.exit(f"{cosqa} is missing: run `engram-eval cosqa` first")
    keys, vectors = load(cosqa)
    queries = json.loads((Path(args.eval) / "cosqa" / "cosqa-retrieval-dev-500.json").read_text())
    position = {k: i for i, k in enumerate(keys)}
    try:
        query_rows = [position[key(q["doc"])] for q in queries]
    except KeyError:
        sys.exit(f"{cosqa} lacks the CoSQA query vectors: run `engram-eval cosqa` first")
    asked = set(query_rows)
    corpus = vectors[[i for i in range(len(keys)) if i not in asked]]
    for extra in ("eval-pooled", "eval"):
        if len(corpus) >= args.size:
            break
        path = CACHE / extra / f"{MODEL}.vectors"
        if path.exists():
            corpus = np.concatenate([corpus, load(path)[1]])
    if len(corpus) < args.size:
        sys.exit(f"only {len(corpus)} cached vectors; run the SWE-bench evals for more")
    corpus = corpus[: args.size]
    wanted = vectors[query_rows]

    with tempfile.TemporaryDirectory() as work:
        db = libsql.connect(os.path.join(work, "index.db"))
        db.execute(f"CREATE TABLE v (id INTEGER PRIMARY KEY, e F32_BLOB({DIMS}) NOT NULL)")
        options = "".join(f", '{o}'" for o in args.options.split())
        db.execute(f"CREATE INDEX v_ann ON v (libsql_vector_idx(e, 'metric=cosine'{options}))")
        started = time.time()
        for start in range(0, len(corpus), 500):
            end = min(len(corpus), start + 500)
            db.executemany("INSERT INTO v (id, e) VALUES (?, ?)",
                           [(i + 1, corpus[i].astype("<f4").tobytes()) for i in range(start, end)])
            db.commit()
        built = time.time() - started
        size = os.path.getsize(os.path.join(work, "index.db"))

        exact = np.argsort(-(wanted @ corpus.T), axis=1)[:, :TOP] + 1
        recalls, times = [], []
        for n, query in enumerate(wanted):
            blob = query.astype("<f4").tobytes()
            started = time.perf_counter()
            rows = db.execute(
                f"SELECT v.id FROM vector_top_k('v_ann', ?, {args.candidates}) t "
                f"JOIN v ON v.rowid = t.id ORDER BY vector_distance_cos(v.e, ?) LIMIT {TOP}",
                (blob, blob)).fetchall()
            times.append((time.perf_counter() - started) * 1000)
            recalls.append(len({r[0] for r in rows} & set(exact[n].tolist())) / TOP)
        scans = []
        for query in wanted[:100]:
            blob = query.astype("<f4").tobytes()
            started = time.perf_counter()
            db.execute(f"SELECT id FROM v ORDER BY vector_distance_cos(e, ?) LIMIT {TOP}",
                       (blob,)).fetchall()
            scans.append((time.perf_counter() - started) * 1000)

    print(f"{args.size} vectors, options '{args.options}', {args.candidates} candidates: "
          f"built in {built:.1f} s, {size / args.size / 1000:.1f} KB per vector; "
          f"search p50 {np.median(times):.2f} ms (p95 {np.percentile(times, 95):.2f}); "
          f"recall@{TOP} {np.mean(recalls):.4f} (worst query {min(recalls):.2f}); "
          f"exact scan p50 {np.median(scans):.2f} ms")


if __name__ == "__main__":
    main()
