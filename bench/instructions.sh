#!/usr/bin/env bash
# Instructions per search, counted by valgrind's callgrind: a steady figure for comparing
# two builds on a shared machine, where wall-clock p50s drift by a third between runs (between
# runs of one build, the count per measured query moves by about 1% as hash seeds vary the
# set-up, and the count in `Engram::search` by 0.2% or less). It runs the latency
# benchmark twice under callgrind, with N and N + 200 queries, and divides the difference by
# 200, so set-up (building the corpus, loading resident sets) cancels out; then it prints the
# instructions in `Engram::search` alone (the benchmark's own per-query measurements and the
# set-up's run-to-run variation left out) and the functions that cost the most per search.
#
#   bash bench/instructions.sh [SEARCH_BENCH] [SIZE] [FUNCTIONS]
#
# SEARCH_BENCH defaults to a release build of engram-conformance's search_bench example,
# SIZE to 10000 memories, FUNCTIONS (how many to list) to 25. BENCH_ONLY picks the
# configuration (default "native, hybrid (resident, both)": the in-process hybrid search;
# "HTTP test server, hybrid (resident" for the same over HTTP, where the test server runs
# in the benchmark's process, so the counts hold both ends); BENCH_DIR and BENCH_NO_ANN
# pass through to the benchmark (set BENCH_DIR for HTTP: the server then serves a copy of
# the filled embedded database, where filling 10K memories over HTTP under callgrind takes
# half an hour). Needs valgrind (apt: valgrind) and python3.
# Counts include the benchmark's own per-query work (its separate in-process pick
# measurements), which is the same in both builds.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "bench/instructions.sh needs valgrind (apt-get install valgrind)" >&2; exit 1; }
bench="${1:-}"
if [ -z "$bench" ]; then
  cargo build -q --release -p engram-eval --example search_bench
  bench="${CARGO_TARGET_DIR:-target}/release/examples/search_bench"
fi
size="${2:-10000}"
functions="${3:-25}"
export BENCH_ONLY="${BENCH_ONLY:-native, hybrid (resident, both)}"
base=30
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for queries in "$base" "$((base + 200))"; do
  echo "callgrind: $bench $size $queries ($BENCH_ONLY)..." >&2
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.$queries" "$bench" "$size" "$queries" \
    >"$out/log.$queries" 2>&1 || { cat "$out/log.$queries" >&2; exit 1; }
  callgrind_annotate --inclusive=yes --threshold=100 "$out/cg.$queries" >"$out/inclusive.$queries"
done
python3 - "$out/inclusive.$base" "$out/inclusive.$((base + 200))" "$functions" <<'EOF'
import re
import sys

def costs(path):
    """Inclusive instruction count per function name (callgrind_annotate's table)."""
    table = {}
    for line in open(path):
        match = re.match(r"^\s*([\d,]+) \([^)]*\)\s+(.+?)\s*$", line)
        if match:
            name = match.group(2)
            table[name] = table.get(name, 0) + int(match.group(1).replace(",", ""))
    return table

before, after, shown = costs(sys.argv[1]), costs(sys.argv[2]), int(sys.argv[3])
per_search = {
    name: (after.get(name, 0) - before.get(name, 0)) / 200 for name in set(before) | set(after)
}
total = per_search.pop("PROGRAM TOTALS", 0)
search = sum(cost for name, cost in per_search.items() if "Engram<D>>::search::{{closure}} " in name)
print(f"instructions per measured query: {total / 1e6:.3f} M; in Engram::search: {search / 1e6:.3f} M")
# Frames every query passes through (main, the runtime) cost the whole; leave them out.
rows = sorted(
    ((cost, name) for name, cost in per_search.items() if cost < 0.98 * total),
    reverse=True,
)
print(f"{'M per search':>13}  function (inclusive)")
for cost, name in rows[:shown]:
    print(f"{cost / 1e6:13.3f}  {name[:150]}")
EOF
