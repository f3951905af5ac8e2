#!/usr/bin/env bash
# Builds the npm package into pkg/dist: two wasm modules with their JS bindings and
# TypeScript types — the core (`engram`: storage with the in-wasm SQLite engine, retrieval,
# observer, code intelligence) and the embedder (`engram_embed`: MiniLM in tract and the
# static edge model), which the entries load only when a model is — and the package's
# manifest. ENGRAM_WASM_PROFILE picks the profile (scripts/build-wasm.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf pkg/dist
bash scripts/build-wasm.sh pkg/dist
ENGRAM_WASM_CRATE=engram-wasm-embed ENGRAM_WASM_NAME=engram_embed bash scripts/build-wasm.sh pkg/dist
# Node's entry reads the module from the package instead of fetching it by URL; every entry
# takes `loadEmbeddingModel({ url })` (model.js); engram-model.js fetches the pinned model.
cp crates/engram-wasm/js/node.js crates/engram-wasm/js/files.js crates/engram-wasm/js/browser.js \
  crates/engram-wasm/js/model.js crates/engram-wasm/js/pinned-model.js crates/engram-wasm/js/engram-model.js pkg/dist/
# The manifest's description, version and license are engram-wasm's Cargo.toml's; Node (and
# bundlers building for it) take node.js, everything else browser.js (the web glue).
cargo metadata --no-deps --format-version 1 --offline | node --input-type=module -e '
  import { readFileSync, writeFileSync } from "node:fs";
  const crate = JSON.parse(readFileSync(0, "utf8")).packages.find((p) => p.name === "engram-wasm");
  const manifest = {
    name: "engram",
    type: "module",
    description: crate.description,
    version: crate.version,
    license: crate.license,
    engines: { node: ">=20" },
    files: ["engram_bg.wasm", "engram_bg.wasm.d.ts", "engram.js", "engram.d.ts", "engram_embed_bg.wasm", "engram_embed_bg.wasm.d.ts", "engram_embed.js", "engram_embed.d.ts", "node.js", "files.js", "browser.js", "model.js", "pinned-model.js", "engram-model.js", "snippets/"],
    bin: { "engram-model": "engram-model.js" },
    exports: {
      ".": { types: "./engram.d.ts", node: "./node.js", default: "./browser.js" },
      "./engram_bg.wasm": "./engram_bg.wasm",
      "./engram_embed_bg.wasm": "./engram_embed_bg.wasm",
      "./package.json": "./package.json",
    },
    main: "node.js",
    types: "engram.d.ts",
    sideEffects: ["./node.js", "./snippets/*"],
  };
  writeFileSync("pkg/dist/package.json", JSON.stringify(manifest, null, 2) + "\n");
'
