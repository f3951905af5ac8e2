#!/usr/bin/env bash
# Builds a wasm-bindgen crate for wasm32-unknown-unknown and generates its JS bindings
# (target web: one build serves Node, browsers, Electron and Workers through init/initSync).
#
#   scripts/build-wasm.sh OUT_DIR [cargo build arguments...]
#
# The crate is ENGRAM_WASM_CRATE (default engram-wasm, the core module, named `engram`);
# ENGRAM_WASM_NAME names its output files (default `engram`).
#
# The profile is ENGRAM_WASM_PROFILE: wasm-release (the default, what ships: whole-program
# LTO, one codegen unit) or wasm-ci (the test suite's: thin LTO, parallel codegen and tract's
# graph code unoptimized; the same code otherwise). The wasm-bindgen CLI must match the
# wasm-bindgen crate in Cargo.lock (scripts/setup.sh installs it); the name section is
# stripped after it (scripts/strip-wasm-names.mjs); no wasm-opt pass: it made the gzip larger
# (docs/npm-package.md).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/build-wasm.sh OUT_DIR [cargo build arguments...]}
shift
profile=${ENGRAM_WASM_PROFILE:-wasm-release}
crate=${ENGRAM_WASM_CRATE:-engram-wasm}
name=${ENGRAM_WASM_NAME:-engram}
target_dir=${CARGO_TARGET_DIR:-$PWD/target}
cargo build --target wasm32-unknown-unknown -p "$crate" --profile "$profile" "$@"
mkdir -p "$out"
rm -f "$out/${name}.js" "$out/${name}.d.ts" "$out/${name}_bg.wasm" "$out/${name}_bg.wasm.d.ts"
# Cargo writes the dev profile's output under `debug`.
profile_dir=$profile
[ "$profile" = dev ] && profile_dir=debug
wasm-bindgen --target web --out-dir "$out" --out-name "$name" \
  "$target_dir/wasm32-unknown-unknown/$profile_dir/${crate//-/_}.wasm"
# Function names serve stack traces only; engines never need them.
node scripts/strip-wasm-names.mjs "$out/${name}_bg.wasm"
