#!/usr/bin/env python3
"""Fits the relevance calibration (crates/engram-retrieval/src/scoring/relevance.rs).

Input: the JSON lines `engram-eval rules|cosqa --features-out FILE` appends, one per hit
of each query's top 50 (its dense similarity, term coverage, and whether it is relevant),
for the dataset's own queries and for the other dataset's queries run against the same
store (datasets named `<store>-unrelated`: every hit there is unrelated).

The fit: labelled relevant hits against hits of unrelated queries, every (dataset, class)
group weighing the same, by logistic regression (Newton's method, a small ridge term).
Unlabelled hits of a dataset's own queries are left out of the fit — the labels name one
gold function or the rules of one heading, so some of them are relevant too. With both
classes weighed the same, a relevance of 0.5 means evidence as typical of a relevant hit
as of an unrelated one, whatever the share of relevant memories in a store.

Output: the weights with the dense path (bias, similarity, coverage) and keyword-only
(bias, coverage); per dataset, hits binned by predicted relevance; and, for a range of
search cuts, the share of relevant hits a search keeps and the share of unrelated queries
it answers with nothing.

    python3 scripts/fit-relevance.py FEATURES.jsonl
"""

import json
import sys

import numpy as np


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def features(rows, dense):
    if dense:
        return np.array([[1.0, r["similarity"] or 0.0, r["coverage"]] for r in rows])
    return np.array([[1.0, r["coverage"]] for r in rows])


def unrelated(row):
    return row["dataset"].endswith("-unrelated")


def fit(x, y, w, ridge=1e-3, steps=100):
    beta = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-x @ beta))
        grad = x.T @ (w * (y - p)) - ridge * beta
        hess = (x.T * (w * p * (1 - p))) @ x + ridge * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        beta += step
        if np.abs(step).max() < 1e-10:
            break
    return beta


def predict(rows, dense, beta):
    return 1.0 / (1.0 + np.exp(-features(rows, dense) @ beta))


def report(rows, dense, beta):
    p = predict(rows, dense, beta)
    edges = [0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 1.01]
    for dataset in sorted({r["dataset"] for r in rows}):
        for label, keep in [("relevant", lambda r: r["relevant"]),
                            ("unlabelled", lambda r: not r["relevant"])]:
            mask = np.array([r["dataset"] == dataset and keep(r) for r in rows])
            if mask.sum() == 0 or (label == "unlabelled" and unrelated(rows[0]) and False):
                continue
            counts = [int((mask & (p >= lo) & (p < hi)).sum()) for lo, hi in zip(edges, edges[1:])]
            shares = " ".join(f"{c / mask.sum():5.2f}" for c in counts)
            print(f"  {dataset:16s} {label:10s} {mask.sum():6d} hits  by relevance "
                  f"[0 .05 .1 .2 .35 .5 .65 .8]: {shares}")
    print("  cut   relevant hits kept   unrelated queries answered with nothing")
    for cut in [0.05, 0.1, 0.15, 0.2, 0.3, 0.5]:
        parts = []
        for dataset in sorted({r["dataset"] for r in rows if not unrelated(r)}):
            gold = np.array([r["dataset"] == dataset and r["relevant"] for r in rows])
            kept = (gold & (p >= cut)).sum() / max(gold.sum(), 1)
            other = [i for i, r in enumerate(rows) if r["dataset"] == dataset + "-unrelated"]
            queries = {}
            for i in other:
                queries[rows[i]["query"]] = max(queries.get(rows[i]["query"], 0.0), p[i])
            empty = sum(1 for best in queries.values() if best < cut) / max(len(queries), 1)
            parts.append(f"{dataset} {kept:.3f} / {empty:.3f}")
        print(f"  {cut:4.2f}  " + "   ".join(parts))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = load(sys.argv[1])
    for dense, name in [(True, "WITH_DENSE (bias, similarity, coverage)"),
                        (False, "KEYWORD_ONLY (bias, coverage)")]:
        part = [r for r in rows if r["denseRan"] == dense]
        train = [r for r in part if r["relevant"] or unrelated(r)]
        if not train:
            print(f"{name}: no hits")
            continue
        groups = {}
        for r in train:
            key = (r["dataset"].removesuffix("-unrelated"), r["relevant"])
            groups[key] = groups.get(key, 0) + 1
        w = np.array([len(train) / len(groups) / groups[(r["dataset"].removesuffix("-unrelated"), r["relevant"])]
                      for r in train])
        y = np.array([1.0 if r["relevant"] else 0.0 for r in train])
        beta = fit(features(train, dense), y, w)
        print(f"{name}: [{', '.join(f'{b:.2f}' for b in beta)}]")
        report(part, dense, beta)


if __name__ == "__main__":
    main()
