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
  const steps = await runApiVectors(vectors, (projectId) => engram.createMemory({ url: server.url, authToken: TOKEN, projectId }), prefix);
  assert.ok(steps > 30, `only ${steps} steps`);
});

test("API vectors pass on the in-wasm SQLite engine", async () => {
  const steps = await runApiVectors(vectors, (projectId) => engram.createMemory({ local: true, projectId }), "node-local");
  assert.ok(steps > 30, `only ${steps} steps`);
});

test("a search is exactly one HTTP request", async () => {
  const urls = [];
  const countingFetch = (url, init) => {
    urls.push(url);
    return fetch(url, init);
  };
  const memory = await engram.createMemory({ url: server.url, authToken: TOKEN, projectId: `count-${Date.now()}`, fetch: countingFetch });
  await memory.remember({ type: "gotcha", content: "wasm-pack needs a matching wasm-bindgen CLI on PATH" });
  urls.length = 0;
  const serverBefore = (await server.stats()).pipelineRequests;
  const found = await memory.search("wasm-bindgen CLI");
  assert.equal(found.hits.length, 1);
  assert.equal(urls.length, 1, `requests: ${urls.join(", ")}`);
  assert.match(urls[0], /\/v3\/pipeline$/);
  assert.equal((await server.stats()).pipelineRequests - serverBefore, 1);
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

test("an unreachable server is an 'unavailable' error", async () => {
  const dead = await startTestServer();
  const url = dead.url;
  await dead.stop();
  await assert.rejects(engram.createMemory({ url }), (e) => e.code === "unavailable");
});
