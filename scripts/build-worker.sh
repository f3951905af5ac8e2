#!/usr/bin/env bash
# Builds what the Worker bundles into workers/build:
# - engram/: the engram wasm without the in-wasm SQLite engine and without tract (a Worker
#   stores into libSQL over HTTP);
# - model/: the static edge model's table and tokenizer (scripts/fetch-model.sh), which the
#   default entry (src/index.js) bundles;
# - embed/: the npm package's embedder module (tract) and the pinned model's sums, which the
#   MiniLM entry (src/minilm.js, wrangler.minilm.toml) bundles; the model itself comes from
#   an R2 binding.
# ENGRAM_WASM_PROFILE picks the profile (scripts/build-wasm.sh); the embedder is the same
# cargo build as the npm package's, so after scripts/build-pkg.sh it only regenerates the
# bindings.
set -euo pipefail
cd "$(dirname "$0")/.."
models="${ENGRAM_MODEL_DIR:-$HOME/.cache/engram/models}/static-minilm-256-int8"
bash scripts/build-wasm.sh workers/build/engram --no-default-features --features static-embedder
ENGRAM_WASM_CRATE=engram-wasm-embed ENGRAM_WASM_NAME=engram_embed bash scripts/build-wasm.sh workers/build/embed
cp crates/engram-wasm/js/pinned-model.js workers/build/embed/
mkdir -p workers/build/model
# `.bin` so the bundler imports both as bytes (a `.json` would be parsed into an object).
cp "$models/model.bin" workers/build/model/static-minilm.bin
cp "$models/tokenizer.json" workers/build/model/tokenizer.bin
