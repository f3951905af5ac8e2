// The package in a Next.js app as a new developer makes one: a fresh folder, the packed
// tarball and Next.js (the version the panel pins) installed, no next.config, the README's
// snippet unchanged in a route handler; `next build`, then `next start`, then a request.
// Then the same app with `output: "standalone"`: each module once in the standalone folder,
// and its server.js answering the route.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import test from "node:test";
import { promisify } from "node:util";

import { distDir } from "./load.mjs";
import { freePort } from "../../tests/js/ports.mjs";

const run = promisify(execFile);
const repo = path.resolve(distDir, "../..");
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };

async function readmeSnippet() {
  const readme = await readFile(path.join(repo, "README.md"), "utf8");
  return readme.slice(readme.indexOf("### npm package")).match(/```js\n([\s\S]*?)```/)[1];
}

/** The size of every `.wasm` file under `dir`, smallest first. */
async function wasmSizes(dir) {
  const entries = await readdir(dir, { recursive: true });
  const wasm = entries.filter((name) => name.endsWith(".wasm"));
  return (await Promise.all(wasm.map(async (name) => (await stat(path.join(dir, name))).size))).sort((a, b) => a - b);
}

/** Starts a Next.js server (`args` then a free port, or PORT for standalone's server.js),
 * requests the snippet's route until it answers, and returns it with what it printed. */
async function serve(command, args, cwd, standalone = false) {
  const port = await freePort();
  const server = spawn(command, standalone ? args : [...args, String(port)], {
    cwd,
    env: standalone ? { ...env, PORT: String(port), HOSTNAME: "127.0.0.1" } : env,
  });
  let printed = "";
  server.stdout.on("data", (d) => (printed += d));
  server.stderr.on("data", (d) => (printed += d));
  let response;
  for (let i = 0; i < 300 && !response; i++) {
    response = await fetch(`http://127.0.0.1:${port}/api/snippet`).catch(() => undefined);
    if (!response) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(response, `the server never answered: ${printed}`);
  assert.equal(response.status, 200, printed);
  assert.deepEqual(await response.json(), { ok: true });
  for (let i = 0; i < 50 && !printed.includes("Run the migrations"); i++) await new Promise((r) => setTimeout(r, 100));
  return { server, printed };
}

test("the README's snippet runs unchanged in a Next.js route: no config, next build, next start; standalone carries each module once", async () => {
  const app = await mkdtemp(path.join(tmpdir(), "engram-next-"));
  let server;
  try {
    const pins = JSON.parse(await readFile(path.join(repo, "www/package.json"), "utf8")).dependencies;
    const packed = JSON.parse((await run("npm", ["pack", distDir, "--json", "--pack-destination", app])).stdout);
    await writeFile(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    await run(
      "npm",
      ["install", "--prefer-offline", "--no-audit", "--no-fund", `./${packed[0].filename}`, `next@${pins.next}`, `react@${pins.react}`, `react-dom@${pins["react-dom"]}`],
      { cwd: app, maxBuffer: 16 << 20 },
    );
    const route = path.join(app, "app/api/snippet");
    await mkdir(route, { recursive: true });
    await writeFile(path.join(app, "app/layout.js"), "export default function Root({ children }) { return <html><body>{children}</body></html>; }\n");
    await writeFile(path.join(route, "snippet.mjs"), await readmeSnippet());
    await writeFile(
      path.join(route, "route.js"),
      'export const dynamic = "force-dynamic";\nexport async function GET() {\n  await import("./snippet.mjs");\n  return Response.json({ ok: true });\n}\n',
    );
    const next = path.join(app, "node_modules/next/dist/bin/next");
    await run(process.execPath, [next, "build"], { cwd: app, env, maxBuffer: 16 << 20 });
    // Each module (the core, the embedder) is bundled once, as an asset of the server build.
    const shipped = await Promise.all(["engram_bg.wasm", "engram_embed_bg.wasm"].map(async (name) => (await stat(path.join(distDir, name))).size));
    assert.deepEqual(await wasmSizes(path.join(app, ".next/server")), shipped.sort((a, b) => a - b));
    let answer = await serve(process.execPath, [next, "start", "-H", "127.0.0.1", "-p"], app);
    server = answer.server;
    assert.match(answer.printed, /Run the migrations before the integration tests/);
    assert.ok(existsSync(path.join(app, ".data/engram.db")), "the route's database is a file in the app's folder");
    server.kill();

    // Standalone output: the folder a deployment copies carries each module once.
    await writeFile(path.join(app, "next.config.mjs"), 'export default { output: "standalone" };\n');
    await run(process.execPath, [next, "build"], { cwd: app, env, maxBuffer: 16 << 20 });
    const standalone = path.join(app, ".next/standalone");
    assert.deepEqual(await wasmSizes(standalone), shipped.sort((a, b) => a - b));
    answer = await serve(process.execPath, ["server.js"], standalone, true);
    server = answer.server;
    assert.match(answer.printed, /Run the migrations before the integration tests/);
  } finally {
    server?.kill();
    await rm(app, { recursive: true, force: true });
  }
});
