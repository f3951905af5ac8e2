// The Worker in workerd (through Miniflare, from the npm registry), answering real HTTP
// requests on 127.0.0.1, storing into a real libSQL engine (engram-testserver).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import http from "node:http";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";

import { runApiVectors } from "../../tests/js/api-vectors.mjs";
import { personFlow } from "../../tests/js/person-flow.mjs";
import { loadEngram } from "../../pkg/tests/load.mjs";
import { startTestServer } from "../../tests/js/testserver.mjs";
import { workerOptions } from "./miniflare-options.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const TOKEN = "tenant-a-token";
const modelDir = process.env.ENGRAM_MODEL_DIR ?? path.join(os.homedir(), ".cache/engram/models");
let server, mf, base;

// The Worker in workerd with these bindings (vars).
function startWorker(bindings) {
  return new Miniflare({ ...workerOptions("workers/src/index.js"), bindings });
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

// A client of the Worker at `at` (the suite's Worker by default) with the npm package's
// method names.
function client(projectId, token = TOKEN, at = undefined) {
  const call = async (route, body) => {
    const response = await fetch(`${at ?? base}/v1/${route}`, {
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
    getAny: async (id) => {
      try {
        return await call("get-any", { id });
      } catch (e) {
        if (e.code === "not_found") return null;
        throw e;
      }
    },
    history: (id) => call("history", { id }),
    restore: (id) => call("restore", { id }),
    prune: (request) => call("prune", request ?? {}),
    flushUses: () => call("flush-uses", {}),
    callTool: (name, args) => call("tool", { name, arguments: args }),
    impact: (request) => call("impact", request),
    dependencies: (request) => call("dependencies", request),
    neighbours: (request) => call("neighbours", request),
    getPrompt: (name, args) => call("prompt", { name, arguments: args }),
    sessionContext: (start) => call("session-context", start ?? {}),
    augmentToolResult: (context) => call("augment", context),
    stepInjection: (request) => call("step", request),
    recordCalibration: (sample) => call("calibration", sample),
    stepLimit: (request) => call("step-limit", request),
    plannerContext: (request) => call("plan", request),
    list: (request) => call("list", request ?? {}),
    count: async (filter) => (await call("count", filter ?? {})).count,
    update: (id, update, confirm) => call("update", { id, update, confirm: confirm === true }),
    confirm: (id) => call("confirm", { id }),
    flagWrong: (id, reason) => call("flag", { id, reason }),
    pin: (id, pinned) => call("pin", { id, pinned }),
    teach: (taught) => call("teach", taught),
    // As the package's `purge`, nothing: the route answers `{ purged: id }`.
    purge: async (id) => {
      const { purged } = await call("purge", { id });
      assert.equal(typeof purged, "string");
    },
    importInstructions: (request) => call("import", request),
    exportJson: () => call("export", {}),
    loadExport: (exported) => call("load-export", exported),
    exportMarkdown: async () => (await call("export-markdown", {})).markdown,
    health: () => call("health", {}),
    trustLevel: () => call("trust", {}),
    reset: async (confirm) => (await call("reset", { confirm })).deleted,
    setTrustLevel: (level) => call("trust", { level }),
    sessionReview: (sessionId) => call("review", { sessionId }),
    recentSessions: (limit) => call("sessions", { limit }),
    moduleMap: (request) => call("map", request ?? {}),
    previewTeach: (taught) => call("teach-preview", taught),
    origins: (id) => call("origins", { id }),
  };
}

test("API vectors pass through the Worker over HTTP", async () => {
  const vectors = JSON.parse(await readFile(path.resolve(here, "../../tests/vectors/api.json"), "utf8"));
  const steps = await runApiVectors(vectors, async (projectId) => client(projectId), `worker-${Date.now()}`, { openSteps: false });
  assert.ok(steps > 30, `only ${steps} steps`);
});

test("a person's operations through the Worker's routes", async () => {
  const projectId = `worker-person-${Date.now()}`;
  // An empty database of its own for the export to load into: ids are unique per database.
  const other = await startTestServer({ authToken: TOKEN });
  const otherWorker = startWorker({ LIBSQL_URL: other.url });
  try {
    const otherBase = (await otherWorker.ready).toString().replace(/\/$/, "");
    await personFlow(client(projectId), client(projectId, TOKEN, otherBase));
  } finally {
    await otherWorker.dispose();
    await other.stop();
  }
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

test("an MCP client uses the tools and the session-context prompt over streamable HTTP", async () => {
  const project = `mcp-${Date.now()}`;
  let nextId = 0;
  const post = async (message, token = TOKEN) => {
    const response = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "x-engram-project": project, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: typeof message === "string" ? message : JSON.stringify(message),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  };
  const request = async (method, params = {}) => {
    const id = ++nextId;
    const { status, body } = await post({ jsonrpc: "2.0", id, method, params });
    assert.equal(status, 200);
    assert.equal(body.id, id);
    return body;
  };

  const init = await request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } });
  assert.equal(init.result.protocolVersion, "2025-06-18");
  assert.equal(init.result.serverInfo.name, "engram");
  assert.match(init.result.instructions, /search_memory/);
  assert.ok(init.result.capabilities.tools && init.result.capabilities.prompts);
  const later = await request("initialize", { protocolVersion: "2099-01-01" });
  assert.equal(later.result.protocolVersion, "2025-06-18");
  assert.equal((await post({ jsonrpc: "2.0", method: "notifications/initialized" })).status, 202);

  const tools = (await request("tools/list")).result.tools;
  assert.deepEqual(tools.map((t) => t.name), ["search_memory", "record_memory", "analyze_impact"]);
  assert.ok(tools.every((t) => t.inputSchema.type === "object"));
  const prompts = (await request("prompts/list")).result.prompts;
  assert.deepEqual(prompts.map((p) => p.name), ["session_context", "remember"]);

  const recorded = await request("tools/call", { name: "record_memory", arguments: { type: "gotcha", content: "the nightly export job must run after the ledger close", files: ["jobs/export.py"] } });
  assert.equal(recorded.result.isError, false);
  const id = /memory #(\S+)\./.exec(recorded.result.content[0].text)?.[1];
  assert.ok(id, recorded.result.content[0].text);
  const found = await request("tools/call", { name: "search_memory", arguments: { query: "nightly export ledger" } });
  assert.ok(found.result.content[0].text.includes(`[Memory #${id}:`), found.result.content[0].text);
  const badCall = await request("tools/call", { name: "search_memory", arguments: { query: "x", limit: 99 } });
  assert.equal(badCall.result.isError, true);
  assert.match(badCall.result.content[0].text, /arguments\.limit/);

  const prompt = await request("prompts/get", { name: "session_context", arguments: { task: "move the nightly export", files: "jobs/export.py" } });
  assert.equal(prompt.result.messages[0].role, "user");
  assert.ok(prompt.result.messages[0].content.text.includes(`[Memory #${id}:`), prompt.result.messages[0].content.text);
  const badPrompt = await request("prompts/get", { name: "session_context", arguments: { phase: "ship" } });
  assert.equal(badPrompt.error.code, -32602);
  assert.match(badPrompt.error.message, /arguments\.phase/);
  assert.equal((await request("resources/list")).error.code, -32601);

  // Transport errors: malformed JSON, a batch, GET, a wrong or missing token.
  assert.equal((await post("{not json")).body.error.code, -32700);
  assert.equal((await post([{ jsonrpc: "2.0", id: 1, method: "ping" }])).body.error.code, -32600);
  assert.equal((await fetch(`${base}/mcp`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 405);
  const wrong = await post({ jsonrpc: "2.0", id: 99, method: "tools/call", params: { name: "search_memory", arguments: { query: "x" } } }, "not-the-token");
  assert.equal(wrong.status, 401);
  assert.equal((await fetch(`${base}/mcp`, { method: "POST", body: "{}" })).status, 401);
});

test("the Worker answers impact questions over a graph the npm package indexed into the same database", async () => {
  const project = `impact-${Date.now()}`;
  const { cases } = JSON.parse(await readFile(path.resolve(here, "../../tests/vectors/graph.json"), "utf8"));
  const files = cases.find((c) => c.name === "python").files;
  // An indexer with parsers (here the npm package in Node; the CLI in CI) writes the graph.
  const engram = await loadEngram();
  const indexer = await engram.createMemory({ url: server.url, authToken: TOKEN, projectId: project });
  assert.equal((await indexer.indexFiles(files, { complete: true })).added, 3);
  const api = client(project);
  const stored = await api.remember({ type: "gotcha", content: "helper() must stay pure", relatedFiles: ["pkg/job.py"] });
  const impact = await api.impact({ target: "pkg/base.py#function:helper", maxDepth: 3 });
  assert.deepEqual(
    impact.impacted.filter((n) => n.depth === 1).map((n) => n.id).sort(),
    ["pkg/base.py#method:Base.run", "pkg/job.py#method:Job.run"],
  );
  assert.deepEqual(impact.memories.map((m) => [m.id, m.attachedTo]), [[stored.id, "pkg/job.py"]]);
  const tool = await api.callTool("analyze_impact", { target: "pkg/base.py#function:helper" });
  assert.ok(tool.memoryIds.includes(stored.id), tool.text);
  assert.match(tool.text, /Job\.run/);
  await assert.rejects(api.impact({ target: "x", maxDepth: 9 }), (e) => e.code === "invalid_input" && e.violations[0].field === "maxDepth");
  await assert.rejects(api.impact({ target: " " }), (e) => e.code === "invalid_input" && e.violations[0].field === "target");
  const dependencies = await api.dependencies({ file: "pkg/job.py", maxDepth: 1 });
  assert.deepEqual(dependencies.files.map((f) => [f.path, f.depth]), [["pkg/base.py", 1]]);
  assert.ok(dependencies.nodes.some((n) => n.id === "pkg/base.py#class:Base"), JSON.stringify(dependencies.nodes));
  const neighbours = await api.neighbours({ files: ["pkg/base.py"] });
  assert.deepEqual(neighbours.map((n) => n.path), ["pkg/job.py"]);
  await assert.rejects(api.dependencies({ file: "pkg/job.py", maxDepth: 0 }), (e) => e.violations[0].field === "maxDepth");
  await assert.rejects(api.neighbours({ files: "pkg/base.py" }), (e) => e.code === "invalid_input" && e.violations[0].field === "files");
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

test("the MiniLM Worker loads the transformer from its R2 binding, names what is missing or wrong there, and searches hybrid", async () => {
  const mf = new Miniflare({
    ...workerOptions("workers/src/minilm.js"),
    bindings: { LIBSQL_URL: server.url, EMBEDDINGS: "minilm" },
    r2Buckets: ["MODELS"],
  });
  try {
    const at = (await mf.ready).toString().replace(/\/$/, "");
    const bucket = await mf.getR2Bucket("MODELS");
    const api = client(`minilm-${Date.now()}`, TOKEN, at);
    const files = path.join(modelDir, "all-minilm-l6-v2-int8");
    // Plain bytes: Miniflare's proxy refuses a Node Buffer.
    const bytesOf = async (name) => new Uint8Array(await readFile(path.join(files, name)));
    // Nothing uploaded yet: the error names the key, and nothing is cached from it.
    await assert.rejects(api.search("anything"), (e) => e.code === "model_error" && e.message.includes("all-minilm-l6-v2-int8/model.onnx") && e.violations[0].field === "MODELS");
    // A tokenizer that is not the pinned one is refused by its size, before it is read.
    await bucket.put("all-minilm-l6-v2-int8/model.onnx", await bytesOf("model.onnx"));
    await bucket.put("all-minilm-l6-v2-int8/tokenizer.json", "{}");
    await assert.rejects(api.search("anything"), (e) => e.code === "model_error" && /tokenizer\.json .*not the pinned.*2 bytes/.test(e.message));
    // One of the pinned size but other bytes is refused by its sha256.
    const tokenizerBytes = await bytesOf("tokenizer.json");
    const altered = tokenizerBytes.slice();
    altered[100] ^= 1;
    await bucket.put("all-minilm-l6-v2-int8/tokenizer.json", altered);
    await assert.rejects(api.search("anything"), (e) => e.code === "model_error" && /tokenizer\.json .*not the pinned.*sha256/.test(e.message));
    // The right files: the next request loads them.
    await bucket.put("all-minilm-l6-v2-int8/tokenizer.json", tokenizerBytes);
    const locked = await api.remember({ type: "gotcha", content: "SQLite reports 'database is locked' when two test processes share one database file" });
    assert.equal(locked.embeddingModel, "all-minilm-l6-v2-int8");
    await api.remember({ type: "preference", content: "Use CSS grid instead of flexbox for the dashboard layout" });
    // A paraphrase with no word in common is found by the transformer alone.
    const dense = await api.search({ text: "parallel unit runs collide on the same storage", mode: "dense" });
    assert.equal(dense.hits[0].memory.id, locked.id);
    assert.equal(dense.hits[0].breakdown.dense.rank, 1);
    const hybrid = await api.search({ text: "database locked" });
    assert.equal(hybrid.hits[0].memory.id, locked.id);
    assert.equal(hybrid.hits[0].breakdown.keyword.rank, 1);
    assert.equal(hybrid.hits[0].breakdown.dense.rank, 1);
  } finally {
    await mf.dispose();
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

test("the vectors' open options, as the Worker's ENGRAM_OPTIONS setting, fail each request with the core's field and code", async () => {
  const vectors = JSON.parse(await readFile(path.resolve(here, "../../tests/vectors/api.json"), "utf8"));
  const opens = vectors.cases.flatMap((c) => c.steps).filter((s) => s.op === "open" && s.expectError);
  // The settings the Worker controls itself (the database, tenant and project) are not the
  // tenant's to set; the others go through ENGRAM_OPTIONS as every host's options do.
  const settable = opens.filter((s) => !("projectId" in s.options));
  assert.ok(settable.length >= 8, `only ${settable.length} open steps`);
  const worker = startWorker({ LIBSQL_URL: server.url, ENGRAM_OPTIONS: "{}" });
  try {
    for (const step of settable) {
      await worker.setOptions({ ...workerOptions("workers/src/index.js"), bindings: { LIBSQL_URL: server.url, ENGRAM_OPTIONS: JSON.stringify(step.options) } });
      const workerBase = (await worker.ready).toString().replace(/\/$/, "");
      const response = await fetch(`${workerBase}/v1/search`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "x-engram-project": `options-${Date.now()}` },
        body: JSON.stringify({ text: "anything" }),
      });
      const body = await response.json();
      const what = JSON.stringify(step.options);
      assert.equal(body.error?.code, step.expectError.code, what);
      assert.equal(body.error.violations[0].field, step.expectError.field, what);
      assert.equal(response.status, 400, what);
    }
  } finally {
    await worker.dispose();
  }
});

test("with TENANTS, a token reaches only its own projects on a database tenants share", async () => {
  const sha256 = async (text) => {
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
    return Buffer.from(digest).toString("hex");
  };
  const [alice, bob] = ["alice-token-7f3a9", "bob-token-c81d2"];
  const tenants = [
    { tokenSha256: await sha256(alice), url: server.url, authToken: TOKEN, projects: ["alpha"] },
    { tokenSha256: await sha256(bob), url: server.url, authToken: TOKEN, projects: ["beta"] },
  ];
  const worker = startWorker({ LIBSQL_URL: server.url, TENANTS: JSON.stringify(tenants) });
  try {
    const workerBase = (await worker.ready).toString().replace(/\/$/, "");
    const call = async (token, project, route, body) => {
      const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
      if (project) headers["x-engram-project"] = project;
      const response = await fetch(`${workerBase}/v1/${route}`, { method: "POST", headers, body: JSON.stringify(body) });
      return { status: response.status, body: await response.json() };
    };
    const content = `quokkaswitch ${Date.now()}: the billing cron must run after the ledger close`;
    const stored = await call(alice, "alpha", "remember", { type: "gotcha", content });
    assert.equal(stored.status, 201, JSON.stringify(stored.body));
    const id = stored.body.id;

    // Bob names Alice's project: refused before any database is opened.
    const crossing = await call(bob, "alpha", "search", { text: "quokkaswitch billing" });
    assert.equal(crossing.status, 403);
    assert.equal(crossing.body.error.code, "forbidden");
    // In his own project Bob cannot find, read or forget Alice's memory.
    const found = await call(bob, "beta", "search", { text: "quokkaswitch billing" });
    assert.equal(found.status, 200);
    assert.equal(found.body.hits.length, 0);
    const read = await call(bob, "beta", "get", { id });
    assert.equal(read.body.error?.code, "not_found");
    const forgot = await call(bob, undefined, "forget", { id });
    assert.equal(forgot.body.forgotten, false);
    // Alice still has it, in her project (her first when no header is sent).
    const mine = await call(alice, undefined, "get", { id });
    assert.equal(mine.body.content, content);
    // A token no tenant holds is refused.
    const stranger = await call("mallory-token", "alpha", "search", { text: "quokkaswitch" });
    assert.equal(stranger.status, 401);
    assert.equal(stranger.body.error.code, "unauthorized");
    // A write cannot pin or verify its own memory.
    const pinned = await call(alice, "alpha", "remember", { type: "gotcha", content: "trust me", flags: { pinned: true } });
    assert.equal(pinned.status, 403);
    assert.equal(pinned.body.error.violations[0].field, "flags.pinned");
  } finally {
    await worker.dispose();
  }
});
