#!/usr/bin/env bash
# Builds crates/engram-wasm for wasm32-unknown-unknown and generates its JS bindings (target
# web: one build serves Node, browsers, Electron and Workers through init/initSync).
#
#   scripts/build-wasm.sh OUT_DIR [cargo build arguments...]
#
# The profile is ENGRAM_WASM_PROFILE: wasm-release (the default, what ships: whole-program
# LTO, one codegen unit) or wasm-ci (the test suite's: thin LTO, parallel codegen and tract's
# graph code unoptimized; the same code otherwise). The wasm-bindgen CLI must match the
# wasm-bindgen crate in Cargo.lock (scripts/setup.sh installs it); the name section is
# stripped after it (scripts/strip-wasm-names.mjs); no wasm-opt pass (see
# ../shared/TOOLCHAIN.md).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/build-wasm.sh OUT_DIR [cargo build arguments...]}
shift
profile=${ENGRAM_WASM_PROFILE:-wasm-release}
target_dir=${CARGO_TARGET_DIR:-$PWD/target}
cargo build --target wasm32-unknown-unknown -p engram-wasm --profile "$profile" "$@"
rm -rf "$out"
# Cargo writes the dev profile's output under `debug`.
profile_dir=$profile
[ "$profile" = dev ] && profile_dir=debug
wasm-bindgen --target web --out-dir "$out" --out-name engram \
  "$target_dir/wasm32-unknown-unknown/$profile_dir/engram_wasm.wasm"
# Function names serve stack traces only; engines never need them.
node scripts/strip-wasm-names.mjs "$out/engram_bg.wasm"
