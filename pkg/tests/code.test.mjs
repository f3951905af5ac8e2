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

test("graph vectors pass in Node", async () => {
  const { cases } = JSON.parse(await readFile(path.resolve(here, "../../tests/vectors/graph.json"), "utf8"));
  assert.equal(cases.length, 6);
  for (const c of cases) {
    const graph = engram.codeGraph(c.files);
    assert.deepEqual(graph.nodes.map((n) => [n.id, n.startLine, n.endLine]), c.nodes, c.name);
    assert.deepEqual(graph.edges.map((e) => [e.kind, e.from, e.to, e.weight]), c.edges, c.name);
  }
});

test("indexFiles and analyzeImpact on the in-wasm engine", async () => {
  const { cases } = JSON.parse(await readFile(path.resolve(here, "../../tests/vectors/graph.json"), "utf8"));
  const files = cases.find((c) => c.name === "python").files;
  const memory = await engram.createMemory({ local: true, projectId: "code" });
  const report = await memory.indexFiles(files, { complete: true });
  assert.equal(report.added, 3);
  const stored = await memory.remember({ type: "gotcha", content: "helper() must stay pure", relatedFiles: ["pkg/job.py"] });
  const impact = await memory.analyzeImpact("pkg/base.py#function:helper", 3);
  assert.deepEqual(
    impact.impacted.filter((n) => n.depth === 1).map((n) => n.id).sort(),
    ["pkg/base.py#method:Base.run", "pkg/job.py#method:Job.run"],
  );
  assert.deepEqual(impact.memories.map((m) => [m.id, m.attachedTo]), [[stored.id, "pkg/job.py"]]);
  const { files: deps } = await memory.dependencies("pkg/job.py");
  assert.deepEqual(deps.map((f) => f.path), ["pkg/base.py"]);
  assert.deepEqual((await memory.neighbours(["pkg/base.py"])).map((n) => [n.path, n.direction]), [["pkg/job.py", "dependent"]]);
  const onHelper = await memory.remember({ type: "gotcha", content: "`helper` must stay pure: Base.run caches it", relatedFiles: ["pkg/base.py"] });
  assert.ok((await memory.markStale(["pkg/base.py"])) > 0);
  const edited = files.map((f) => (f.path === "pkg/base.py" ? { ...f, content: f.content.replace("return 1", "return 2") } : f));
  const again = await memory.indexFiles(edited, { complete: true });
  assert.deepEqual([again.changed, again.unchanged], [1, 2]);
  assert.deepEqual(again.changedSymbols, ["pkg/base.py#function:helper"]);
  // Stale: the memory naming the changed symbol in its file; not the one about a caller.
  assert.deepEqual(again.flagged, [{ id: onHelper.id, reason: "symbol changed: pkg/base.py#function:helper" }]);
  assert.equal((await memory.get(onHelper.id)).flags.needsReview, true);
  await assert.rejects(memory.indexFiles([{ path: "/abs.py", content: "" }]), (e) => e.code === "invalid_input" && e.violations[0].field === "files[0].path");
  await assert.rejects(memory.indexFiles([{ path: "a.py" }]), (e) => e.code === "invalid_input");
});
