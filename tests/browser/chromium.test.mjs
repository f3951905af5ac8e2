// The npm package in headless Chromium (Debian's package; no browser download): the API
// vectors over HTTP to a real libSQL engine and on the in-wasm SQLite engine.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

import { startTestServer } from "../js/testserver.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SERVED = ["/pkg/dist/", "/tests/js/", "/tests/vectors/", "/tests/browser/"];
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json", ".wasm": "application/wasm" };
const TOKEN = "browser-test-token";
let server, pages, browser;

function servePages() {
  const httpServer = http.createServer(async (req, res) => {
    const pathname = decodeURIComponent(new URL(req.url, "http://x").pathname);
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
