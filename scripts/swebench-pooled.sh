#!/usr/bin/env bash
# File localization over several repositories at once, pooled: poses each repository's
# SWE-bench dev instances over its own base commits (scripts/swebench-from-git.sh), runs
# `engram-eval swebench --json` on each, and prints every system's MRR (by the worst gold
# file's rank) and Acc@1/5/10 per repository and pooled over all of them (per instance, so
# small repositories weigh by their size). Needs a local git clone of each repository; not
# part of CI.
#   scripts/swebench-pooled.sh pydata/xarray=<git dir> pylint-dev/pylint=<git dir> ...
# Environment: ENGRAM_EVAL (the engram-eval binary; default: `engram-eval` on PATH, else the release
# build), ENGRAM_EVAL_ARGS (more `engram-eval` options, e.g. "--systems bm25,full"),
# KEEP (a folder to keep the posed instances and JSON reports in; default: a temp folder).
set -euo pipefail
if [ $# -eq 0 ]; then
  echo "usage: $0 <owner/name>=<git dir> [<owner/name>=<git dir> ...]" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
engram="${ENGRAM_EVAL:-}"
if [ -z "$engram" ]; then
  if command -v engram-eval >/dev/null; then
    engram=engram-eval
  else
    engram="${CARGO_TARGET_DIR:-$root/target}/release/engram-eval"
  fi
fi
[ -x "$(command -v "$engram")" ] || {
  echo "no engram-eval binary at $engram (cargo build --release -p engram-eval, or set ENGRAM_EVAL)" >&2
  exit 1
}
work="${KEEP:-$(mktemp -d)}"
mkdir -p "$work"
reports=()
for pair in "$@"; do
  repo="${pair%%=*}" git="${pair#*=}"
  if [ "$repo" = "$pair" ] || [ -z "$git" ]; then
    echo "expected <owner/name>=<git dir>, got: $pair" >&2
    exit 2
  fi
  name="${repo##*/}"
  echo "== $repo" >&2
  bash "$root/scripts/swebench-from-git.sh" "$repo" "$git" "$work/$name" >&2
  # shellcheck disable=SC2086 # ENGRAM_EVAL_ARGS is a list of options
  "$engram" swebench --data "$work/$name/data" --corpora "$work/$name/corpora" \
    --json ${ENGRAM_EVAL_ARGS:-} >"$work/$name.json"
  reports+=("$work/$name.json")
done
python3 - "${reports[@]}" <<'PY'
import json, math, random, sys
from collections import defaultdict

ks = ("Acc@1", "Acc@5", "Acc@10")
# Per system: hits at each k, instances, and the sum of the gold file's reciprocal rank
# (each report's MRR times its instances), so the pooled MRR weighs instances equally.
pooled = defaultdict(lambda: [0, 0, 0, 0, 0.0])
print(f"{'repository':<12} {'system':<13} {'n':>3} {'MRR':>7} " + " ".join(f"{k:>7}" for k in ks))
for path in sys.argv[1:]:
    report = json.load(open(path))
    name = path.rsplit("/", 1)[-1].removesuffix(".json")
    for row in report["results"]:
        n = row["instances"]
        hits = [round(row[k] * n) for k in ks]
        total = pooled[row["system"]]
        for i, h in enumerate(hits):
            total[i] += h
        total[3] += n
        total[4] += row["MRR"] * n
        print(f"{name:<12} {row['system']:<13} {n:>3} {row['MRR']:>7.3f} "
              + " ".join(f"{h:>7}" for h in hits))
print()
for system, (a1, a5, a10, n, rr) in pooled.items():
    print(f"{'pooled':<12} {system:<13} {n:>3} {rr / n:>7.3f} " + " ".join(
        f"{h / n:>7.3f}" for h in (a1, a5, a10)))

# The full pipeline against each other system, instance by instance over all repositories:
# gold ranked higher / lower / same with the two-sided sign test (the reports' `paired`
# rows, summed), and the difference in the gold file's reciprocal rank with the two-sided
# randomization test (100,000 random sign flips of the per-instance differences, from the
# reports' `goldRanks`; the same test the single-repository reports print).
paired = defaultdict(lambda: [0, 0, 0])
ranks = defaultdict(list)
for path in sys.argv[1:]:
    report = json.load(open(path))
    for row in report.get("paired", []):
        total = paired[row["baseline"]]
        total[0] += row["better"]
        total[1] += row["worse"]
        total[2] += row["tied"]
    systems = report.get("goldRanks", {})
    n = len(systems.get("full", []))
    for system, r in systems.items():
        ranks[system].extend(r if len(r) == n else [None] * n)


def randomization_p(deltas, samples=100_000, seed=20261126):
    nonzero = [d for d in deltas if d != 0]
    if not nonzero:
        return 1.0
    observed = abs(sum(nonzero))
    slack = 1e-9 * sum(abs(d) for d in nonzero)
    rng = random.Random(seed)
    extreme = 0
    for _ in range(samples):
        bits = rng.getrandbits(len(nonzero))
        total = 0.0
        for i, d in enumerate(nonzero):
            total += d if bits >> i & 1 else -d
        if abs(total) >= observed - slack:
            extreme += 1
    return (extreme + 1) / (samples + 1)


def reciprocal(rank):
    return 1 / rank if rank else 0.0


if paired:
    print()
    print("pooled, full against each system: gold ranked higher / lower / same with the sign "
          "test p; MRR of the gold file with the randomization test p")
for baseline, (better, worse, tied) in paired.items():
    n = better + worse
    tail = sum(math.comb(n, i) for i in range(min(better, worse) + 1))
    p = min(1.0, 2 * tail / 2**n)
    line = f"  vs {baseline:<13} better {better:>4}  worse {worse:>4}  tied {tied:>4}  p = {p:<7.3g}"
    full, other = ranks.get("full", []), ranks.get(baseline, [])
    if full and len(full) == len(other):
        deltas = [reciprocal(a) - reciprocal(b) for a, b in zip(full, other)]
        line += f"  MRR {sum(deltas) / len(deltas):+.4f}  p = {randomization_p(deltas):.3g}"
    print(line)
PY
