// The npm package in Node: the API vectors over HTTP against a real libSQL engine and on the
// in-wasm SQLite engine, round-trip counting, auth and bad input.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";

import { loadEngram, loadVectors } from "./load.mjs";
import { runApiVectors } from "../../tests/js/api-vectors.mjs";
import { startTestServer } from "../../tests/js/testserver.mjs";

const TOKEN = "node-test-token-42";
let engram, vectors, server;

before(async () => {
  engram = await loadEngram();
  vectors = await loadVectors();
  server = await startTestServer({ authToken: TOKEN });
});

after(async () => {
  await server?.stop();
});

test("API vectors pass over HTTP (Hrana via fetch)", async () => {
  const prefix = `node-http-${Date.now()}`;
  const steps = await runApiVectors(vectors, (projectId, options) => engram.createMemory({ url: server.url, authToken: TOKEN, projectId, ...options }), prefix);
  assert.ok(steps > 30, `only ${steps} steps`);
});

test("API vectors pass on the in-wasm SQLite engine", async () => {
  const steps = await runApiVectors(vectors, (projectId, options) => engram.createMemory({ local: true, projectId, ...options }), "node-local");
  assert.ok(steps > 30, `only ${steps} steps`);
});

test("a search is exactly one HTTP request, a write two", async () => {
  const urls = [];
  const countingFetch = (url, init) => {
    urls.push(url);
    return fetch(url, init);
  };
  const memory = await engram.createMemory({ url: server.url, authToken: TOKEN, projectId: `count-${Date.now()}`, fetch: countingFetch });
  urls.length = 0;
  await memory.remember({ type: "gotcha", content: "wasm-pack needs a matching wasm-bindgen CLI on PATH" });
  // The consolidation read (the live memories it could repeat or contradict), then the
  // write with its receipt.
  assert.equal(urls.length, 2, `a write is two requests: ${urls.join(", ")}`);
  urls.length = 0;
  const serverBefore = (await server.stats()).pipelineRequests;
  const found = await memory.search("wasm-bindgen CLI");
  assert.equal(found.hits.length, 1);
  assert.equal(urls.length, 1, `requests: ${urls.join(", ")}`);
  assert.match(urls[0], /\/v3\/pipeline$/);
  assert.equal((await server.stats()).pipelineRequests - serverBefore, 1);
});

test("a write while the server is out of reach is retried, buffered and flushed, never lost", async () => {
  let reachable = true;
  const sent = [];
  const flakyFetch = (url, init) => {
    sent.push(reachable);
    return reachable ? fetch(url, init) : Promise.reject(new TypeError("fetch failed"));
  };
  const memory = await engram.createMemory({
    url: server.url, authToken: TOKEN, projectId: `durable-${Date.now()}`, fetch: flakyFetch,
    retryDelaysMs: [5, 10], writeBuffer: 1,
  });
  assert.deepEqual(memory.writeStatus(), { degraded: false, pending: 0, capacity: 1, dropped: 0 });
  reachable = false;
  sent.length = 0;
  const pending = await memory.remember({ type: "gotcha", content: "the staging database restarts nightly at 03:00" });
  assert.equal(pending.pending, true);
  assert.equal(sent.length, 4, "the consolidation read, then one attempt and two retries");
  const status = memory.writeStatus();
  assert.equal(status.degraded, true);
  assert.equal(status.pending, 1);
  assert.match(status.lastError, /fetch failed/);
  await assert.rejects(memory.remember({ type: "gotcha", content: "a second write while the buffer is full" }), (e) => e.code === "buffer_full" && e.status === 503);
  reachable = true;
  const flushed = await memory.flushWrites();
  assert.equal(flushed.pending, 0);
  assert.equal(flushed.degraded, false);
  assert.equal((await memory.get(pending.id)).content, "the staging database restarts nightly at 03:00");
  const again = await memory.remember({ type: "gotcha", content: "stored at once", idempotencyKey: "k-1" });
  assert.equal(again.pending, undefined);
  const replay = await memory.remember({ type: "gotcha", content: "stored at once", idempotencyKey: "k-1" });
  assert.equal(replay.replayed, true);
  assert.equal(replay.id, again.id);
});

test("a wrong token is refused with a typed error and nothing is written", async () => {
  const projectId = `auth-${Date.now()}`;
  await assert.rejects(engram.createMemory({ url: server.url, authToken: "wrong", projectId }), (e) => e.code === "unauthorized" && !e.message.includes("wrong"));
  const good = await engram.createMemory({ url: server.url, authToken: TOKEN, projectId });
  assert.equal((await good.search("anything at all")).hits.length, 0);
});

test("bad options and bad input are typed errors, never crashes", async () => {
  await assert.rejects(engram.createMemory({}), (e) => e.code === "invalid_input" && e.violations[0].field === "url");
  await assert.rejects(engram.createMemory("nope"), (e) => e.code === "invalid_input");
  await assert.rejects(engram.createMemory({ url: "ftp://x" }), (e) => e.violations[0].field === "url");
  await assert.rejects(engram.createMemory({ url: server.url, fetch: 42 }), (e) => e.violations[0].field === "fetch");
  const memory = await engram.createMemory({ local: true });
  await assert.rejects(memory.remember(null), (e) => e.code === "invalid_input");
  await assert.rejects(memory.remember({ type: "gotcha", content: 7 }), (e) => e.violations[0].field === "content");
  const cyclic = { type: "gotcha", content: "x" };
  cyclic.self = cyclic;
  await assert.rejects(memory.remember(cyclic), (e) => e.code === "invalid_input");
  await assert.rejects(memory.search({ text: "x", limit: "ten" }), (e) => e.violations[0].field === "limit");
  // The instance still works after all of that.
  const stored = await memory.remember({ type: "decision", content: "instances survive bad input" });
  assert.equal((await memory.get(stored.id)).content, "instances survive bad input");
});

test("tool definitions come in each SDK's shape, and bad agent-loop input is a typed error", async () => {
  const names = (tools) => tools.map((t) => t.name ?? t.function.name);
  for (const [format, key] of [[undefined, "input_schema"], ["anthropic", "input_schema"], ["openai", "function"], ["mcp", "inputSchema"]]) {
    const tools = engram.toolDefinitions(format);
    assert.deepEqual(names(tools), ["search_memory", "record_memory", "analyze_impact"]);
    assert.ok(tools.every((t) => key in t), format);
  }
  assert.throws(() => engram.toolDefinitions("gemini"), (e) => e.code === "invalid_input");
  assert.throws(() => engram.toolDefinitions(3), (e) => e.code === "invalid_input");
  const memory = await engram.createMemory({ local: true });
  await assert.rejects(memory.callTool("search_memory", "{not json"), (e) => e.violations[0].field === "arguments");
  await assert.rejects(memory.augmentToolResult("Read"), (e) => e.code === "invalid_input");
  await assert.rejects(memory.stepInjection({ step: 6, shownIds: "x" }), (e) => e.violations[0].field === "shownIds");
  await assert.rejects(memory.sessionContext({ budget: -1 }), (e) => e.violations[0].field === "budget");
  // Model arguments arrive as objects or as JSON text; both work, and the instance survives.
  const recorded = await memory.callTool("record_memory", JSON.stringify({ type: "gotcha", content: "jest needs --runInBand here" }));
  const found = await memory.callTool("search_memory", { query: "jest runInBand" });
  assert.deepEqual(found.memoryIds, [recorded.data.id]);
  assert.equal(await memory.sessionContext().then((c) => c.memoryIds.length), 0);
});

test("the session-context prompt reads as one user message, and bad arguments are named", async () => {
  const [prompt] = engram.promptDefinitions();
  assert.equal(prompt.name, "session_context");
  assert.deepEqual(prompt.arguments.map((a) => a.name), ["task", "files", "modules", "phase", "budget"]);
  const memory = await engram.createMemory({ local: true });
  const empty = await memory.getPrompt("session_context");
  assert.deepEqual(empty.memoryIds, []);
  assert.match(empty.text, /holds nothing for this task yet/);
  const stored = await memory.remember({ type: "gotcha", content: "the billing webhook retries twice, so handlers must be idempotent", relatedFiles: ["src/billing/webhook.ts"] });
  const found = await memory.getPrompt("session_context", { task: "change the billing webhook handler", files: "src/billing/webhook.ts", phase: "implement" });
  assert.deepEqual(found.memoryIds, [stored.id]);
  assert.ok(found.text.includes(`[Memory #${stored.id}`), found.text);
  assert.match(found.description, /change the billing webhook handler/);
  await assert.rejects(memory.getPrompt("session_context", { budget: "lots" }), (e) => e.code === "invalid_input" && e.violations[0].field === "arguments.budget");
  await assert.rejects(memory.getPrompt("standup", {}), (e) => e.violations[0].field === "name");
});

test("an unreachable server is an 'unavailable' error", async () => {
  const dead = await startTestServer();
  const url = dead.url;
  await dead.stop();
  await assert.rejects(engram.createMemory({ url }), (e) => e.code === "unavailable");
});

// 24 memories: below the dense path's 30 candidates and the index's 3,000-memory threshold,
// so the exact scan answers; the native conformance tests (vector_index.rs) show the index
// answering from its threshold, with the same SQL this package sends.
test("vectorIndex: the server's vector index is created and kept current by every writer, and dense searches rank as the exact scan", async () => {
  // A fake embedding service behind `fetch`: word hashes, so related texts share dimensions.
  const dims = 16;
  const embed = (text) => {
    const v = new Array(dims).fill(0.01);
    for (const word of text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean)) {
      let h = 7;
      for (const c of word) h = (h * 31 + c.charCodeAt(0)) >>> 0;
      v[h % dims] += 1;
    }
    for (let i = 0; i < text.length; i++) v[i % dims] += text.charCodeAt(i) * 1e-4;
    return v;
  };
  const withEmbedder = async (url, init) => {
    if (!String(url).startsWith("http://embedder.invalid/")) return fetch(url, init);
    const data = JSON.parse(init.body).input.map((t, index) => ({ index, embedding: embed(t) }));
    return new Response(JSON.stringify({ data }), { status: 200, headers: { "content-type": "application/json" } });
  };
  const options = {
    url: server.url, authToken: TOKEN, projectId: `vector-index-${Date.now()}`, fetch: withEmbedder,
    embedder: { provider: "openai", url: "http://embedder.invalid/v1", model: "node-vi", dims },
  };
  const exact = await engram.createMemory(options);
  const facts = ["times out when the pool is exhausted", "caches responses in redis", "has flaky snapshot tests",
    "deploys from tags", "reads config from the environment", "retries with exponential backoff"];
  const subjects = ["billing", "search", "auth", "export"];
  // Half before the index exists (filled when it is created), half after by an instance
  // that never enabled it (the table's triggers index them).
  for (const s of subjects.slice(0, 2)) for (const f of facts) await exact.remember({ type: "gotcha", content: `the ${s} service ${f}` });
  const indexed = await engram.createMemory({ ...options, vectorIndex: true });
  for (const s of subjects.slice(2)) for (const f of facts) await exact.remember({ type: "gotcha", content: `the ${s} service ${f}` });
  const indexes = await server.rows("SELECT name, sql FROM sqlite_master WHERE sql LIKE '%libsql_vector_idx%'");
  assert.equal(indexes.length, 1);
  assert.match(indexes[0][1], /compress_neighbors=float8/);
  const table = indexes[0][0].replace(/_ann8$/, "");
  assert.equal(Number((await server.rows(`SELECT count(*) FROM ${table}`))[0][0]), subjects.length * facts.length);
  const ranked = (r) => r.hits.map((h) => [h.memory.id, h.breakdown.dense.rank]);
  for (const text of ["pool exhausted timeouts", "redis caching", "the export service", "flaky tests"]) {
    const search = { text, mode: "dense", limit: 10 };
    const [a, b] = [await indexed.search(search), await exact.search(search)];
    // Both answer with the related hits only (the search cut drops the clearly unrelated).
    assert.ok(a.hits.length >= 3, `${text}: ${a.hits.length} hits`);
    assert.deepEqual(ranked(a), ranked(b), text);
  }
  // The in-wasm engine has no vector index: the option leaves the exact scan.
  const local = await engram.createMemory({ local: true, fetch: withEmbedder, embedder: options.embedder, vectorIndex: true });
  await local.remember({ type: "gotcha", content: "the billing service deploys from tags" });
  assert.equal((await local.search({ text: "deploys from tags", mode: "dense" })).hits.length, 1);
  await assert.rejects(engram.createMemory({ ...options, vectorIndex: "yes" }), (e) => e.code === "invalid_input" && e.violations[0].field === "vectorIndex");
});

test("MCP messages are answered by the core: what needs no database at once, tool calls by the engram", async () => {
  const listed = engram.mcpMessage(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
  assert.equal(listed.needsEngram, false);
  assert.deepEqual(JSON.parse(listed.reply).result.tools.map((t) => t.name), ["search_memory", "record_memory", "analyze_impact"]);
  assert.equal(JSON.parse(engram.mcpMessage("{not json").reply).error.code, -32700);
  assert.deepEqual(engram.mcpMessage(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })), { reply: null, needsEngram: false });
  const call = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "record_memory", arguments: { type: "gotcha", content: "vitest needs --pool=forks for native addons" } } });
  assert.equal(engram.mcpMessage(call).needsEngram, true);
  const memory = await engram.createMemory({ local: true });
  const recorded = JSON.parse(await memory.answerMcp(call));
  assert.equal(recorded.id, 2);
  assert.equal(recorded.result.isError, false);
  const found = JSON.parse(await memory.answerMcp(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "search_memory", arguments: { query: "vitest native addons" } } })));
  assert.match(found.result.content[0].text, /pool=forks/);
  assert.equal(await memory.answerMcp(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled" })), null);
});

test("every error carries the core's code and the HTTP status it maps to", async () => {
  await assert.rejects(engram.createMemory({ local: true, residentVectors: true }), (e) => e.code === "invalid_input" && e.status === 400 && e.violations[0].field === "residentVectors");
  assert.equal(engram.httpStatus("not_found"), 404);
  assert.equal(engram.httpStatus("unavailable"), 503);
  assert.equal(engram.httpStatus("no_such_code"), 500);
});
