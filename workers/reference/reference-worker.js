// A test-only Worker that embeds texts inside workerd with both models, so the reference
// vectors can be checked there: the transformer from the npm package's embedder module (weights passed in as
// data-blob bindings, as a host would load them from R2 or static assets) and the static
// edge model exactly as the production Worker bundles it.
import * as full from "../../pkg/dist/engram_embed.js";
import fullWasm from "../../pkg/dist/engram_embed_bg.wasm";
import * as core from "../../pkg/dist/engram.js";
import coreWasm from "../../pkg/dist/engram_bg.wasm";
import * as edge from "../build/engram/engram.js";
import edgeWasm from "../build/engram/engram_bg.wasm";
import staticTable from "../build/model/static-minilm.bin";
import staticTokenizer from "../build/model/tokenizer.bin";

const fullMemory = full.initSync({ module: fullWasm }).memory;
const memories = { minilm: fullMemory, "minilm-compact": fullMemory, static: edge.initSync({ module: edgeWasm }).memory };

const models = {};
function model(name, env) {
  if (name === "minilm") {
    models.minilm ??= full.loadEmbeddingModel(new Uint8Array(env.MINILM_ONNX), new Uint8Array(env.MINILM_TOKENIZER));
  } else if (name === "minilm-compact") {
    models[name] ??= full.loadEmbeddingModel(new Uint8Array(env.MINILM_ONNX), new Uint8Array(env.MINILM_TOKENIZER), undefined, "compact");
  } else if (name === "static") {
    models.static ??= edge.loadStaticEmbeddingModel(new Uint8Array(staticTable), new Uint8Array(staticTokenizer));
  } else {
    throw new Error(`no model ${name}`);
  }
  return models[name];
}

// A dense search over the npm package's core module with the compact transformer: the
// memories are embedded and searched inside this isolate.
async function denseSearch(env, { memories: contents, query }) {
  core.initSync({ module: coreWasm });
  const m = model("minilm-compact", env);
  const memory = await core.createMemoryWithModel({ local: true }, m);
  const stored = [];
  for (const content of contents) stored.push(await memory.remember({ type: "gotcha", content }));
  const { hits } = await memory.search({ text: query, mode: "dense" });
  return Response.json({
    ids: stored.map((s) => s.id),
    models: stored.map((s) => s.embeddingModel),
    hits: hits.map((h) => ({ id: h.memory.id, rank: h.breakdown.dense?.rank })),
    linearMiB: memories["minilm-compact"].buffer.byteLength / 2 ** 20,
  });
}

export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === "/search") return denseSearch(env, await request.json());
    const { model: name, texts } = await request.json();
    const started = Date.now();
    const m = model(name, env);
    const loadedMiB = memories[name].buffer.byteLength / 2 ** 20;
    const vectors = texts.map((t) => Array.from(m.embed(t)));
    // The module's linear memory once the model is loaded and has embedded: what a
    // Worker's 128 MB would have to hold besides the module itself.
    const linearMiB = memories[name].buffer.byteLength / 2 ** 20;
    return Response.json({ modelId: m.modelId, dims: m.dims, vectors, ms: Date.now() - started, loadedMiB, linearMiB });
  },
};
