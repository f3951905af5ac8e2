// A person's operations through the npm package, on the in-wasm engine and over HTTP
// against a real libSQL server: a real instruction file imported, browsed in pages,
// counted, taught, edited, pinned, flagged; health; an export loaded into an empty
// project; and bad input as typed errors.
import { test, before, after } from "node:test";

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
