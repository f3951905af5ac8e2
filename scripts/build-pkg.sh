#!/usr/bin/env bash
# Builds the npm package into pkg/dist: the engram wasm with every feature (the in-wasm
# SQLite engine, the transformer embedder, code intelligence), its JS bindings and TypeScript
# types, and the package's manifest. ENGRAM_WASM_PROFILE picks the profile (scripts/build-wasm.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build-wasm.sh pkg/dist
# The manifest's name, description, version and license are engram-wasm's Cargo.toml's.
cargo metadata --no-deps --format-version 1 --offline | node --input-type=module -e '
  import { readFileSync, writeFileSync } from "node:fs";
  const crate = JSON.parse(readFileSync(0, "utf8")).packages.find((p) => p.name === "engram-wasm");
  const manifest = {
    name: crate.name,
    type: "module",
    description: crate.description,
    version: crate.version,
    license: crate.license,
    files: ["engram_bg.wasm", "engram_bg.wasm.d.ts", "engram.js", "engram.d.ts", "snippets/"],
    main: "engram.js",
    types: "engram.d.ts",
    sideEffects: ["./snippets/*"],
  };
  writeFileSync("pkg/dist/package.json", JSON.stringify(manifest, null, 2) + "\n");
'
