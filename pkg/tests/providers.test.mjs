// The npm package with a remote embedding provider (a local HTTP server speaking the Ollama
// and OpenAI protocols, started here) and with the static edge model: answers checked,
// failures keep memories, the circuit breaker stops calls, embedPending recovers.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { loadEmbedder, loadEngram } from "./load.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const staticDir = path.join(process.env.ENGRAM_MODEL_DIR ?? path.join(os.homedir(), ".cache/engram/models"), "static-minilm-256-int8");
const DIMS = 8;
let engram, server, url;
const provider = { mode: "healthy", requests: 0 };

function vectorOf(text, dims) {
  const v = new Array(dims).fill(0);
  for (const word of text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean)) {
    let h = 7;
    for (const c of word) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    v[h % dims] += 1;
  }
  v[0] += 0.01;
  return v;
}

before(async () => {
  engram = await loadEngram();
  server = http.createServer(async (req, res) => {
    provider.requests++;
    let body = "";
    for await (const chunk of req) body += chunk;
    const input = JSON.parse(body).input;
    if (provider.mode === "down") {
      res.writeHead(503, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: "model is loading" }));
    }
    const dims = provider.mode === "wrong-dims" ? DIMS + 3 : DIMS;
    const vectors = input.map((t) => vectorOf(t, dims));
    res.writeHead(200, { "content-type": "application/json" });
    if (req.url === "/api/embed") return res.end(JSON.stringify({ embeddings: vectors }));
    return res.end(JSON.stringify({ data: vectors.map((embedding, index) => ({ index, embedding })).reverse() }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${server.address().port}`;
});

after(() => server?.close());

test("a remote provider embeds memories and queries through fetch", async () => {
  provider.mode = "healthy";
  for (const [name, base] of [["ollama", url], ["openai", `${url}/v1`]]) {
    const memory = await engram.createMemory({ local: true, embedder: { provider: name, url: base, model: "test", dims: DIMS } });
    const a = await memory.remember({ type: "gotcha", content: "vite dev server port conflicts" });
    const b = await memory.remember({ type: "gotcha", content: "postgres migrations need a lock timeout" });
    assert.equal(a.embeddingModel, `${name}:test`);
    const found = await memory.search({ text: "postgres lock timeout", mode: "dense" });
    assert.equal(found.hits[0].memory.id, b.id);
  }
});

test("provider down: memories are kept, the circuit opens, embedPending recovers", async () => {
  const memory = await engram.createMemory({ local: true, embedder: { provider: "ollama", url, model: "test", dims: DIMS } });
  provider.mode = "down";
  const before = provider.requests;
  const ids = [];
  for (let i = 0; i < 4; i++) {
    const stored = await memory.remember({ type: "gotcha", content: `flaky network gotcha ${i}` });
    assert.equal(stored.embeddingModel, undefined);
    assert.match(stored.embeddingError, i < 3 ? /HTTP 503: model is loading/ : /3 consecutive failures/);
    ids.push(stored.id);
  }
  assert.equal(provider.requests - before, 3, "the open circuit must not call the provider");
  const found = await memory.search("flaky network gotcha");
  assert.equal(found.hits.length, 4);
  assert.match(found.warnings[0], /dense path skipped/);
  await assert.rejects(memory.embedPending(10), (e) => e.code === "embedder_unavailable");
  provider.mode = "wrong-dims";
  const wrong = await engram.createMemory({ local: true, embedder: { provider: "ollama", url, model: "test", dims: DIMS } });
  const stored = await wrong.remember({ type: "gotcha", content: "wrong dims" });
  assert.match(stored.embeddingError, /11 dimensions, configured 8/);
});

test("bad embedder options are typed errors", async () => {
  await assert.rejects(engram.createMemory({ local: true, embedder: { provider: "cohere", url, model: "m", dims: 8 } }), (e) => e.code === "invalid_input" && e.violations[0].field === "embedder.provider");
  await assert.rejects(engram.createMemory({ local: true, embedder: { provider: "ollama", url, model: "m", dims: 0 } }), (e) => e.code === "invalid_input" && e.violations[0].field === "embedder.dims");
  await assert.rejects(engram.createMemory({ local: true, embedder: { provider: "ollama", model: "m", dims: 8 } }), (e) => e.code === "invalid_input" && e.violations[0].field === "embedder.url");
});

test("the static edge model matches its reference in Node", async () => {
  const [table, tokenizer] = await Promise.all([readFile(path.join(staticDir, "model.bin")), readFile(path.join(staticDir, "tokenizer.json"))]);
  const embedder = await loadEmbedder();
  const model = embedder.loadStaticEmbeddingModel(table, tokenizer);
  assert.equal(model.modelId, "static-minilm-256-int8");
  const reference = JSON.parse(await readFile(path.resolve(here, "../../tests/vectors/static-embeddings.json"), "utf8"));
  for (const record of reference.texts) {
    const v = model.embed(record.text);
    let dot = 0, n = 0;
    for (let i = 0; i < v.length; i++) {
      dot += v[i] * record.embedding[i];
      n += v[i] * v[i];
    }
    assert.ok(dot / Math.sqrt(n) >= 0.99, record.text);
  }
  assert.throws(() => embedder.loadStaticEmbeddingModel(new Uint8Array([1, 2, 3]), tokenizer), (e) => e.code === "model_error");
});

test("resident vectors rank as the exact scan does, in wasm SIMD", async () => {
  // 20 dimensions: two 8-float SIMD chunks and a 4-float tail. 160 memories, so the
  // resident pick (60 ids) is full and the fast form answers.
  const dims = 20;
  const fetch = async (_url, init) => {
    const { input } = JSON.parse(init.body);
    // Words into buckets, plus every character's code at a small weight: no two
    // distinct texts get the same vector.
    const embed = (t) => {
      const v = vectorOf(t, dims);
      for (let i = 0; i < t.length; i++) v[i % dims] += t.charCodeAt(i) * 1e-3;
      return v;
    };
    const data = input.map((t, index) => ({ index, embedding: embed(t) }));
    return new Response(JSON.stringify({ data }), { status: 200, headers: { "content-type": "application/json" } });
  };
  const embedder = { provider: "openai", url: "http://embedder.invalid/v1", model: "words", dims };
  const subjects = ["billing", "search", "auth", "export", "admin", "payments", "mobile", "pipeline"];
  const facts = ["times out when the pool is exhausted", "pins its node version", "caches responses in redis",
    "retries with exponential backoff", "logs secrets in debug mode", "was rewritten in rust", "breaks on non utf8 locales",
    "needs a feature flag", "uses optimistic locking", "went back from graphql to rest", "reads config from the environment",
    "fails health checks on cold start", "queues its email", "keeps timestamps in utc", "deadlocks on parallel migrations",
    "has flaky snapshot tests", "validates json at the boundary", "uploads source maps", "deploys from tags", "lost data on a full disk"];
  const exact = await engram.createMemory({ local: true, fetch, embedder });
  const resident = await engram.createMemory({ local: true, fetch, embedder, residentVectors: true });
  for (const s of subjects) for (const f of facts) {
    const memory = { type: "gotcha", content: `the ${s} service ${f}` };
    await exact.remember(memory);
    await resident.remember(memory);
  }
  // Loaded ahead of the searches: every vector, once; the set is then current.
  assert.equal(await exact.loadResidentVectors(), 0);
  assert.equal(await resident.loadResidentVectors(), subjects.length * facts.length);
  assert.equal(await resident.loadResidentVectors(), subjects.length * facts.length);
  // Ids differ between the two databases; content identifies a memory (and no two
  // memories have the same vector, so no tie is broken by id).
  const ranked = (r) => r.hits.map((h) => [h.memory.content, h.breakdown.dense.rank, h.breakdown.dense.metric]);
  for (const text of ["pool exhausted timeouts", "redis caching of responses", "flaky tests", "deploy from a tag", "the mobile service"]) {
    const query = { text, mode: "dense", limit: 10 };
    const [a, b] = [await resident.search(query), await exact.search(query)];
    assert.equal(a.hits.length, 10, text);
    assert.deepEqual(ranked(a), ranked(b), text);
  }
  await assert.rejects(engram.createMemory({ local: true, fetch, embedder, residentVectors: "yes" }), (e) => e.code === "invalid_input" && e.violations[0].field === "residentVectors");
});

test("resident keywords give the keyword path's own results", async () => {
  const subjects = ["billing", "search", "auth", "export", "admin", "payments"];
  const facts = ["times out when the pool is exhausted", "caches responses in redis", "retries with exponential backoff",
    "deadlocks on parallel migrations", "has flaky snapshot tests", "deploys from tags", "reads config from the environment"];
  const plain = await engram.createMemory({ local: true });
  const resident = await engram.createMemory({ local: true, residentKeywords: true });
  // Subject k adds k filler words, so memories of one fact differ in length.
  for (const [k, s] of subjects.entries()) for (const f of facts) {
    const memory = { type: "gotcha", content: `the ${s} service ${f}${" noted".repeat(k)}`, tags: [s] };
    await plain.remember(memory);
    await resident.remember(memory);
  }
  assert.equal(await plain.loadResidentKeywords(), 0);
  assert.equal(await resident.loadResidentKeywords(), subjects.length * facts.length);
  // Ids differ between the two databases, and memories tied on a score are ordered by id:
  // compare ranks, scores and contents, in (rank, content) order, over every match.
  const ranked = (r) => r.hits.map((h) => [h.memory.content, h.breakdown.keyword.rank, h.breakdown.keyword.metric])
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]));
  for (const text of ["pool exhausted timeouts", "redis caches", "flaky snapshot", "billing deploys", "café crème"]) {
    const query = { text, mode: "keyword", limit: 50 };
    const [a, b] = [await resident.search(query), await plain.search(query)];
    assert.deepEqual(ranked(a), ranked(b), text);
  }
  // Another write reaches the index with the next search.
  await resident.remember({ type: "gotcha", content: "pool exhausted: raise the pool size" });
  await plain.remember({ type: "gotcha", content: "pool exhausted: raise the pool size" });
  const query = { text: "pool exhausted", mode: "keyword", limit: 50 };
  assert.deepEqual(ranked(await resident.search(query)), ranked(await plain.search(query)));
  assert.equal(await resident.loadResidentKeywords(), subjects.length * facts.length + 1);
});
