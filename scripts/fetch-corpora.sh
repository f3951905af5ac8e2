#!/usr/bin/env bash
# Fetches real source code for the code-intelligence tests and benchmarks, from registries
# only, pinned by version:
#   python/pytest-8.3.4              PyPI sdist (also the SWE-bench file-localization corpus)
#   typescript/rxjs-7.8.1            npm (src/ is TypeScript)
#   tsx/react-query-5.62.0           npm @tanstack/react-query (src/ is TS and TSX)
#   javascript/express-4.21.2        npm (CommonJS)
#   go/src/github.com/spf13/cobra    Debian golang-github-spf13-cobra-dev 1.6.1-1 (GOPATH layout,
#                                    so import paths are folder paths)
#   rust/tract-core-0.23.9           crates.io, through cargo (a dependency in Cargo.lock)
# Output: $ENGRAM_CORPORA_DIR (default ~/.cache/engram/corpora). Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${ENGRAM_CORPORA_DIR:-$HOME/.cache/engram/corpora}"
mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

have() { [ -e "$dir/$1/.complete" ]; }
done_() { touch "$dir/$1/.complete"; echo "corpus ready: $dir/$1"; }

if ! have python/pytest-8.3.4; then
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
    -d "$work/pypi" pytest==8.3.4
  mkdir -p "$dir/python"
  rm -rf "$dir/python/pytest-8.3.4"
  tar -xzf "$work/pypi/pytest-8.3.4.tar.gz" -C "$dir/python"
  done_ python/pytest-8.3.4
fi

npm_corpus() {
  local spec=$1 target=$2
  have "$target" && return 0
  mkdir -p "$work/npm-$target" "$dir/$target"
  (cd "$work/npm-$target" && npm pack --silent "$spec" >/dev/null)
  tar -xzf "$work/npm-$target"/*.tgz -C "$dir/$target" --strip-components=1
  done_ "$target"
}
npm_corpus rxjs@7.8.1 typescript/rxjs-7.8.1
npm_corpus @tanstack/react-query@5.62.0 tsx/react-query-5.62.0
npm_corpus express@4.21.2 javascript/express-4.21.2

if ! have go; then
  chmod 755 "$work"
  (cd "$work" && apt-get download golang-github-spf13-cobra-dev=1.6.1-1 >/dev/null)
  dpkg-deb -x "$work"/golang-github-spf13-cobra-dev_*.deb "$work/deb"
  rm -rf "$dir/go"
  mkdir -p "$dir/go"
  cp -r "$work/deb/usr/share/gocode/src" "$dir/go/src"
  done_ go
fi

if ! have rust/tract-core-0.23.9; then
  manifest=$(cd "$root" && cargo metadata --format-version 1 --locked |
    python3 -c 'import json,sys; print(next(p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"]=="tract-core" and p["version"]=="0.23.9"))')
  mkdir -p "$dir/rust"
  rm -rf "$dir/rust/tract-core-0.23.9"
  cp -r "$(dirname "$manifest")" "$dir/rust/tract-core-0.23.9"
  done_ rust/tract-core-0.23.9
fi
