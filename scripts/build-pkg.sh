#!/usr/bin/env bash
# Builds the npm package into pkg/dist: the engram wasm with every feature (the in-wasm
# SQLite engine, the transformer embedder, code intelligence), its JS bindings and TypeScript
# types, and the package's manifest. ENGRAM_WASM_PROFILE picks the profile (scripts/build-wasm.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-wasm.sh pkg/dist
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
cat >pkg/dist/package.json <<JSON
{
  "name": "engram-wasm",
  "type": "module",
  "description": "The engram npm package: wasm-bindgen bindings over the engram API for Node, browsers, Electron and Workers.",
  "version": "${version}",
  "license": "Apache-2.0",
  "files": [
    "engram_bg.wasm",
    "engram_bg.wasm.d.ts",
    "engram.js",
    "engram.d.ts",
    "snippets/"
  ],
  "main": "engram.js",
  "types": "engram.d.ts",
  "sideEffects": [
    "./snippets/*"
  ]
}
JSON
