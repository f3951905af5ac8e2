// Replays tests/vectors/api.json against the JavaScript API, exactly as the Rust runner in
// crates/engram-conformance does. Shared by the Node, workerd, Chromium and wasmtime tests.

/**
 * @param {object} vectors the parsed api.json
 * @param {(projectId: string, options?: object) => Promise<{remember: Function, search: Function, get: Function, forget: Function}>} open
 *   opens the case's project; `open` steps call it again with the step's options, which
 *   the host lays over its own (`null` for a host whose options are not the caller's: the
 *   Worker's come from its settings, so its `open` steps are not run and not counted)
 * @param {string} prefix
 * @returns {Promise<number>} steps checked
 */
export async function runApiVectors(vectors, open, prefix, { openSteps = true } = {}) {
  let steps = 0;
  for (const [i, testCase] of vectors.cases.entries()) {
    const projectId = `${prefix}-${i}`;
    const engram = await open(projectId);
    const ids = new Map();
    for (const [j, step] of testCase.steps.entries()) {
      const where = `${testCase.name} / step ${j} (${step.op})`;
      if (step.op === "open" && !openSteps) continue;
      try {
        if (step.op === "open") await openStep(() => open(projectId, step.options), step);
        else await runStep(engram, step, ids, projectId);
      } catch (e) {
        throw new Error(`${where}: ${e.message}`);
      }
      steps++;
    }
  }
  return steps;
}

function check(condition, detail) {
  if (!condition) throw new Error(typeof detail === "function" ? detail() : detail);
}

function expectError(error, want) {
  check(error && error.code === want.code, () => `error code ${error?.code} (${error?.message}), expected ${want.code}`);
  if (want.field !== undefined) {
    const first = error.violations?.[0]?.field;
    check(first === want.field, () => `error field ${first} (${error.message}), expected ${want.field}`);
  }
}

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

async function attempt(promiseFactory) {
  try {
    return { value: await promiseFactory() };
  } catch (error) {
    return { error };
  }
}

// An `open` step: the options open, or fail as the step expects.
async function openStep(opening, step) {
  const result = await attempt(opening);
  if (step.expectError) {
    check(result.error, "expected an error, opened");
    expectError(result.error, step.expectError);
    return;
  }
  check(!result.error, () => `unexpected error: ${result.error?.message}`);
}

async function runStep(engram, step, ids, projectId) {
  const expect = step.expect ?? {};
  const named = (name) => ids.get(name);
  switch (step.op) {
    case "remember":
    case "rememberRaw": {
      let input = step.input;
      if (step.op === "rememberRaw") {
        // Malformed JSON cannot be built as an object in JS: hand the string over as is.
        input = step.input;
      } else if (step.contentRepeat) {
        input = { ...input, content: step.contentRepeat.text.repeat(step.contentRepeat.times) };
      }
      const result = await attempt(() => engram.remember(input));
      if (step.expectError) {
        check(result.error, () => `expected an error, stored ${result.value?.id}`);
        expectError(result.error, step.expectError);
        return;
      }
      check(!result.error, () => `unexpected error: ${result.error?.message}`);
      if (step.as) ids.set(step.as, result.value.id);
      if (expect.redacted) check(same(result.value.redacted, expect.redacted), () => `redacted ${JSON.stringify(result.value.redacted)}`);
      if (expect.replayOf) {
        check(result.value.replayed === true && result.value.id === ids.get(expect.replayOf), () => `expected a replay of ${expect.replayOf}, got ${JSON.stringify(result.value)}`);
      } else {
        check(!result.value.replayed, () => `a new write was answered as a replay: ${JSON.stringify(result.value)}`);
      }
      checkPlacement(result.value, expect, named);
      return;
    }
    case "search": {
      const result = await attempt(() => engram.search(step.input));
      if (step.expectError) {
        check(result.error, () => `expected an error, got ${result.value?.hits?.length} hits`);
        expectError(result.error, step.expectError);
        return;
      }
      check(!result.error, () => `unexpected error: ${result.error?.message}`);
      checkSearch(result.value, expect, named);
      return;
    }
    case "searchMany": {
      const result = await attempt(() => engram.searchMany(step.input));
      if (step.expectError) {
        check(result.error, () => `expected an error, got ${result.value?.length} answers`);
        expectError(result.error, step.expectError);
        return;
      }
      check(!result.error, () => `unexpected error: ${result.error?.message}`);
      const each = expect.each ?? [];
      check(result.value.length === each.length, () => `${result.value.length} answers, expected ${each.length}`);
      each.forEach((want, i) => {
        try {
          checkSearch(result.value[i], want, named);
        } catch (e) {
          throw new Error(`answer ${i}: ${e.message}`);
        }
      });
      return;
    }
    case "get": {
      const id = step.literalId ?? named(step.id);
      const memory = await engram.get(id);
      if (expect.null) return check(memory === null, "expected no memory");
      check(memory, "memory not found");
      checkAnswerExcludes(memory, expect);
      if (expect.content !== undefined) check(memory.content === expect.content, () => `content ${memory.content}`);
      if (expect.contentContains) check(memory.content.includes(expect.contentContains), () => `content lacks ${expect.contentContains}`);
      if (expect.contentExcludes) check(!memory.content.includes(expect.contentExcludes), "content has the secret");
      for (const [key, want] of Object.entries(expect.fields ?? {})) {
        check(same(memory[key], want), () => `field ${key}: ${JSON.stringify(memory[key])} expected ${JSON.stringify(want)}`);
      }
      return;
    }
    case "forget": {
      const id = step.literalId ?? named(step.id);
      const forgotten = await engram.forget(id);
      check(forgotten === (expect.forgotten ?? true), () => `forgot ${forgotten}`);
      return;
    }
    case "agent":
      return runAgentStep(engram, step, ids);
    case "lifecycle":
      return runLifecycleStep(engram, step, named);
    case "person":
      return runPersonStep(engram, step, ids, named, projectId);
    default:
      throw new Error(`unknown op ${step.op}`);
  }
}

// One search answer against a step's expectations: `count`, `first`, `contains`,
// `excludes`, `order` (memory names), `response` fields and `packedAtMost`.
// `answerExcludes`: strings (secrets) that must appear nowhere in the answer.
function checkAnswerExcludes(value, expect) {
  const text = JSON.stringify(value);
  for (const part of expect.answerExcludes ?? []) check(!text.includes(part), () => `the answer holds ${part}`);
}

function checkSearch(value, expect, named) {
  checkAnswerExcludes(value, expect);
  const got = value.hits.map((h) => h.memory.id);
  if (expect.count !== undefined) check(got.length === expect.count, () => `${got.length} hits, expected ${expect.count}`);
  if (expect.first !== undefined) check(got[0] === named(expect.first), () => `first hit ${got[0]}, expected ${expect.first}`);
  for (const name of expect.contains ?? []) check(got.includes(named(name)), () => `${name} missing`);
  for (const name of expect.excludes ?? []) check(!got.includes(named(name)), () => `${name} should be absent`);
  if (expect.order) {
    const want = expect.order.map(named);
    check(JSON.stringify(got) === JSON.stringify(want), () => `order ${got}, expected ${expect.order}`);
  }
  for (const [key, want] of Object.entries(expect.response ?? {})) {
    check(JSON.stringify(value[key]) === JSON.stringify(want), () => `response ${key}: ${JSON.stringify(value[key])}, expected ${JSON.stringify(want)}`);
  }
  if (expect.packedAtMost !== undefined) {
    const tokens = value.packed?.tokens;
    check(tokens !== undefined && tokens <= expect.packedAtMost, () => `packed tokens ${tokens}, expected at most ${expect.packedAtMost}`);
  }
}

// The agent loop: `call` names the method; `shownIds` in the input hold memory names.
// A write's consolidation: `mergedInto` names the memory it merged into, `supersedes` the
// one it replaced; without them it must have done neither.
function checkPlacement(stored, expect, named) {
  const text = () => JSON.stringify(stored);
  if (expect.mergedInto) check(stored.merged === true && stored.id === named(expect.mergedInto), () => `expected a merge into ${expect.mergedInto}, got ${text()}`);
  else check(!stored.merged, () => `an unexpected merge: ${text()}`);
  if (expect.supersedes) check(stored.superseded === named(expect.supersedes), () => `expected it to supersede ${expect.supersedes}, got ${text()}`);
  else check(stored.superseded === undefined, () => `an unexpected supersession: ${text()}`);
}

// Runs the step's call out of `calls`: `{ answered: true, answer }`, or `{ answered: false }`
// once the error the step expects was checked.
async function answerOf(calls, step, kind) {
  check(calls[step.call], () => `unknown ${kind} call ${step.call}`);
  const result = await attempt(calls[step.call]);
  if (step.expectError) {
    check(result.error, () => `expected an error, got ${JSON.stringify(result.value)}`);
    expectError(result.error, step.expectError);
    return { answered: false };
  }
  check(!result.error, () => `unexpected error: ${result.error?.message}`);
  return { answered: true, answer: result.value };
}

// The lifecycle calls: `getAny`, `history` and `restore` of a memory, `prune` with a request,
// `flushUses`; `fields` compared as JSON, `named` fields hold a named memory's id,
// `actions` the history's actions in order.
async function runLifecycleStep(engram, step, named) {
  const id = step.literalId ?? named(step.id);
  const calls = {
    getAny: () => engram.getAny(id),
    history: () => engram.history(id),
    restore: () => engram.restore(id),
    prune: () => engram.prune(step.input),
    flushUses: () => engram.flushUses(),
  };
  const { answered, answer } = await answerOf(calls, step, "lifecycle");
  if (answered) checkCall(answer, step.expect ?? {}, named);
}

// A person's operations: `list` and `count` (`input` the request or filter), `update`
// (`input`, `confirm`), `confirm`, `flagWrong` (`reason`), `pin` (`pinned`), `teach` (`as`
// names the memory), `purge`, `importInstructions` (a large file's text as `textRepeat`),
// `exportMarkdown`, `health`, `trustLevel`, `setTrustLevel` (`level`), `sessionReview`
// (`session`), `recentSessions` (`limit`), `moduleMap`, `previewTeach`, `origins`, `reset` (`confirm`, the case's project id when absent). With `short: true` the id is its first 8 characters.
async function runPersonStep(engram, step, ids, named, projectId) {
  const full = step.literalId ?? named(step.id);
  const id = step.short ? full?.slice(0, 8) : full;
  const calls = {
    list: () => engram.list(step.input),
    count: () => engram.count(step.input),
    update: () => engram.update(id, step.input, step.confirm === true),
    confirm: () => engram.confirm(id),
    flagWrong: () => engram.flagWrong(id, step.reason),
    pin: () => engram.pin(id, step.pinned !== false),
    teach: () => engram.teach(step.input),
    purge: async () => (await engram.purge(id)) ?? null,
    importInstructions: () => engram.importInstructions(importInput(step.input)),
    exportMarkdown: () => engram.exportMarkdown(),
    health: () => engram.health(),
    trustLevel: () => engram.trustLevel(),
    setTrustLevel: () => engram.setTrustLevel(step.level),
    sessionReview: () => engram.sessionReview(step.session),
    recentSessions: () => engram.recentSessions(step.limit),
    moduleMap: () => engram.moduleMap(step.input),
    // Synchronous in the package: a throw becomes the promise's rejection here.
    previewTeach: async () => engram.previewTeach(step.input),
    origins: () => engram.origins(id),
    reset: () => engram.reset(step.confirm ?? projectId),
  };
  const { answered, answer } = await answerOf(calls, step, "person");
  if (!answered) return;
  if (step.as) ids.set(step.as, answer.id);
  checkCall(answer, step.expect ?? {}, named);
}

// An import request with each file's `textRepeat` (`{ text, times }`) spelled out as `text`.
function importInput(input) {
  const files = Array.isArray(input?.files)
    ? input.files.map(({ textRepeat, ...file }) => (textRepeat ? { ...file, text: textRepeat.text.repeat(textRepeat.times) } : file))
    : input?.files;
  return { ...input, files };
}

// A lifecycle or person call's answer: `null`, `value` (the whole answer), `fields`
// (compared as JSON; keys may be dotted paths, `flags.pinned`, `files.0.rules`), `named`
// (fields holding a named memory's id), `actions` (a history's, in order), `memories` (a
// page's, by name, in order), `includes` (text the answer holds).
function checkCall(answer, expect, named) {
  if (expect.null) return check(answer === null || answer === undefined, () => `expected null, got ${JSON.stringify(answer)}`);
  for (const [key, want] of Object.entries(expect.fields ?? {})) {
    const got = key.split(".").reduce((value, part) => value?.[part], answer);
    check(same(got, want), () => `field ${key}: ${JSON.stringify(got)} expected ${JSON.stringify(want)}`);
  }
  for (const [key, name] of Object.entries(expect.named ?? {})) {
    check(answer[key] === named(name), () => `field ${key}: ${answer[key]}, expected the id of ${name}`);
  }
  if (expect.actions) {
    const got = answer.map((entry) => entry.action);
    check(same(got, expect.actions), () => `actions ${JSON.stringify(got)}, expected ${JSON.stringify(expect.actions)}`);
  }
  if (expect.value !== undefined) check(same(answer, expect.value), () => `answered ${JSON.stringify(answer)}, expected ${JSON.stringify(expect.value)}`);
  if (expect.memories) {
    const got = answer.memories.map((m) => m.id);
    check(same(got, expect.memories.map(named)), () => `memories ${JSON.stringify(got)}, expected ${JSON.stringify(expect.memories)}`);
  }
  for (const part of expect.includes ?? []) {
    const text = typeof answer === "string" ? answer : JSON.stringify(answer);
    check(text.includes(part), () => `the answer lacks ${part}`);
  }
}

async function runAgentStep(engram, step, ids) {
  const input = structuredClone(step.input);
  if (Array.isArray(input.shownIds)) input.shownIds = input.shownIds.map((name) => ids.get(name) ?? name);
  const calls = {
    callTool: () => engram.callTool(input.name, input.arguments),
    augment: () => engram.augmentToolResult(input),
    step: () => engram.stepInjection(input),
    sessionContext: () => engram.sessionContext(input),
    getPrompt: () => engram.getPrompt(input.name, input.arguments),
    calibrate: () => engram.recordCalibration(input),
    stepLimit: () => engram.stepLimit(input),
    plannerContext: () => engram.plannerContext(input),
  };
  const { answered, answer } = await answerOf(calls, step, "agent");
  if (!answered) return;
  if (step.as) ids.set(step.as, answer.data?.id ?? answer.memoryId);
  const expect = step.expect ?? {};
  if (expect.null) return check(answer === null, () => `expected null, got ${JSON.stringify(answer)}`);
  check(answer !== null, "expected an answer, got null");
  const named = (name) => ids.get(name);
  const shown = answer.memoryIds ?? [];
  for (const [key, want] of Object.entries(expect.fields ?? {})) {
    check(same(answer[key], want), () => `field ${key}: ${JSON.stringify(answer[key])} expected ${JSON.stringify(want)}`);
  }
  if (expect.kind !== undefined) check(answer.kind === expect.kind, () => `kind ${answer.kind}, expected ${expect.kind}`);
  if (expect.memoryIds) check(same(shown, expect.memoryIds.map(named)), () => `memoryIds ${shown}, expected ${expect.memoryIds}`);
  for (const name of expect.includes ?? []) check(shown.includes(named(name)), () => `${name} missing from ${shown}`);
  for (const name of expect.excludes ?? []) check(!shown.includes(named(name)), () => `${name} should not be in ${shown}`);
  for (const part of expect.textContains ?? []) check(answer.text.includes(part), () => `text ${JSON.stringify(answer.text)} lacks ${JSON.stringify(part)}`);
  if (expect.withinBudget) check(answer.tokens <= answer.budget, () => `tokens ${answer.tokens} over budget ${answer.budget}`);
}
