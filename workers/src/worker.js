// engram as a Cloudflare Worker: POST /v1/remember, /v1/search, /v1/search-many, /v1/get,
// /v1/forget, /v1/embed-pending, /v1/impact, /v1/dependencies and /v1/neighbours (the code
// graph another host indexed into the same database: the Worker parses no source), and the
// agent loop's /v1/tools, /v1/tool, /v1/session-context, /v1/prompts, /v1/prompt,
// /v1/augment, /v1/step, /v1/calibration, /v1/step-limit and /v1/plan;
// and the same tools plus the session_context prompt over MCP's streamable HTTP at /mcp
// (src/mcp.js). This file is the Worker less its embedding model: each entry (src/index.js,
// src/minilm.js) passes `workerFor` the model it embeds with.
//
// The tenant is the request's bearer token: with the TENANTS secret, the Worker resolves it
// to a database, its auth token and the projects it may use (src/tenants.js); without, it is
// forwarded as the auth token of the libSQL database at env.LIBSQL_URL. The project is the
// `x-engram-project` header (default "default", or the tenant's first). Errors are JSON
// `{ error: { code, message, violations } }` with a status that matches the code.
//
// Options: ENGRAM_OPTIONS holds any of the open options every host takes, as JSON.
//
// Vector index: with an embedding model and VECTOR_INDEX = "on", dense searches use
// libSQL's vector index (DiskANN) on the server instead of scanning every vector: an isolate
// serves requests, so it cannot keep vectors in memory. The first open of each handle creates
// the index if absent (one more round trip per isolate, not per request).
//
// Rerank: with RERANK_PROVIDER ("cohere" — also jina, voyage, vllm, infinity — or "tei")
// and RERANK_URL (plus RERANK_MODEL, and the secret RERANK_API_KEY where the service needs
// them), each search's best 20 are reordered by that service, called through fetch.
import {
  initSync, createMemory, createMemoryWithModel, toolDefinitions, promptDefinitions, httpStatus, mcpMessage,
} from "../build/engram/engram.js";
import wasmModule from "../build/engram/engram_bg.wasm";
import { resolveTenant } from "./tenants.js";
import { serveMcp } from "./mcp.js";

initSync({ module: wasmModule });

function rerankService(env) {
  if (!env.RERANK_PROVIDER) return undefined;
  return { provider: env.RERANK_PROVIDER, url: env.RERANK_URL, model: env.RERANK_MODEL, apiKey: env.RERANK_API_KEY };
}

const MAX_BODY_BYTES = 256 * 1024;
const MAX_CACHED = 32;
// Opened handles per (database, token, project), so a warm isolate pays no migration check
// and a search costs exactly one round trip to the database.
const handles = new Map();

function json(body, status = 200) {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

// The status for each code is the core's (httpStatus), as in every engram server.
function failure(code, message, violations = []) {
  return json({ error: { code, message, violations } }, httpStatus(code));
}

// The open options every host takes, from the Worker's settings: ENGRAM_OPTIONS (a JSON
// object of them, e.g. `{"residentKeywords": false, "vectorIndexMinMemories": 1000}`) with
// the database, tenant and project of the request and the settings below laid over it.
// The core validates them; a bad setting fails each request with the field named.
function openOptions(env, { url, authToken, projectId }, embeddings) {
  let settings = {};
  if (env.ENGRAM_OPTIONS) {
    try {
      settings = JSON.parse(env.ENGRAM_OPTIONS);
    } catch (e) {
      throw Object.assign(new Error(`ENGRAM_OPTIONS is not JSON: ${e.message}`), { code: "invalid_input", violations: [{ field: "ENGRAM_OPTIONS", problem: "malformed JSON" }] });
    }
  }
  const options = { ...settings, url, authToken, projectId };
  const reranker = rerankService(env);
  if (reranker) options.reranker = reranker;
  if (embeddings && env.VECTOR_INDEX === "on") options.vectorIndex = true;
  return options;
}

async function handleFor(env, tenant, embeddingModel) {
  const key = JSON.stringify([tenant.url, tenant.authToken, tenant.projectId]);
  let handle = handles.get(key);
  if (!handle) {
    handle = (async () => {
      const embedder = await embeddingModel(env);
      const options = openOptions(env, tenant, embedder != null);
      return embedder ? createMemoryWithModel(options, embedder) : createMemory(options);
    })();
    handles.set(key, handle);
    if (handles.size > MAX_CACHED) handles.delete(handles.keys().next().value);
    // A failed open must not be cached.
    handle.catch(() => handles.delete(key));
  }
  return handle;
}

async function readJson(request) {
  const text = await request.text();
  if (text.length > MAX_BODY_BYTES) {
    throw Object.assign(new Error(`body is larger than ${MAX_BODY_BYTES} bytes`), { code: "invalid_input", violations: [{ field: "(root)", problem: "too large" }] });
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw Object.assign(new Error(`malformed JSON: ${e.message}`), { code: "invalid_input", violations: [{ field: "(root)", problem: "malformed JSON" }] });
  }
}

const routes = {
  "/v1/remember": async (engram, body) => json(await engram.remember(body), 201),
  "/v1/search": async (engram, body) => json(await engram.search(body)),
  "/v1/search-many": async (engram, body) => json(await engram.searchMany(body)),
  "/v1/get": async (engram, body) => {
    const memory = await engram.get(String(body?.id ?? ""));
    return memory ? json(memory) : failure("not_found", "no memory with that id");
  },
  "/v1/forget": async (engram, body) => json({ forgotten: await engram.forget(String(body?.id ?? "")) }),
  // The lifecycle: a memory whatever its state, its history, pruning, and the uses this
  // isolate's searches counted (they travel with the next write; this writes them now).
  "/v1/get-any": async (engram, body) => {
    const memory = await engram.getAny(String(body?.id ?? ""));
    return memory ? json(memory) : failure("not_found", "no memory with that id");
  },
  "/v1/history": async (engram, body) => json(await engram.history(String(body?.id ?? ""))),
  "/v1/restore": async (engram, body) => json(await engram.restore(String(body?.id ?? ""))),
  // A person's operations: browse, count, edit and judge, teach, import instruction files,
  // export and load, health, the trust level, the session review.
  "/v1/list": async (engram, body) => json(await engram.list(body ?? {})),
  "/v1/count": async (engram, body) => json({ count: await engram.count(body ?? {}) }),
  "/v1/update": async (engram, body) => json(await engram.update(String(body?.id ?? ""), body?.update ?? {}, body?.confirm === true)),
  "/v1/confirm": async (engram, body) => json(await engram.confirm(String(body?.id ?? ""))),
  "/v1/flag": async (engram, body) => json(await engram.flagWrong(String(body?.id ?? ""), body?.reason == null ? undefined : String(body.reason))),
  "/v1/pin": async (engram, body) => json(await engram.pin(String(body?.id ?? ""), body?.pinned !== false)),
  "/v1/teach": async (engram, body) => json(await engram.teach(body ?? {}), 201),
  "/v1/purge": async (engram, body) => {
    const id = String(body?.id ?? "");
    await engram.purge(id);
    return json({ purged: id });
  },
  "/v1/import": async (engram, body) => json(await engram.importInstructions(body ?? {})),
  "/v1/export": async (engram) => json(await engram.exportJson()),
  "/v1/load-export": async (engram, body) => json(await engram.loadExport(body ?? {})),
  "/v1/export-markdown": async (engram) => json({ markdown: await engram.exportMarkdown() }),
  "/v1/health": async (engram) => json(await engram.health()),
  // Every memory of the project deleted for good: `{ confirm: "<the project id>" }`.
  "/v1/reset": async (engram, body) => json({ deleted: await engram.reset(String(body?.confirm ?? "")) }),
  // The trust level: read it (no body, or no `level`), or set it with `{ level: 1..4 }`.
  "/v1/trust": async (engram, body) => json(body?.level === undefined ? await engram.trustLevel() : await engram.setTrustLevel(body.level)),
  // A session's review (the last finalized one without `sessionId`); null when none.
  "/v1/review": async (engram, body) => json(await engram.sessionReview(body?.sessionId == null ? undefined : String(body.sessionId))),
  "/v1/sessions": async (engram, body) => json(await engram.recentSessions(body?.limit ?? undefined)),
  "/v1/map": async (engram, body) => json(await engram.moduleMap(body ?? {})),
  "/v1/teach-preview": async (engram, body) => json(engram.previewTeach(body)),
  "/v1/origins": async (engram, body) => json(await engram.origins(String(body?.id ?? ""))),
  "/v1/prune": async (engram, body) => json(await engram.prune(body ?? {})),
  "/v1/flush-uses": async (engram) => json(await engram.flushUses()),
  "/v1/embed-pending": async (engram, body) => json(await engram.embedPending(Number(body?.batch ?? 64))),
  // The code graph another host indexed: what a change impacts, what a file depends on,
  // the files one edge away. The closure stores three hops, so a depth is 1, 2 or 3.
  "/v1/impact": async (engram, body) => withDepth(body, (depth) => engram.analyzeImpact(String(body?.target ?? ""), depth)),
  "/v1/dependencies": async (engram, body) => withDepth(body, (depth) => engram.dependencies(String(body?.file ?? ""), depth)),
  "/v1/neighbours": async (engram, body) => {
    const files = body?.files;
    if (!Array.isArray(files) || !files.every((f) => typeof f === "string")) {
      return failure("invalid_input", "files must be an array of paths", [{ field: "files", problem: "must be an array of strings" }]);
    }
    return json(await engram.neighbours(files));
  },
  // The agent loop: engram's tools for a model, the session start's context,
  // memories for a file's tool result, the step-injection decider (an Injection or null).
  "/v1/tools": async (_engram, body) => json(toolDefinitions(body?.format)),
  "/v1/tool": async (engram, body) => json(await engram.callTool(String(body?.name ?? ""), body?.arguments ?? {})),
  "/v1/session-context": async (engram, body) => json(await engram.sessionContext(body ?? {})),
  // The session_context prompt as MCP's prompts/get runs it: `{ name, arguments }`.
  "/v1/prompts": async () => json(promptDefinitions()),
  "/v1/prompt": async (engram, body) => json(await engram.getPrompt(String(body?.name ?? ""), body?.arguments ?? {})),
  "/v1/augment": async (engram, body) => json(await engram.augmentToolResult(body)),
  "/v1/step": async (engram, body) => json(await engram.stepInjection(body)),
  // Planning: a finished work unit's steps, the step limit they imply, the planner's context.
  "/v1/calibration": async (engram, body) => json(await engram.recordCalibration(body)),
  "/v1/step-limit": async (engram, body) => json(await engram.stepLimit(body)),
  "/v1/plan": async (engram, body) => json(await engram.plannerContext(body)),
};

// Answers `ask(depth)` when the body's `maxDepth` is absent or 1 to 3, else names it.
async function withDepth(body, ask) {
  const depth = body?.maxDepth;
  if (depth != null && !(Number.isInteger(depth) && depth >= 1 && depth <= 3)) {
    return failure("invalid_input", "maxDepth must be 1, 2 or 3 (the closure stores three hops)", [{ field: "maxDepth", problem: "must be 1, 2 or 3" }]);
  }
  return json(await ask(depth ?? undefined));
}

/**
 * The Worker's handlers, embedding with `embeddingModel(env)`: the model (an object with
 * `modelId`, `dims` and `embed`, or a promise of one) or null for keyword search only. A
 * model that fails to load fails the request with its typed error (`model_error`) and is
 * asked for again on the next one.
 */
export function workerFor(embeddingModel) {
  return { fetch: (request, env) => serve(request, env, embeddingModel) };
}

async function serve(request, env, embeddingModel) {
  const { pathname } = new URL(request.url);
  if (pathname === "/health") return json({ ok: true });
  const route = routes[pathname];
  if (!route && pathname !== "/mcp") return failure("not_found", `no route ${pathname}`);
  const auth = request.headers.get("authorization") ?? "";
  const token = auth.startsWith("Bearer ") ? auth.slice(7) : "";
  if (!token) return failure("unauthorized", "missing bearer token");
  let tenant;
  try {
    tenant = await resolveTenant(env, token, request.headers.get("x-engram-project") ?? undefined);
  } catch (e) {
    return failure(e.code ?? "unauthorized", e.message, e.violations ?? []);
  }
  if (pathname === "/mcp") {
    return serveMcp(request, () => handleFor(env, tenant, embeddingModel), { mcpMessage });
  }
  if (request.method !== "POST") return json({ error: { code: "method_not_allowed", message: "use POST" } }, 405);
  try {
    const body = await readJson(request);
    const engram = await handleFor(env, tenant, embeddingModel);
    return await route(engram, body);
  } catch (e) {
    if (e && typeof e.code === "string") return failure(e.code, e.message, e.violations ?? []);
    return failure("storage_error", String(e?.message ?? e));
  }
}
