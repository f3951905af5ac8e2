#!/usr/bin/env bash
# Builds the npm package into pkg/dist (wasm-pack, target web: one build serves Node,
# browsers, Electron and Workers through init/initSync).
set -euo pipefail
cd "$(dirname "$0")/.."
wasm-pack build crates/engram-wasm --target web --out-dir ../../pkg/dist --out-name engram \
  --profile wasm-release --mode no-install --no-opt
