// The embedding model inside the npm package's wasm: exact to the fp32 reference vectors,
// and wired into hybrid search on the in-wasm engine.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { loadEmbedder, loadEngram } from "./load.mjs";
import { cosine } from "../../tests/js/cosine.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const modelDir = path.join(process.env.ENGRAM_MODEL_DIR ?? path.join(os.homedir(), ".cache/engram/models"), "all-minilm-l6-v2-int8");
let engram, embedder, model, loadMs, files;

before(async () => {
  engram = await loadEngram();
  embedder = await loadEmbedder();
  const [onnx, tokenizer] = await Promise.all([readFile(path.join(modelDir, "model.onnx")), readFile(path.join(modelDir, "tokenizer.json"))]);
  files = { onnx, tokenizer };
  const started = performance.now();
  model = embedder.loadEmbeddingModel(onnx, tokenizer);
  loadMs = performance.now() - started;
});

test("the int8 model in wasm matches the fp32 reference (cosine >= 0.99)", async () => {
  const reference = JSON.parse(await readFile(path.resolve(here, "../../tests/vectors/embeddings.json"), "utf8"));
  assert.equal(model.dims, 384);
  assert.equal(model.modelId, "all-minilm-l6-v2-int8");
  let worst = 1;
  const started = performance.now();
  for (const record of reference.texts) {
    const vector = model.embed(record.text);
    assert.equal(vector.length, 384);
    const c = cosine(vector, record.embedding);
    worst = Math.min(worst, c);
    assert.ok(c >= 0.99, `cosine ${c} for ${JSON.stringify(record.text.slice(0, 40))}`);
  }
  const perText = (performance.now() - started) / reference.texts.length;
  console.log(`wasm model: load ${loadMs.toFixed(0)} ms, ${perText.toFixed(1)} ms/text over the reference set, worst cosine ${worst.toFixed(6)}`);
});

test("hybrid search with the model on the in-wasm engine", async () => {
  const memory = await engram.createMemoryWithModel({ local: true }, model);
  const locked = await memory.remember({ type: "error_pattern", content: "SQLite reports 'database is locked' when two test processes share one database file" });
  assert.equal(locked.embeddingModel, "all-minilm-l6-v2-int8");
  await memory.remember({ type: "preference", content: "Use CSS grid instead of flexbox for the dashboard layout" });
  const keyword = await memory.search({ text: "parallel unit runs collide on the same storage", mode: "keyword" });
  assert.equal(keyword.hits.length, 0);
  const dense = await memory.search({ text: "parallel unit runs collide on the same storage", mode: "dense" });
  assert.equal(dense.hits[0].memory.id, locked.id);
  assert.equal(dense.hits[0].breakdown.dense.rank, 1);
});

test("the core embeds with the embedder module's model through embedMany", () => {
  const texts = ["flaky integration tests", "database is locked"];
  const many = model.embedMany(texts);
  assert.equal(many.length, 2 * 384);
  assert.deepEqual(Array.from(many.subarray(384)), Array.from(model.embed(texts[1])));
});

test("a model the core cannot use is a typed error naming it", async () => {
  await assert.rejects(engram.createMemoryWithModel({ local: true }, { modelId: "m", dims: 8 }), (e) => e.code === "invalid_input" && e.violations[0].field === "model");
  const wrong = { modelId: "short", dims: 4, embedMany: (texts) => new Float32Array(texts.length * 3) };
  const memory = await engram.createMemoryWithModel({ local: true }, wrong);
  const stored = await memory.remember({ type: "gotcha", content: "A model that answers too few numbers" });
  assert.match(stored.embeddingError, /returned 3 numbers for 1 texts of 4 dims/);
});

test("the compact footprint embeds as the fast one does; an unknown footprint is a model_error", () => {
  const compact = embedder.loadEmbeddingModel(files.onnx, files.tokenizer, undefined, "compact");
  assert.equal(compact.modelId, model.modelId);
  for (const text of ["", "database is locked", "a longer text ".repeat(100)]) {
    const c = cosine(compact.embed(text), model.embed(text));
    assert.ok(c > 0.9999, `cosine ${c} for ${JSON.stringify(text.slice(0, 20))}`);
  }
  compact.free();
  assert.throws(
    () => embedder.loadEmbeddingModel(files.onnx, files.tokenizer, undefined, "huge"),
    (e) => e.code === "model_error" && /footprint "huge"/.test(e.message),
  );
});

test("garbage model bytes are a typed error", () => {
  assert.throws(() => embedder.loadEmbeddingModel(new Uint8Array([1, 2, 3]), new Uint8Array([123, 125])), (e) => e.code === "model_error");
});

// Model files streamed into the module a chunk at a time (a Worker reading R2), hashed there.
function streamed(bytes, chunkSize) {
  const parts = new embedder.ModelBytes(bytes.length);
  for (let start = 0; start < bytes.length; start += chunkSize) parts.push(bytes.subarray(start, start + chunkSize));
  return parts;
}

test("model files streamed into ModelBytes hash as Node does and load the same model", () => {
  const onnx = streamed(files.onnx, 65536);
  const tokenizer = streamed(files.tokenizer, 4093);
  assert.equal(onnx.length, files.onnx.length);
  assert.equal(onnx.sha256(), createHash("sha256").update(files.onnx).digest("hex"));
  assert.equal(tokenizer.sha256(), createHash("sha256").update(files.tokenizer).digest("hex"));
  const fromParts = embedder.loadEmbeddingModelFromParts(onnx, tokenizer, undefined, "compact");
  assert.equal(fromParts.modelId, model.modelId);
  const c = cosine(fromParts.embed("database is locked"), model.embed("database is locked"));
  assert.ok(c > 0.9999, `cosine ${c}`);
  fromParts.free();
});

test("ModelBytes refuses more bytes than stated, and a short file does not load", () => {
  const parts = new embedder.ModelBytes(4);
  parts.push(new Uint8Array([1, 2, 3]));
  assert.throws(() => parts.push(new Uint8Array([4, 5])), (e) => e.code === "model_error" && /longer than its stated 4 bytes/.test(e.message));
  assert.equal(parts.length, 3);
  const short = streamed(files.onnx.subarray(0, 1000), 4096);
  const truncated = new embedder.ModelBytes(files.onnx.length);
  truncated.push(files.onnx.subarray(0, 1000));
  assert.throws(
    () => embedder.loadEmbeddingModelFromParts(truncated, streamed(files.tokenizer, 65536)),
    (e) => e.code === "model_error" && new RegExp(`after 1000 of its ${files.onnx.length} bytes`).test(e.message),
  );
  assert.throws(() => embedder.loadEmbeddingModelFromParts(short, streamed(files.tokenizer, 65536)), (e) => e.code === "model_error");
  parts.free();
});
