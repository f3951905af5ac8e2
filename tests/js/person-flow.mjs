// One person's operations on an engram (the npm package's API, or a client of the Worker
// with the same methods), used by the package's and the Worker's tests: a real instruction
// file imported, browsed in pages, counted, taught, corrected, pinned, confirmed, flagged;
// health; Markdown; the trust level and what injection obeys it; the session review; an export loaded into `fresh` (an empty database); bad input as typed
// errors.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const evalDir = process.env.ENGRAM_EVAL_DIR ?? path.resolve(here, "../../../shared/eval");

async function rejectsWith(promise, code, field) {
  await assert.rejects(promise, (e) => {
    assert.equal(e.code, code, e.message);
    if (field) assert.equal(e.violations[0]?.field, field, e.message);
    return true;
  });
}

export async function personFlow(memory, fresh) {
  const file = "platformplatform__PlatformPlatform__.cursor__rules__backend__strongly-typed-ids.mdc";
  const text = await readFile(path.join(evalDir, "instructions", file), "utf8");
  const report = await memory.importInstructions({ files: [{ path: ".cursor/rules/backend/strongly-typed-ids.mdc", text }] });
  const rules = report.files[0].rules;
  assert.ok(rules.length >= 10, `only ${rules.length} rules`);
  assert.ok(rules.every((r) => r.outcome === "added" || r.outcome === "merged"));

  const live = await memory.count();
  assert.equal(live, new Set(rules.map((r) => r.id)).size);
  const first = await memory.list({ limit: 3, filter: { tags: ["imported"] } });
  assert.equal(first.memories.length, 3);
  const second = await memory.list({ limit: 3, filter: { tags: ["imported"] }, cursor: first.nextCursor });
  assert.ok(second.memories.every((m) => !first.memories.some((f) => f.id === m.id)), "pages do not overlap");

  const taught = await memory.teach({ content: "Money is stored in integer cents", type: "requirement" });
  const edited = await memory.update(taught.id.slice(0, 8), { content: "Money is stored in integer cents, never floats" }, true);
  assert.equal(edited.content, "Money is stored in integer cents, never floats");
  assert.equal(edited.flags.userVerified, true);
  assert.equal((await memory.pin(taught.id, true)).flags.pinned, true);
  const target = rules[0].id;
  assert.equal((await memory.confirm(target)).flags.userVerified, true);
  const flagged = await memory.flagWrong(rules[rules.length - 1].id, "not how we do it");
  assert.equal(flagged.deprecated, true);
  assert.equal(await memory.count({ status: "retired" }), 1);
  assert.equal(await memory.count({ pinned: true }), 1);

  const health = await memory.health();
  assert.ok(health.score >= 0 && health.score <= 100, JSON.stringify(health));
  assert.equal(health.live, await memory.count());
  assert.equal(health.byType.requirement >= 1, true, JSON.stringify(health.byType));
  assert.deepEqual(health.parts.slice(0, 3).map((p) => p.name), ["reviewBacklog", "stale", "contradicted"]);
  assert.match(await memory.exportMarkdown(), /never floats/);

  // The trust level: the default until set, and what the injection beside a file obeys.
  const standard = await memory.trustLevel();
  assert.deepEqual([standard.level, standard.set, standard.injectionThreshold], [2, false, 0.65]);
  const hunch = await memory.remember({ type: "gotcha", content: "Ledger rows lock while invoices reconcile", confidence: 0.6, relatedFiles: ["src/ledger.ts"] });
  const read = { tool: "Read", input: { file_path: "src/ledger.ts" }, shownIds: [] };
  assert.equal(await memory.augmentToolResult(read), null, "0.6 is under the standard level's 0.65");
  const autonomous = await memory.setTrustLevel(4);
  assert.deepEqual([autonomous.level, autonomous.name, autonomous.set], [4, "autonomous", true]);
  assert.deepEqual((await memory.augmentToolResult(read))?.memoryIds, [hunch.id]);
  assert.equal((await memory.trustLevel()).reviewDetail, "suppressed");
  await rejectsWith(memory.setTrustLevel(5), "invalid_input", "trustLevel");
  await rejectsWith(memory.setTrustLevel(2.5), "invalid_input", "trustLevel");
  assert.equal((await memory.setTrustLevel(2)).injectionThreshold, 0.65);
  await memory.forget(hunch.id);
  // Nothing finalized yet: no last session; a named one reviews empty.
  assert.equal(await memory.sessionReview(), null);
  const named = await memory.sessionReview("no-such-session");
  assert.deepEqual([named.sessionId, named.applied.length, named.needsReview.length, named.trust.level], ["no-such-session", 0, 0, 2]);

  const exported = await memory.exportJson();
  assert.equal(exported.format, "engram-export");
  const loaded = await fresh.loadExport(exported);
  assert.equal(loaded.memories, exported.memories.length);
  assert.equal(await fresh.count({ status: "all" }), await memory.count({ status: "all" }));
  assert.deepEqual((await fresh.exportJson()).memories, exported.memories, "the same memories, column by column");
  await rejectsWith(fresh.loadExport(exported), "invalid_input", "memories");

  await rejectsWith(memory.list({ limit: 0 }), "invalid_input", "limit");
  await rejectsWith(memory.count({ status: "gone" }), "invalid_input");
  await rejectsWith(memory.update("ffffffff-0000-4000-8000-000000000000", { content: "x" }), "not_found");
  await rejectsWith(memory.teach({ type: "gotcha" }), "invalid_input");
  await rejectsWith(memory.importInstructions({ files: [{ path: "src/main.rs", text: "fn main() {}" }] }), "invalid_input");
  await memory.purge(taught.id);
  assert.equal(await memory.count({ pinned: true, status: "all" }), 0);
}

