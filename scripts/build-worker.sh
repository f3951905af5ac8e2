#!/usr/bin/env bash
# Builds what the Worker bundles into workers/build: the engram wasm without the in-wasm
# SQLite engine and without tract (a Worker stores into libSQL over HTTP and embeds with the
# static edge model), plus that model's table and tokenizer from scripts/fetch-model.sh.
# ENGRAM_WASM_PROFILE picks the profile (scripts/build-wasm.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
models="${ENGRAM_MODEL_DIR:-$HOME/.cache/engram/models}/static-minilm-256-int8"
bash scripts/build-wasm.sh workers/build/engram --no-default-features --features static-embedder
mkdir -p workers/build/model
# `.bin` so the bundler imports both as bytes (a `.json` would be parsed into an object).
cp "$models/model.bin" workers/build/model/static-minilm.bin
cp "$models/tokenizer.json" workers/build/model/tokenizer.bin
