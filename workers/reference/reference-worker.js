// A test-only Worker that embeds texts inside workerd with both models, so the reference
// vectors can be checked there: the transformer from the npm package's embedder module (weights passed in as
// data-blob bindings, as a host would load them from R2 or static assets) and the static
// edge model exactly as the production Worker bundles it.
import * as full from "../../pkg/dist/engram_embed.js";
import fullWasm from "../../pkg/dist/engram_embed_bg.wasm";
import * as edge from "../build/engram/engram.js";
import edgeWasm from "../build/engram/engram_bg.wasm";
import staticTable from "../build/model/static-minilm.bin";
import staticTokenizer from "../build/model/tokenizer.bin";

const memories = { minilm: full.initSync({ module: fullWasm }).memory, static: edge.initSync({ module: edgeWasm }).memory };

const models = {};
function model(name, env) {
  if (name === "minilm") {
    models.minilm ??= full.loadEmbeddingModel(new Uint8Array(env.MINILM_ONNX), new Uint8Array(env.MINILM_TOKENIZER));
  } else if (name === "static") {
    models.static ??= edge.loadStaticEmbeddingModel(new Uint8Array(staticTable), new Uint8Array(staticTokenizer));
  } else {
    throw new Error(`no model ${name}`);
  }
  return models[name];
}

export default {
  async fetch(request, env) {
    const { model: name, texts } = await request.json();
    const started = Date.now();
    const m = model(name, env);
    const vectors = texts.map((t) => Array.from(m.embed(t)));
    // The module's linear memory once the model is loaded and has embedded: what a
    // Worker's 128 MB would have to hold besides the module itself.
    const linearMiB = memories[name].buffer.byteLength / 2 ** 20;
    return Response.json({ modelId: m.modelId, dims: m.dims, vectors, ms: Date.now() - started, linearMiB });
  },
};
