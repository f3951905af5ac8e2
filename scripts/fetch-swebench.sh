#!/usr/bin/env bash
# Fetches the pytest source releases the SWE-bench dev instances name (`pypi_version` in
# ../shared/eval/swebench/dev_instances.jsonl), as PyPI sdists, for `engram-eval swebench`.
# Output: $ENGRAM_CORPORA_DIR/swebench/pytest-<version> (default ~/.cache/engram/corpora).
# Idempotent; prints what it skipped. Without the eval data it does nothing.
#   scripts/fetch-swebench.sh [VERSION…]   (default: every version the instances name)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${ENGRAM_CORPORA_DIR:-$HOME/.cache/engram/corpora}/swebench"
instances="${ENGRAM_EVAL_DIR:-$root/../shared/eval}/swebench/dev_instances.jsonl"
if [ $# -gt 0 ]; then
  versions="$*"
elif [ -f "$instances" ]; then
  versions=$(python3 -c 'import json,sys
print(" ".join(sorted({json.loads(l).get("pypi_version") or "" for l in open(sys.argv[1])} - {""})))' "$instances")
else
  echo "no SWE-bench instances at $instances; nothing to fetch"
  exit 0
fi
mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for v in $versions; do
  [ -e "$dir/pytest-$v/.complete" ] && continue
  # The sdist straight from the registry's simple index: `pip download` would build
  # metadata, which old releases cannot do without their build tools.
  python3 - "$v" "$work/$v" <<'PY'
import json, os, sys, urllib.request
version, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
request = urllib.request.Request(
    "https://pypi.org/simple/pytest/",
    headers={"Accept": "application/vnd.pypi.simple.v1+json"},
)
files = json.load(urllib.request.urlopen(request))["files"]
name = f"pytest-{version}.tar.gz"
sdist = next(f for f in files if f["filename"] == name)
urllib.request.urlretrieve(sdist["url"], os.path.join(out, name))
PY
  rm -rf "$dir/pytest-$v"
  archive=$(ls "$work/$v"/pytest-*)
  case "$archive" in
    *.zip) (cd "$dir" && python3 -m zipfile -e "$archive" .) ;;
    *) tar -xzf "$archive" -C "$dir" ;;
  esac
  touch "$dir/pytest-$v/.complete"
  echo "corpus ready: $dir/pytest-$v"
done
