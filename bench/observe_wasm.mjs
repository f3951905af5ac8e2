// Observer cost in Node on the npm package's wasm: microseconds per event (one `observe`
// call per event object, as a host calls it between agent steps, and `observeJson` with the
// whole session at once), and `finalize` with the in-wasm SQLite engine, over every recording
// in the evaluation data: `node bench/observe_wasm.mjs [EVAL_DIR]` (after
// scripts/build-pkg.sh). Two timed rounds after a warm-up round.
import { readFile, readdir, stat } from "node:fs/promises";
import path from "node:path";

import { loadEngram } from "../pkg/tests/load.mjs";

const evalDir = process.argv[2] ?? process.env.ENGRAM_EVAL_DIR ?? "../shared/eval";

async function recordings(dir, out = []) {
  let entries;
  try {
    entries = await readdir(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    const full = path.join(dir, name);
    if ((await stat(full)).isDirectory()) await recordings(full, out);
    else if (name.endsWith(".jsonl") || name.endsWith(".traj.json")) out.push(full);
  }
  return out;
}

const files = [...(await recordings(path.join(evalDir, "trajectories"))), ...(await recordings(path.join(evalDir, "transcripts")))].sort();
if (files.length === 0) {
  console.log(`skipping: no recordings under ${evalDir}`);
  process.exit(0);
}
const engram = await loadEngram();
const sessions = [];
for (const file of files) {
  try {
    sessions.push(engram.parseTranscript(await readFile(file, "utf8")));
  } catch {}
}
const perEvent = [];
const perText = [];
const batchPerEvent = [];
const finalize = [];
for (let round = 0; round < 3; round++) {
  const memory = await engram.createMemory({ local: true, projectId: `bench-${round}` });
  for (const [i, parsed] of sessions.entries()) {
    const session = memory.startSession({ sessionId: `${parsed.id}#${i}`, roots: parsed.roots });
    for (const event of parsed.events) {
      const start = process.hrtime.bigint();
      session.observe(event);
      if (round > 0) perEvent.push(Number(process.hrtime.bigint() - start) / 1000);
    }
    const start = process.hrtime.bigint();
    await session.finalize("success");
    if (round > 0) finalize.push(Number(process.hrtime.bigint() - start) / 1e6);
    const texts = parsed.events.map((e) => JSON.stringify(e));
    const asText = memory.startSession({ sessionId: `${parsed.id}#${i}-text`, roots: parsed.roots });
    for (const text of texts) {
      const start = process.hrtime.bigint();
      asText.observe(text);
      if (round > 0) perText.push(Number(process.hrtime.bigint() - start) / 1000);
    }
    const batch = memory.startSession({ sessionId: `${parsed.id}#${i}-batch`, roots: parsed.roots });
    const json = JSON.stringify(parsed.events);
    const t0 = process.hrtime.bigint();
    batch.observeJson(json);
    if (round > 0 && parsed.events.length) batchPerEvent.push(Number(process.hrtime.bigint() - t0) / 1000 / parsed.events.length);
  }
}
const sorted = (v) => [...v].sort((a, b) => a - b);
const pct = (v, p) => sorted(v)[Math.round((v.length - 1) * p)] ?? 0;
const mean = (v) => v.reduce((a, b) => a + b, 0) / Math.max(1, v.length);
console.log(
  `${sessions.length} sessions, ${perEvent.length} events timed: observe(object) mean ${mean(perEvent).toFixed(2)} µs, ` +
    `p50 ${pct(perEvent, 0.5).toFixed(2)} µs, p99 ${pct(perEvent, 0.99).toFixed(2)} µs; ` +
    `observe(JSON text) mean ${mean(perText).toFixed(2)} µs, p50 ${pct(perText, 0.5).toFixed(2)} µs, p99 ${pct(perText, 0.99).toFixed(2)} µs; ` +
    `observeJson mean ${mean(batchPerEvent).toFixed(2)} µs per event; ` +
    `finalize (in-wasm SQLite) mean ${mean(finalize).toFixed(2)} ms, p99 ${pct(finalize, 0.99).toFixed(2)} ms`,
);
