// Code intelligence in the npm package: the cross-host chunking vectors, and a real file.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { loadEngram } from "./load.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
let engram;

before(async () => {
  engram = await loadEngram();
});

test("chunking vectors pass in Node", async () => {
  const { cases } = JSON.parse(await readFile(path.resolve(here, "../../tests/vectors/chunking.json"), "utf8"));
  for (const c of cases) {
    const chunks = engram.chunkFile(c.path, c.source, { maxChars: c.maxChars });
    assert.deepEqual(
      chunks.map(({ kind, name, startLine, endLine }) => ({ kind, name, startLine, endLine })),
      c.chunks,
      c.path,
    );
  }
});

test("a real 88 KB Rust file chunks with nothing lost", async () => {
  const source = await readFile(path.resolve(here, "../../crates/engram-code/tests/fixtures/chunking/hashbrown_set_rs.txt"), "utf8");
  const chunks = engram.chunkFile("src/set.rs", source);
  assert.ok(chunks.length > 50);
  assert.ok(chunks.every((c) => c.language === "rust" && c.content.length <= 1500));
  assert.equal(chunks.map((c) => c.content).join("").replace(/\s/g, ""), source.replace(/\s/g, ""));
  assert.ok(chunks.some((c) => c.kind === "method" && c.name === "HashSet::contains"));
  assert.match(chunks[1].contextPrefix, /^File: src\/set\.rs \| /);
});

test("bad options are typed errors", () => {
  assert.throws(() => engram.chunkFile("a.py", "x = 1", { maxChars: 0 }), (e) => e.code === "invalid_input" && e.violations[0].field === "maxChars");
});
