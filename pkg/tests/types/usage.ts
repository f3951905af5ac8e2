// Type-checked against the package's hand-written declarations (pkg/dist/engram.d.ts) by
// `npm run typecheck` in CI: each call here is one the README or the tests make, so a
// declaration that drifts from the code fails the build. Not run; only checked.
import init, {
  createMemory,
  createMemoryWithModel,
  httpStatus,
  loadEmbeddingModel,
  loadStaticEmbeddingModel,
  PINNED_MODEL,
  mcpMessage,
  toolDefinitions,
  promptDefinitions,
  type CreateMemoryOptions,
  type EngramError,
  type ErrorCode,
  type HealthReport,
  type ListPage,
  type ModuleMap,
  type SearchResponse,
  type SessionSummary,
} from "../../dist/engram.js";

export async function usage(): Promise<void> {
  await init();
  const options: CreateMemoryOptions = {
    url: "libsql://example.turso.io",
    authToken: "token",
    projectId: "web",
    residentKeywords: true,
    embedder: { provider: "ollama", url: "http://127.0.0.1:11434", model: "all-minilm", dims: 384 },
    reranker: async (query: string, documents: string[]) => documents.map((d) => d.length + query.length),
  };
  const memory = await createMemory(options);
  const local = await createMemory({ local: true, embedder: { provider: "none" }, vectorIndexMinMemories: 10 });
  const { id, redacted } = await memory.remember({ type: "gotcha", content: "run migrations first", tags: ["db"] });
  const found: SearchResponse = await local.search({ text: "migrations", limit: 5 });
  const first: string | undefined = found.hits[0]?.memory.id;
  const many: SearchResponse[] = await memory.searchMany(["database tests", { text: "migrations", types: ["dead_end"] }]);
  const stored = await memory.get(id);
  const forgotten: boolean = await memory.forget(first ?? id);
  const answer = mcpMessage('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
  const reply: string | null = answer.needsEngram ? await memory.answerMcp("{}") : answer.reply;
  const status: number = httpStatus("not_found");
  toolDefinitions("mcp");
  promptDefinitions();
  try {
    await createMemory({ local: true, residentVectors: true });
  } catch (e) {
    const error = e as EngramError;
    const code: ErrorCode = error.code;
    const field: string | undefined = error.violations[0]?.field;
    console.log(code, field, error.status);
  }
  const page: ListPage = await local.list({ filter: { types: ["gotcha"], needsReview: true }, sort: "updated", limit: 20 });
  const retired: number = await local.count({ status: "retired" });
  const edited = await local.update(id, { content: "run the migrations first", tags: ["db"] }, true);
  await local.confirm(id);
  await local.pin(id, true);
  await local.flagWrong(id, "wrong");
  await local.teach({ content: "use pnpm", type: "requirement" });
  const report = await local.importInstructions({ files: [{ path: "CLAUDE.md", text: "- use pnpm" }] });
  const exported = await local.exportJson();
  const loaded = await memory.loadExport(exported);
  const markdown: string = await local.exportMarkdown();
  const health: HealthReport = await local.health();
  await local.purge(id);
  const sessions: SessionSummary[] = await local.recentSessions(10);
  const map: ModuleMap = await local.moduleMap({ folder: "src/", limit: 40 });
  const preview: string = local.previewTeach({ content: "use pnpm" }).text;
  const origins = await local.origins(id);
  const fetched = await loadEmbeddingModel({ url: "/models/all-minilm-l6-v2-int8/" });
  const sized: number = fetched.dims + PINNED_MODEL.files.onnx.bytes;
  const withModel = await createMemoryWithModel({ local: true, path: ".data/engram.db" }, fetched);
  const edge = await loadStaticEmbeddingModel(new Uint8Array(), new Uint8Array());
  const vectors: Float32Array = edge.embedMany(["a", "b"]);
  const own = await createMemoryWithModel({ local: true }, { modelId: "mine", dims: 2, embedMany: (texts) => new Float32Array(texts.length * 2) });
  console.log(vectors.length, own, fetched.embed("x").length);
  console.log(sessions[0]?.learned, map.coAccess[0]?.weight, preview, origins[0]?.line, sized, withModel);
  console.log(page.nextCursor, retired, edited.flags.userVerified, report.files[0]?.rules.length, loaded.memories, markdown, health.score);
  console.log(redacted.length, many.length, stored?.content, forgotten, reply, status);
}
