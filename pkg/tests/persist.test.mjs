// The embedded database kept in a file in Node: what one process remembers the next one
// finds, two processes writing at once share the file (they take turns on its lock), a
// lock left by a process that crashed is taken over, and the API vectors pass on a file.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { distDir, loadVectors } from "./load.mjs";
import { runApiVectors } from "../../tests/js/api-vectors.mjs";

const entry = path.join(distDir, "node.js");
let folder;

before(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), "engram-persist-"));
});

after(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** Runs `body` (with `createMemory` and `db` in scope) in a Node process of its own. */
function inProcess(db, body) {
  const script = `import { createMemory } from ${JSON.stringify(entry)};\nconst db = ${JSON.stringify(db)};\n${body}`;
  return promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }).then((r) => r.stdout.trim());
}

test("what one process remembers in a file, the next process finds", async () => {
  const db = path.join(folder, "restart", "memory.db");
  await inProcess(db, `const m = await createMemory({ local: true, path: db, projectId: "app" });
await m.remember({ type: "gotcha", content: "Run the migrations before the integration tests" });`);
  assert.ok(existsSync(db), "the folder and the file are created");
  assert.equal(readFileSync(db).subarray(0, 16).toString("latin1"), "SQLite format 3\0");
  assert.ok(!existsSync(`${db}.lock`) && !existsSync(`${db}-journal`), "nothing is left beside it");
  const found = await inProcess(db, `const m = await createMemory({ local: true, path: db, projectId: "app" });
const { hits } = await m.search({ text: "integration tests fail", limit: 3 });
console.log(await m.count(), hits[0]?.memory.content);`);
  assert.equal(found, "1 Run the migrations before the integration tests");
});

test("a relative path is the working folder's, and without a path nothing is written", async () => {
  const cwd = path.join(folder, "relative");
  const script = `import { createMemory } from ${JSON.stringify(entry)};
const kept = await createMemory({ local: true, path: "data/engram.db" });
await kept.remember({ type: "decision", content: "Keep the lockfile committed" });
const gone = await createMemory({ local: true });
await gone.remember({ type: "decision", content: "Only in memory" });
console.log(kept.backend);`;
  execFileSync("mkdir", ["-p", cwd]);
  const printed = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd, encoding: "utf8" });
  assert.match(printed, new RegExp(`${path.join(cwd, "data/engram.db").replaceAll("/", "\\/")}`));
  assert.deepEqual(execFileSync("ls", ["-A", cwd], { encoding: "utf8" }).trim().split("\n"), ["data"]);
});

test("two processes writing one file at once take turns: every memory lands, the file stays whole", async () => {
  const db = path.join(folder, "shared.db");
  await inProcess(db, `await createMemory({ local: true, path: db, projectId: "shared" });`);
  const writer = (name) =>
    inProcess(db, `const m = await createMemory({ local: true, path: db, projectId: "shared" });
for (let i = 0; i < 25; i++) {
  await m.remember({ type: "decision", content: "${name} decided step " + i + " of the rollout plan" });
}
console.log("done");`);
  const done = await Promise.all([writer("alpha"), writer("beta")]);
  assert.deepEqual(done, ["done", "done"]);
  const counted = await inProcess(db, `const m = await createMemory({ local: true, path: db, projectId: "shared" });
const { hits } = await m.search({ text: "beta decided step 24", limit: 1 });
console.log(await m.count(), hits[0]?.memory.content);`);
  assert.equal(counted, "50 beta decided step 24 of the rollout plan");
  assert.ok(!existsSync(`${db}.lock`));
});

test("a lock left behind by a process that crashed is taken over; a live holder's is waited for", async () => {
  const db = path.join(folder, "crashed.db");
  await inProcess(db, `await createMemory({ local: true, path: db });`);
  const gone = execFileSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" }).trim();
  await writeFile(`${db}.lock`, `${gone}@${os.hostname()}`);
  const written = await inProcess(db, `const m = await createMemory({ local: true, path: db });
await m.remember({ type: "gotcha", content: "The crashed writer's lock was taken over" });
console.log(await m.count());`);
  assert.equal(written, "1");
  assert.ok(!existsSync(`${db}.lock`));

  // This test's own process is alive: its lock makes the writer wait, then answer busy.
  await writeFile(`${db}.lock`, `${process.pid}@${os.hostname()}`);
  const refused = await inProcess(db, `try {
  const m = await createMemory({ local: true, path: db });
  await m.count();
  console.log("opened");
} catch (e) { console.log(e.code, e.message); }`);
  await rm(`${db}.lock`);
  assert.match(refused, /^unavailable .*locked/);
});

test("a path that cannot be a database file is a clear error", async () => {
  const { createMemory } = await import(entry);
  await assert.rejects(createMemory({ local: true, path: folder }), (e) => {
    assert.equal(e.code, "storage_error");
    assert.match(e.message, /EISDIR|directory/i);
    return true;
  });
});

test("the API vectors pass on a file database", async () => {
  const { createMemory } = await import(entry);
  const vectors = await loadVectors();
  const db = path.join(folder, "vectors.db");
  const steps = await runApiVectors(vectors, (projectId, options) => createMemory({ local: true, path: db, projectId, ...options }), "file");
  assert.ok(steps > 30, `only ${steps} steps`);
});
