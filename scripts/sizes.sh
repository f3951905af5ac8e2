#!/usr/bin/env bash
# Prints the sizes of the shipped artifacts (raw and gzip -9): the npm package's .wasm, the
# component, and the Worker bundle (wrangler's dry-run output). It first builds them with the
# shipped profile, wasm-release (the test suite builds with wasm-ci, which is larger).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-$HOME/.cache/engram/target}"
export CARGO_TARGET_DIR="$target" ENGRAM_WASM_PROFILE=wasm-release
bash scripts/build-pkg.sh >/dev/null
bash scripts/build-worker.sh >/dev/null
cargo build --target wasm32-wasip2 -p engram-component --profile wasm-release --quiet
size() { printf '%-40s raw %9d B   gzip %9d B\n' "$1" "$(stat -c %s "$2")" "$(gzip -9 -c "$2" | wc -c)"; }
size "npm package engram_bg.wasm" pkg/dist/engram_bg.wasm
size "component engram_component.wasm" "$target/wasm32-wasip2/wasm-release/engram_component.wasm"
out=$(mktemp -d)
(cd workers && WRANGLER_SEND_METRICS=false npx wrangler deploy --dry-run --outdir "$out" >/dev/null 2>&1)
tar -C "$out" -czf "$out.tgz" --exclude='*.map' .
printf '%-40s raw %9d B   gzip %9d B\n' "Worker bundle (without source map)" \
  "$(find "$out" -type f ! -name '*.map' -printf '%s\n' | paste -sd+ | bc)" "$(stat -c %s "$out.tgz")"
rm -rf "$out" "$out.tgz"
