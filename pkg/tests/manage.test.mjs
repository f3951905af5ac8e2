// A person's operations through the npm package, on the in-wasm engine and over HTTP
// against a real libSQL server: a real instruction file imported, browsed in pages,
// counted, taught, edited, pinned, flagged; health; an export loaded into an empty
// project; and bad input as typed errors.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";

import { loadEngram } from "./load.mjs";
import { personFlow } from "../../tests/js/person-flow.mjs";
import { startTestServer } from "../../tests/js/testserver.mjs";

const TOKEN = "manage-test-token";
let engram, server;

before(async () => {
  engram = await loadEngram();
  server = await startTestServer({ authToken: TOKEN });
});

after(async () => {
  await server?.stop();
});

test("a person's operations on the in-wasm engine", async () => {
  const memory = await engram.createMemory({ local: true, projectId: "manage-local" });
  const fresh = await engram.createMemory({ local: true, projectId: "manage-local" });
  await personFlow(memory, fresh);
});

test("a person's operations over HTTP against a real libSQL server", async () => {
  const projectId = `manage-http-${Date.now()}`;
  const memory = await engram.createMemory({ url: server.url, authToken: TOKEN, projectId });
  // An empty database of its own: an export's ids are unique across a database.
  const other = await startTestServer({ authToken: TOKEN });
  try {
    const fresh = await engram.createMemory({ url: other.url, authToken: TOKEN, projectId });
    await personFlow(memory, fresh);
  } finally {
    await other.stop();
  }
});

test("the panel's reads: sessions, the module map and a taught memory's preview", async () => {
  const memory = await engram.createMemory({ local: true, projectId: "panel-reads" });
  assert.deepEqual(await memory.recentSessions(), [], "no session yet");
  await memory.remember({
    type: "gotcha",
    content: "The retry loop in fetcher.ts must back off before the third attempt",
    relatedFiles: ["src/net/fetcher.ts"],
  });
  await memory.remember({
    type: "decision",
    content: "Timeouts are configured in config.ts, never inline",
    relatedFiles: ["src/net/fetcher.ts", "src/config.ts"],
  });
  const map = await memory.moduleMap({ limit: 10 });
  assert.deepEqual(
    map.files.map((f) => [f.path, f.folder, f.memories]),
    [
      ["src/net/fetcher.ts", "src/net/", 2],
      ["src/config.ts", "src/", 1],
    ],
  );
  const narrowed = await memory.moduleMap({ folder: "src/net/" });
  assert.deepEqual(narrowed.files.map((f) => f.path), ["src/net/fetcher.ts"]);
  await assert.rejects(memory.moduleMap({ limit: 0 }), (e) => e.code === "invalid_input");
  await assert.rejects(memory.moduleMap({ zoom: 2 }), (e) => e.code === "invalid_input");
  const before = await memory.count();
  const preview = memory.previewTeach({ content: "Run the linter before every commit", type: "preference" });
  assert.match(preview.text, /\[preference\] .*Run the linter before every commit.* \[Memory #new: /);
  assert.equal(preview.items.length, 1);
  assert.equal(await memory.count(), before, "a preview writes nothing");
  assert.throws(() => memory.previewTeach({ content: "" }), (e) => e.code === "invalid_input");
});
