// The npm package in headless Chromium (Debian's package; no browser download): the API
// vectors over HTTP to a real libSQL engine and on the in-wasm SQLite engine; the model
// fetched and cached; databases in OPFS; the README snippet in a worker.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

import { startTestServer } from "../js/testserver.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SERVED = ["/pkg/dist/", "/tests/js/", "/tests/vectors/", "/tests/browser/"];
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json", ".wasm": "application/wasm" };
const TOKEN = "browser-test-token";
let server, pages, browser;

/** The pinned model's files, served at /models/ (from where scripts/fetch-model.sh put them). */
const modelRoot = process.env.ENGRAM_MODEL_DIR ?? path.join(os.homedir(), ".cache/engram/models");
const modelRequests = [];

function servePages() {
  const httpServer = http.createServer(async (req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, "http://x").pathname);
    if (pathname.startsWith("/models/") && !pathname.includes("..")) {
      modelRequests.push(pathname);
      try {
        res.writeHead(200, { "content-type": "application/octet-stream" }).end(await readFile(path.join(modelRoot, pathname.slice("/models/".length))));
      } catch {
        res.writeHead(404).end();
      }
      return;
    }
    if (pathname === "/snippet/readme.mjs") {
      // The README's snippet as a bundler serves it: the bare `engram` resolved to the
      // package's browser entry (its `default` export condition).
      const readme = await readFile(path.join(root, "README.md"), "utf8");
      const snippet = readme.slice(readme.indexOf("### npm package")).match(/```js\n([\s\S]*?)```/)[1];
      res.writeHead(200, { "content-type": "text/javascript" }).end(snippet.replace(/from "engram"/g, 'from "/pkg/dist/browser.js"'));
      return;
    }
    if (!SERVED.some((prefix) => pathname.startsWith(prefix)) || pathname.includes("..")) {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = await readFile(path.join(root, pathname));
      res.writeHead(200, { "content-type": TYPES[path.extname(pathname)] ?? "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => httpServer.listen(0, "127.0.0.1", () => resolve(httpServer)));
}

before(async () => {
  server = await startTestServer({ authToken: TOKEN });
  pages = await servePages();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_BIN ?? "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});

after(async () => {
  await browser?.close();
  pages?.close();
  await server?.stop();
});

test("the npm package passes the API vectors in Chromium", async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  const { port } = pages.address();
  const query = new URLSearchParams({ server: server.url, token: TOKEN });
  await page.goto(`http://127.0.0.1:${port}/tests/browser/page.html?${query}`);
  const handle = await page.waitForFunction(() => window.__engramResult, null, { timeout: 60_000 });
  const result = await handle.jsonValue();
  assert.deepEqual(errors, []);
  assert.equal(result.ok, true, result.error);
  assert.ok(result.httpSteps > 30);
  assert.equal(result.localSteps, result.httpSteps);
  assert.equal(result.searchHits, 1);
  assert.equal(result.searchRequests, 1);
  assert.equal(result.wrongTokenCode, "unauthorized");
});

test("loadEmbeddingModel({ url }) fetches and checks the model once; the Cache API serves it after a reload", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  const { port } = pages.address();
  const run = async () => {
    await page.goto(`http://127.0.0.1:${port}/tests/browser/model.html`);
    const handle = await page.waitForFunction(() => window.__modelResult, null, { timeout: 120_000 });
    return handle.jsonValue();
  };
  modelRequests.length = 0;
  const first = await run();
  assert.deepEqual(errors, []);
  assert.equal(first.error, undefined, first.error);
  assert.equal(first.dims, 384);
  assert.equal(first.modelId, "all-minilm-l6-v2-int8");
  assert.deepEqual(modelRequests.sort(), ["/models/all-minilm-l6-v2-int8/model.onnx", "/models/all-minilm-l6-v2-int8/tokenizer.json"]);
  modelRequests.length = 0;
  const second = await run();
  assert.equal(second.dims, 384);
  assert.deepEqual(modelRequests, [], "the reload fetched nothing: the Cache API held both files");
  assert.deepEqual(second.vector, first.vector, "the cached model embeds the same");
  console.log(`Chromium model load: ${first.ms.toFixed(0)} ms fetched, ${second.ms.toFixed(0)} ms from the cache; peak memory of the renderers: ${await rendererPeakMiB(page)}`);
  await context.close();
});

/** The peak resident memory (VmHWM) of each renderer process the browser runs, read from
 * /proc with the process ids the DevTools protocol reports; "unknown" where it cannot. */
async function rendererPeakMiB(page) {
  try {
    const session = await page.context().browser().newBrowserCDPSession();
    const { processInfo } = await session.send("SystemInfo.getProcessInfo");
    const peaks = [];
    for (const { type, id } of processInfo) {
      if (type !== "renderer") continue;
      const status = await readFile(`/proc/${id}/status`, "utf8").catch(() => "");
      const kb = Number(status.match(/VmHWM:\s+(\d+) kB/)?.[1]);
      if (kb) peaks.push(`${(kb / 1024).toFixed(0)} MiB`);
    }
    return peaks.join(", ") || "unknown";
  } catch {
    return "unknown";
  }
}

/** Calls `attempt` until it answers something other than busy, at most 50 times: after a
 * reload the old page's worker may not have let go of the database yet. */
async function untilNotBusy(attempt) {
  for (let i = 0; i < 50; i++) {
    const result = await attempt();
    if (result.code !== "unavailable") return result;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { error: "still busy after 50 attempts" };
}

test("a database in OPFS survives a reload; a second tab gets a clear busy error until the first lets go", async () => {
  const context = await browser.newContext();
  const { port } = pages.address();
  const errors = [];
  const open = async (page, query) => {
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`http://127.0.0.1:${port}/tests/browser/opfs.html?${new URLSearchParams(query)}`);
    const handle = await page.waitForFunction(() => window.__opfsResult, null, { timeout: 60_000 });
    return handle.jsonValue();
  };
  const first = await context.newPage();
  const written = await open(first, { name: "tabs.db", remember: "Run the migrations before the integration tests" });
  assert.equal(written.error, undefined, written.error);
  assert.equal(written.mainThread.code, "invalid_input");
  assert.equal(written.mainThread.field, "path");
  assert.match(written.mainThread.message, /Worker/);
  assert.deepEqual(written.opened, { count: 1, backend: "embedded SQLite opfs:/tabs.db (rusqlite)", first: "Run the migrations before the integration tests" });

  // A reload ends the page's worker; the new one may find the old handles not yet released.
  const reopen = (page) =>
    untilNotBusy(() =>
      page.evaluate(async () => {
        const r = await window.__opfs.inWorker({ name: "tabs.db" });
        if (r.code === "unavailable") r.worker.terminate();
        else window.__worker = r.worker;
        delete r.worker;
        return r;
      }),
    );
  await first.reload();
  await first.waitForFunction(() => window.__opfsResult, null, { timeout: 60_000 });
  const afterReload = await first.evaluate(() => window.__opfsResult.opened);
  const read = afterReload.code === "unavailable" ? await reopen(first) : afterReload;
  assert.equal(read.error, undefined, read.error);
  assert.equal(read.count, 1, "the memory survived the reload");
  assert.equal(read.first, "Run the migrations before the integration tests");

  // A second tab while the first holds the database: busy, named as such.
  const second = await context.newPage();
  const refused = await open(second, { name: "tabs.db" });
  assert.equal(refused.opened.code, "unavailable");
  assert.match(refused.opened.error, /open in another tab or worker/);

  // Once the first tab closes, the second opens it and sees the same memory.
  await first.close();
  const shared = await reopen(second);
  assert.equal(shared.error, undefined, shared.error);
  assert.equal(shared.count, 1);
  assert.deepEqual(errors, []);
  await context.close();
});

test("the README's snippet runs unchanged in a Chromium worker, and its database is still there after a reload", async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  const { port } = pages.address();
  await page.goto(`http://127.0.0.1:${port}/tests/browser/blank.html`);
  const inWorker = (message) =>
    page.evaluate(
      (message) =>
        new Promise((resolve) => {
          const worker = new Worker("/tests/browser/snippet-worker.js", { type: "module" });
          worker.onmessage = ({ data }) => {
            if (data.code !== "unavailable") window.__kept = worker;
            else worker.terminate();
            resolve(data);
          };
          worker.onerror = (e) => resolve({ error: e.message });
          worker.postMessage(message);
        }),
      message,
    );
  const ran = await inWorker({});
  assert.equal(ran.error, undefined, ran.error);
  assert.deepEqual(ran.printed, ["Run the migrations before the integration tests"]);

  await page.reload();
  const held = await untilNotBusy(() => inWorker({ check: ".data/engram.db" }));
  assert.equal(held.error, undefined, held.error);
  assert.equal(held.count, 1, "the snippet's memory survived the reload in OPFS");
  assert.deepEqual(errors, []);
  await context.close();
});
