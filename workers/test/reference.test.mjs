// The reference vectors inside workerd (Miniflare): the transformer (npm package) and the
// static edge model (the Worker's build) must each reach cosine >= 0.99 against their
// independently computed references.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { cosine } from "../../tests/js/cosine.mjs";
import { workerOptions } from "./miniflare-options.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const modelDir = process.env.ENGRAM_MODEL_DIR ?? path.join(os.homedir(), ".cache/engram/models");
// Two isolates, so each transformer footprint's memory is measured on its own: a module's
// linear memory only grows.
let fast, compact;

function start() {
  const mf = new Miniflare({
    ...workerOptions("workers/reference/reference-worker.js"),
    dataBlobBindings: {
      MINILM_ONNX: path.join(modelDir, "all-minilm-l6-v2-int8/model.onnx"),
      MINILM_TOKENIZER: path.join(modelDir, "all-minilm-l6-v2-int8/tokenizer.json"),
    },
  });
  return mf.ready.then((url) => ({ mf, base: url.toString() }));
}

before(async () => {
  [fast, compact] = await Promise.all([start(), start()]);
});

after(async () => {
  await Promise.all([fast?.mf.dispose(), compact?.mf.dispose()]);
});

async function check(model, file, expectedId, { base } = model === "minilm-compact" ? compact : fast) {
  const reference = JSON.parse(await readFile(path.join(root, "tests/vectors", file), "utf8"));
  const texts = reference.texts.map((r) => r.text);
  const response = await fetch(base, { method: "POST", body: JSON.stringify({ model, texts }) });
  const answer = await response.json();
  assert.equal(answer.modelId, expectedId);
  assert.equal(answer.dims, reference.dims);
  assert.equal(answer.vectors.length, texts.length);
  let worst = 1;
  reference.texts.forEach((record, i) => {
    const c = cosine(answer.vectors[i], record.embedding);
    worst = Math.min(worst, c);
    assert.ok(c >= 0.99, `${model}: cosine ${c} for ${JSON.stringify(record.text.slice(0, 40))}`);
  });
  console.log(`workerd ${model}: worst cosine ${worst.toFixed(6)}, ${(answer.ms / texts.length).toFixed(1)} ms/text (incl. load), linear memory ${answer.loadedMiB.toFixed(1)} MiB once loaded, ${answer.linearMiB.toFixed(1)} MiB after embedding`);
}

test("the transformer matches its fp32 reference in workerd", () => check("minilm", "embeddings.json", "all-minilm-l6-v2-int8"));
test("the transformer's compact footprint matches its fp32 reference in workerd", () => check("minilm-compact", "embeddings.json", "all-minilm-l6-v2-int8"));
test("a dense search with the compact transformer runs in workerd", async () => {
  const memories = [
    "SQLite reports 'database is locked' when two test processes share one database file",
    "Use CSS grid instead of flexbox for the dashboard layout",
  ];
  const query = "parallel unit runs collide on the same storage";
  const response = await fetch(new URL("/search", compact.base), { method: "POST", body: JSON.stringify({ memories, query }) });
  const answer = await response.json();
  assert.deepEqual(answer.models, ["all-minilm-l6-v2-int8", "all-minilm-l6-v2-int8"]);
  assert.equal(answer.hits[0].id, answer.ids[0]);
  assert.equal(answer.hits[0].rank, 1);
  assert.ok(answer.linearMiB < 128, `the compact transformer's module grew to ${answer.linearMiB} MiB`);
  console.log(`workerd dense search (compact transformer): linear memory of the embedder ${answer.linearMiB.toFixed(1)} MiB`);
});
test("the static edge model matches its reference in workerd", () => check("static", "static-embeddings.json", "static-minilm-256-int8"));
