// The Worker's default entry (wrangler.toml): keyword search, or with EMBEDDINGS = "static"
// the static edge model distilled from MiniLM (7.9 MB table, bundled;
// scripts/distill-static.py). It is off by default: on CoSQA its hybrid search scored below
// keyword search alone (README, "Edge model"). The transformer itself runs from
// src/minilm.js (wrangler.minilm.toml), which bundles tract instead of the table.
import { loadStaticEmbeddingModel } from "../build/engram/engram.js";
import staticTable from "../build/model/static-minilm.bin";
import staticTokenizer from "../build/model/tokenizer.bin";
import { workerFor } from "./worker.js";

// Loaded on first use, not at startup: global scope has a tight CPU budget.
let model;
function embeddingModel(env) {
  if (env.EMBEDDINGS !== "static") return null;
  model ??= loadStaticEmbeddingModel(new Uint8Array(staticTable), new Uint8Array(staticTokenizer));
  return model;
}

export default workerFor(embeddingModel);
