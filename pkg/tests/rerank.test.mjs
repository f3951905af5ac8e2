// The rerank stage in the npm package: a reranker function of the host (sync and async), a
// rerank service over fetch (a local HTTP server speaking the TEI and Cohere shapes,
// started here), and every way a reranker can fail leaving the order with a warning.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";

import { loadEngram } from "./load.mjs";

let engram, server, url;
const service = { requests: 0, lastBody: null };
const QUERY = "deploy release staging";
const MEMORIES = [
  "staging staging staging is reset every night",
  "deploy to staging before each release",
  "release notes are generated from commit messages",
];

/** Query words a document contains: the stand-in relevance of every reranker here. */
function overlap(query, document) {
  const text = document.toLowerCase();
  return query.toLowerCase().split(/\s+/).filter((w) => text.includes(w)).length;
}

before(async () => {
  engram = await loadEngram();
  server = http.createServer(async (req, res) => {
    service.requests++;
    let body = "";
    for await (const chunk of req) body += chunk;
    const request = JSON.parse(body);
    service.lastBody = request;
    const documents = req.url === "/rerank" ? request.texts : request.documents;
    const scored = documents.map((d, index) => ({ index, score: overlap(request.query, d) }));
    scored.sort((a, b) => b.score - a.score);
    res.writeHead(200, { "content-type": "application/json" });
    if (req.url === "/rerank") return res.end(JSON.stringify(scored));
    return res.end(JSON.stringify({ results: scored.map(({ index, score }) => ({ index, relevance_score: score })) }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${server.address().port}`;
});

after(() => server?.close());

async function memoryWith(reranker) {
  const memory = await engram.createMemory({ local: true, reranker });
  for (const content of MEMORIES) await memory.remember({ type: "gotcha", content });
  return memory;
}

const contents = (response) => response.hits.map((h) => h.memory.content);

test("a host function reranks the best candidates: sync, async, typed array", async () => {
  const plain = await (await memoryWith(undefined)).search(QUERY);
  assert.ok(plain.hits.every((h) => h.breakdown.rerank === undefined));
  assert.deepEqual(contents(plain), [MEMORIES[1], MEMORIES[0], MEMORIES[2]]);
  // The host's model prefers the memory engram ranks last. Its ranks are fused with
  // engram's (1/(60 + rank) each), so that memory rises past the one both rank below
  // engram's first, and engram's first — the host's second — stays first.
  const score = (query, d) => (d.startsWith("release notes") ? 10 : overlap(query, d));
  for (const reranker of [
    (query, documents) => documents.map((d) => score(query, d)),
    async (query, documents) => documents.map((d) => score(query, d)),
    async (query, documents) => Float32Array.from(documents, (d) => score(query, d)),
  ]) {
    const found = await (await memoryWith(reranker)).search(QUERY);
    assert.deepEqual(found.warnings ?? [], []);
    assert.deepEqual(found.hits.map((h) => h.breakdown.rerank), [3, 10, 1]);
    assert.deepEqual(found.hits.map((h) => h.breakdown.rerankRank), [2, 1, 3]);
    assert.deepEqual(contents(found), [MEMORIES[1], MEMORIES[2], MEMORIES[0]]);
  }
});

test("a rerank service over fetch, in both shapes", async () => {
  for (const [reranker, key] of [
    [{ provider: "tei", url }, "texts"],
    [{ provider: "cohere", url: `${url}/v2`, model: "rerank-test" }, "documents"],
  ]) {
    const before = service.requests;
    const found = await (await memoryWith(reranker)).search(QUERY);
    assert.equal(service.requests, before + 1);
    assert.equal(service.lastBody[key].length, 3);
    assert.deepEqual(found.hits.map((h) => h.breakdown.rerank), [3, 1, 1]);
  }
});

test("a failing reranker keeps the order and says why", async () => {
  const plain = contents(await (await memoryWith(undefined)).search(QUERY));
  const cases = [
    [() => { throw new Error("model not loaded"); }, /rerank skipped: the reranker threw: model not loaded/],
    [async () => { throw new Error("timeout"); }, /rerank skipped: the reranker rejected: timeout/],
    [() => "high", /must return an array of numbers/],
    [() => [1, "x", 2], /non-number at index 1/],
    [() => [1, 2], /returned 2 scores for 3 documents/],
    [() => [1, NaN, 2], /non-finite score/],
    [{ provider: "tei", url: "http://127.0.0.1:9" }, /rerank skipped: rerank service unreachable/],
  ];
  for (const [reranker, warning] of cases) {
    const found = await (await memoryWith(reranker)).search(QUERY);
    assert.deepEqual(contents(found), plain);
    assert.match(found.warnings.join("\n"), warning);
  }
});

test("a malformed reranker option is a typed error", async () => {
  for (const [reranker, field] of [
    [42, "reranker"],
    [{ url }, "reranker.provider"],
    [{ provider: "bm25", url }, "reranker.provider"],
    [{ provider: "cohere", url }, "reranker.model"],
  ]) {
    await assert.rejects(engram.createMemory({ local: true, reranker }), (e) => {
      assert.equal(e.code, "invalid_input");
      assert.equal(e.violations[0].field, field);
      return true;
    });
  }
});
