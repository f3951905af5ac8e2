// The package's entry everywhere but Node: the wasm-bindgen glue (call `init()` first), with
// `loadEmbeddingModel` also taking `{ url }` to fetch, check and cache the pinned model.
import { browserCache, modelLoader, once } from "./model.js";

export * from "./engram.js";
export { default } from "./engram.js";
export { PINNED_MODEL } from "./model.js";

/** The embedder module, fetched beside this file and instantiated on first use. */
const embedder = once(async () => {
  const glue = await import("./engram_embed.js");
  await glue.default();
  return glue;
});

/** Loads the model from its bytes, or (`{ url }`) fetches, checks and caches it first. */
export const loadEmbeddingModel = modelLoader(() => browserCache(), embedder);

/** Loads the static edge model from its table and tokenizer bytes. */
export async function loadStaticEmbeddingModel(table, tokenizer, modelId) {
  return (await embedder()).loadStaticEmbeddingModel(table, tokenizer, modelId);
}
