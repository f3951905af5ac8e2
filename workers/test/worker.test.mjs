// The Worker in workerd (through Miniflare, from the npm registry), answering real HTTP
// requests on 127.0.0.1, storing into a real libSQL engine (engram-testserver).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import http from "node:http";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";

import { runApiVectors } from "../../tests/js/api-vectors.mjs";
import { startTestServer } from "../../tests/js/testserver.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const TOKEN = "tenant-a-token";
let server, mf, base;

// The Worker in workerd with these bindings (vars).
function startWorker(bindings) {
  return new Miniflare({
    modules: true,
    scriptPath: path.resolve(here, "../src/index.js"),
    modulesRoot: path.resolve(here, "../.."),
    modulesRules: [
      { type: "ESModule", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
      { type: "Data", include: ["**/*.bin"] },
    ],
    bindings,
    compatibilityDate: "2026-04-01",
    host: "127.0.0.1",
  });
}

before(async () => {
  server = await startTestServer({ authToken: TOKEN });
  mf = startWorker({ LIBSQL_URL: server.url });
  base = (await mf.ready).toString().replace(/\/$/, "");
});

after(async () => {
  await mf?.dispose();
  await server?.stop();
});

function client(projectId, token = TOKEN) {
  const call = async (route, body) => {
    const response = await fetch(`${base}/v1/${route}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "x-engram-project": projectId, "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    const payload = await response.json();
    if (payload?.error) throw Object.assign(new Error(payload.error.message), payload.error, { status: response.status });
    return payload;
  };
  return {
    remember: (memory) => call("remember", memory),
    search: (query) => call("search", typeof query === "string" ? { text: query } : query),
    searchMany: (queries) => call("search-many", queries),
    get: async (id) => {
      try {
        return await call("get", { id });
      } catch (e) {
        if (e.code === "not_found") return null;
        throw e;
      }
    },
    forget: async (id) => (await call("forget", { id })).forgotten,
    callTool: (name, args) => call("tool", { name, arguments: args }),
    sessionContext: (start) => call("session-context", start ?? {}),
    augmentToolResult: (context) => call("augment", context),
    stepInjection: (request) => call("step", request),
    recordCalibration: (sample) => call("calibration", sample),
    stepLimit: (request) => call("step-limit", request),
    plannerContext: (request) => call("plan", request),
  };
}

test("API vectors pass through the Worker over HTTP", async () => {
  const vectors = JSON.parse(await readFile(path.resolve(here, "../../tests/vectors/api.json"), "utf8"));
  const steps = await runApiVectors(vectors, async (projectId) => client(projectId), `worker-${Date.now()}`);
  assert.ok(steps > 30, `only ${steps} steps`);
});

test("a search through a warm Worker is exactly one database request", async () => {
  const api = client(`count-${Date.now()}`);
  await api.remember({ type: "gotcha", content: "workerd needs compatibility_date set" });
  const before = (await server.stats()).pipelineRequests;
  const found = await api.search({ text: "compatibility_date workerd" });
  assert.equal(found.hits.length, 1);
  assert.equal((await server.stats()).pipelineRequests - before, 1);
});

test("malformed JSON, wrong tokens and unknown routes get typed errors", async () => {
  const api = client(`bad-${Date.now()}`);
  const raw = async (route, body, headers = {}) => {
    const response = await fetch(`${base}${route}`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, ...headers }, body });
    return { status: response.status, body: await response.json() };
  };
  let r = await raw("/v1/remember", "{not json");
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, "invalid_input");
  r = await raw("/v1/remember", JSON.stringify({ type: "rumour", content: "x" }));
  assert.equal(r.status, 400);
  assert.equal(r.body.error.violations[0].field, "type");
  r = await raw("/v1/nothing", "{}");
  assert.equal(r.status, 404);
  const wrong = await fetch(`${base}/v1/search`, { method: "POST", headers: { authorization: "Bearer not-the-token" }, body: JSON.stringify({ text: "x" }) });
  assert.equal(wrong.status, 401);
  assert.equal((await wrong.json()).error.code, "unauthorized");
  const none = await fetch(`${base}/v1/search`, { method: "POST", body: JSON.stringify({ text: "x" }) });
  assert.equal(none.status, 401);
  // Nothing from the rejected writes reached the database.
  assert.equal((await api.search({ text: "rumour" })).hits.length, 0);
});

for (const vectorIndex of ["off", "on"]) test(`with EMBEDDINGS=static (VECTOR_INDEX=${vectorIndex}) the Worker embeds with the edge model and searches hybrid`, async () => {
  const edge = startWorker({ LIBSQL_URL: server.url, EMBEDDINGS: "static", VECTOR_INDEX: vectorIndex });
  try {
    const edgeBase = (await edge.ready).toString().replace(/\/$/, "");
    const project = `edge-${Date.now()}`;
    const call = async (route, body) => {
      const response = await fetch(`${edgeBase}/v1/${route}`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "x-engram-project": project },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: await response.json() };
    };
    const locked = await call("remember", { type: "error_pattern", content: "SQLite says database is locked when two test processes share one file" });
    assert.equal(locked.status, 201);
    assert.equal(locked.body.embeddingModel, "static-minilm-256-int8");
    await call("remember", { type: "preference", content: "Use CSS grid instead of flexbox for the dashboard layout" });
    const dense = await call("search", { text: "sqlite database locked during tests", mode: "dense" });
    assert.equal(dense.body.hits[0].memory.id, locked.body.id);
    assert.equal(dense.body.hits[0].breakdown.dense.rank, 1);
    const hybrid = await call("search", { text: "database locked" });
    assert.equal(hybrid.body.hits[0].memory.id, locked.body.id);
    assert.equal(hybrid.body.hits[0].breakdown.keyword.rank, 1);
    const pending = await call("embed-pending", { batch: 10 });
    assert.deepEqual(pending.body, { embedded: 0, remaining: 0 });
    // With the option, the server holds the edge model's vector index, with both vectors.
    const indexes = await server.rows("SELECT tbl_name FROM sqlite_master WHERE sql LIKE '%libsql_vector_idx%'");
    if (vectorIndex === "on") {
      assert.equal(indexes.length, 1);
      const vectors = await server.rows(`SELECT count(*) FROM ${indexes[0][0]} v JOIN memories m ON m.id = v.memory_id WHERE m.project_id = '${project}'`);
      assert.equal(Number(vectors[0][0]), 2);
    }
  } finally {
    await edge.dispose();
  }
});

test("with RERANK_PROVIDER the Worker reranks through the service, and survives its failure", async () => {
  // A TEI-shaped rerank service that prefers one memory engram ranks last.
  const service = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const { texts } = JSON.parse(body);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(texts.map((t, index) => ({ index, score: t.startsWith("release notes") ? 10 : 1 }))));
  });
  await new Promise((resolve) => service.listen(0, "127.0.0.1", resolve));
  const serviceUrl = `http://127.0.0.1:${service.address().port}`;
  const project = `rerank-${Date.now()}`;
  for (const content of ["deploy to staging before each release", "release notes are generated from commit messages"]) {
    await client(project).remember({ type: "gotcha", content });
  }
  const plain = await client(project).search("deploy release staging");
  assert.equal(plain.hits[0].memory.content, "deploy to staging before each release");
  for (const [url, first, warning] of [
    [serviceUrl, "release notes are generated from commit messages", null],
    ["http://127.0.0.1:9", "deploy to staging before each release", /rerank skipped/],
  ]) {
    const reranking = startWorker({ LIBSQL_URL: server.url, RERANK_PROVIDER: "tei", RERANK_URL: url });
    try {
      const rerankBase = (await reranking.ready).toString().replace(/\/$/, "");
      const response = await fetch(`${rerankBase}/v1/search`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "x-engram-project": project },
        body: JSON.stringify({ text: "deploy release staging" }),
      });
      const found = await response.json();
      assert.equal(found.hits[0].memory.content, first);
      if (warning) assert.match(found.warnings.join("\n"), warning);
      else {
        // Two memories the service and engram rank oppositely tie in the fused order;
        // the service's score breaks the tie.
        assert.deepEqual(found.hits.map((h) => h.breakdown.rerank), [10, 1]);
        assert.deepEqual(found.hits.map((h) => h.breakdown.rerankRank), [1, 2]);
      }
    } finally {
      await reranking.dispose();
    }
  }
  service.close();
});
