#!/usr/bin/env bash
# A held-out check beyond pytest: poses the SWE-bench dev instances of another repository
# (xarray, pylint, requests, seaborn, flask) to `engram-eval swebench`, each over the
# source tree of its own base commit taken from a local git clone. Registries hold no
# per-commit sources, so this needs the clone and is not part of CI.
#   scripts/swebench-from-git.sh <owner/name> <git dir> <out dir>
# then: engram-eval swebench --data <out>/data --corpora <out>/corpora
# Each commit is posed as a "release" named after its first 10 hex digits.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 <owner/name> <git dir> <out dir>" >&2
  exit 2
fi
repo=$1 git=$2 out=$3
root="$(cd "$(dirname "$0")/.." && pwd)"
instances="${ENGRAM_EVAL_DIR:-$root/../shared/eval}/swebench/dev_instances.jsonl"
[ -f "$instances" ] || { echo "no SWE-bench instances at $instances" >&2; exit 1; }
mkdir -p "$out/data/swebench" "$out/corpora"
commits=$(python3 - "$repo" "$instances" "$out/data/swebench/dev_instances.jsonl" <<'PY'
import json, sys
repo, source, target = sys.argv[1:]
seen = set()
with open(target, "w") as out:
    for line in open(source):
        row = json.loads(line)
        if row["repo"] != repo:
            continue
        row["pypi_version"] = row["base_commit"][:10]
        out.write(json.dumps(row) + "\n")
        seen.add(row["base_commit"])
print(" ".join(sorted(seen)))
PY
)
[ -n "$commits" ] || { echo "no dev instances of $repo" >&2; exit 1; }
for commit in $commits; do
  tree="$out/corpora/pytest-${commit:0:10}"
  [ -e "$tree/.complete" ] && continue
  rm -rf "$tree" && mkdir -p "$tree"
  git --git-dir="$git" archive "$commit" | tar -x -C "$tree"
  touch "$tree/.complete"
  echo "  ${commit:0:10}"
done
echo "$(echo "$commits" | wc -w) trees under $out/corpora; instances in $out/data"
