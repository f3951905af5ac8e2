// The embedded database in memory against the same in a file (node:fs through engram's
// VFS), side by side in one process: 200 remembers, then 100 searches, each timed. Both
// run twice, alternating, and the second round is compared (the first warms the engine).
// Prints one JSON line per run and the file's cost as ratios.
// Usage: node bench/persist_node.mjs [DIST_DIR] (default pkg/dist).
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(process.argv[2] ?? path.join(here, "../pkg/dist"));
const { createMemory } = await import(path.join(dist, "node.js"));
const folder = mkdtempSync(path.join(os.tmpdir(), "engram-bench-"));
const topics = ["migrations", "flaky tests", "lockfile", "retry budget", "database is locked", "cache key", "feature flag", "timeout"];

async function run(name, options) {
  const memory = await createMemory({ ...options, projectId: "bench" });
  let started = performance.now();
  for (let i = 0; i < 200; i++) {
    const topic = topics[i % topics.length];
    await memory.remember({ type: "gotcha", content: `Note ${i} about ${topic}: check the ${topic} step before release ${i % 13}` });
  }
  const rememberMs = (performance.now() - started) / 200;
  started = performance.now();
  for (let i = 0; i < 100; i++) await memory.search({ text: `${topics[i % topics.length]} before release`, limit: 5 });
  const searchMs = (performance.now() - started) / 100;
  const row = { store: name, rememberMs: +rememberMs.toFixed(2), searchMs: +searchMs.toFixed(2) };
  console.log(JSON.stringify(row));
  return row;
}

try {
  await run("memory (warm-up)", { local: true });
  await run("file (warm-up)", { local: true, path: path.join(folder, "warm.db") });
  const inMemory = await run("memory", { local: true });
  const inFile = await run("file", { local: true, path: path.join(folder, "bench.db") });
  console.log(JSON.stringify({ fileOverMemory: { remember: +(inFile.rememberMs / inMemory.rememberMs).toFixed(2), search: +(inFile.searchMs / inMemory.searchMs).toFixed(2) } }));
} finally {
  rmSync(folder, { recursive: true, force: true });
}
