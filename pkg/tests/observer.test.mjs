// The observer through the npm package: events in, hot files and promoted memories out,
// checkpoint and recovery, typed errors for bad input, and the parsers on real recordings.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { loadEngram } from "./load.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const evalDir = process.env.ENGRAM_EVAL_DIR ?? path.resolve(here, "../../../shared/eval");
let engram;

before(async () => {
  engram = await loadEngram();
});

function typical(memory, sessionId) {
  const session = memory.startSession({ sessionId, roots: ["/repo"] });
  const events = [
    ["Read", { file_path: "/repo/src/auth/session.py" }],
    ["Read", { file_path: "/repo/src/auth/tokens.py" }],
    ["Edit", { file_path: "/repo/src/auth/tokens.py", old_string: "60", new_string: "600" }],
  ];
  events.forEach(([tool, input], i) => {
    session.observe({ type: "tool_call", step: i + 1, id: `c${i}`, tool, input });
    session.observe({ type: "tool_result", step: i + 1, id: `c${i}`, output: "ok", isError: false });
  });
  return session;
}

test("co-access is promoted on the third session, statistics persist", async () => {
  const memory = await engram.createMemory({ local: true, projectId: "observer-node" });
  const reports = [];
  for (const id of ["a", "b", "c"]) {
    const session = typical(memory, id);
    assert.equal(session.hotFiles(1)[0].path, "src/auth/tokens.py");
    reports.push(await session.finalize("success"));
  }
  const coAccess = (r) => r.promoted.filter((m) => m.signal === "co_access");
  assert.equal(coAccess(reports[0]).length, 0);
  assert.equal(coAccess(reports[2]).length, 1);
  const promoted = coAccess(reports[2])[0];
  assert.deepEqual([...promoted.files].sort(), ["src/auth/session.py", "src/auth/tokens.py"]);
  assert.equal(promoted.type, "causal_dependency");
  const stored = await memory.get(promoted.id);
  assert.equal(stored.source, "observer_inferred");
  // Three sessions are evidence enough: it is injected without waiting for a review.
  assert.equal(stored.flags.needsReview, false);
  const again = await typical(memory, "a").finalize("success");
  assert.equal(again.alreadyFinalized, true);
});

test("a checkpointed session is recovered as cancelled", async () => {
  const memory = await engram.createMemory({ local: true, projectId: "observer-recover" });
  const session = typical(memory, "crashed");
  session.observe({ type: "reasoning", step: 4, text: "This approach won't work: `token_cache` is per process." });
  await session.checkpoint();
  const reports = await memory.recoverSessions();
  assert.equal(reports.length, 1);
  assert.equal(reports[0].outcome, "cancelled");
  assert.deepEqual(reports[0].promoted.map((m) => m.type), ["dead_end"]);
  assert.deepEqual(await memory.recoverSessions(), []);
});

test("bad events and options get typed errors", async () => {
  const memory = await engram.createMemory({ local: true, projectId: "observer-bad" });
  assert.throws(() => memory.startSession({}), (e) => e.code === "invalid_input");
  assert.throws(() => memory.startSession({ sessionId: "x", kind: "party" }), (e) => e.code === "invalid_input");
  const session = memory.startSession({ sessionId: "x" });
  assert.throws(() => session.observe({ type: "teleport", step: 1 }), (e) => e.code === "invalid_input");
  assert.throws(() => session.observe("not an object"), (e) => e.code === "invalid_input");
  session.observe(JSON.stringify({ type: "tool_call", step: 1, tool: "Read", input: { file_path: "src/a.py" } }));
  assert.equal(session.hotFiles(1)[0].path, "src/a.py");
  await assert.rejects(session.finalize("maybe"), (e) => e.code === "invalid_input");
  assert.throws(() => engram.parseTranscript("plain text"), (e) => e.code === "invalid_input");
});

test("parseTranscript reads a real trajectory and the session finds the gold file", async (t) => {
  const file = path.join(evalDir, "trajectories/psf__requests-1142/psf__requests-1142.traj.json");
  if (!existsSync(file)) {
    t.skip(`no evaluation data at ${evalDir}`);
    return;
  }
  const parsed = engram.parseTranscript(await readFile(file, "utf8"));
  assert.equal(parsed.format, "mini-swe-agent");
  assert.ok(parsed.events.length > 100);
  const memory = await engram.createMemory({ local: true, projectId: "observer-real" });
  const session = memory.startSession({ sessionId: parsed.id, roots: parsed.roots });
  assert.equal(session.observeJson(JSON.stringify(parsed.events)), parsed.events.length);
  assert.equal(session.hotFiles(1)[0].path, "requests/models.py");
  const report = await session.finalize("success");
  assert.equal(report.sessionId, "psf__requests-1142");
});

test("parallel sessions merge with a quorum; triggers are reported", async () => {
  const memory = await engram.createMemory({ local: true, projectId: "observer-merge" });
  const a = typical(memory, "agent-a");
  const b = typical(memory, "agent-b");
  for (const [i, s] of [a, b].entries()) {
    for (let step = 10; step < 13; step++) {
      s.observe({ type: "tool_call", step, id: `g${i}${step}`, tool: "Grep", input: { pattern: "def refresh" } });
    }
  }
  assert.deepEqual(a.triggers().map((t) => t.signal), ["repeated_grep"]);
  const merged = engram.ObservedSession.merge("merged", [a, b]);
  const report = await merged.finalize("success");
  // Two agents agreeing pass the three-session threshold on the first session.
  assert.ok(report.promoted.some((m) => m.signal === "co_access"), JSON.stringify(report.discarded));
  // Parallel edits are counted, never written as a memory (a template with no content).
  assert.ok(report.discarded.some((d) => d.class === "parallel_conflict" && d.reason.startsWith("retired")));
  assert.deepEqual(report.triggers.map((t) => t.signal), ["repeated_grep"]);
});
