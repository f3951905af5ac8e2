#!/usr/bin/env bash
# Embedding speed, side by side in one run on one machine: tract native (release), tract in
# wasm under Node, and onnxruntime (PyPI) on the same int8 ONNX — one thread each.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${ENGRAM_MODEL_DIR:-$HOME/.cache/engram/models}/all-minilm-l6-v2-int8"
python3 -m pip install -q --disable-pip-version-check onnxruntime==1.31.1 numpy 2>&1 | grep -v "WARNING: Running pip" || true
cargo run -q --release -p engram-embed --example bench -- "$dir"
node bench/embed_wasm.mjs "$dir"
python3 bench/embed_onnxruntime.py "$dir"
