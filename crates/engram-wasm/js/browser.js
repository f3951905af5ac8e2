// The package's entry everywhere but Node: the wasm-bindgen glue (call `init()` first), with
// `loadEmbeddingModel` also taking `{ url }` to fetch, check and cache the pinned model.
import { browserCache, modelLoader } from "./model.js";

export * from "./engram.js";
export { default } from "./engram.js";
export { PINNED_MODEL } from "./model.js";

/** Loads the model from its bytes, or (`{ url }`) fetches, checks and caches it first. */
export const loadEmbeddingModel = modelLoader(() => browserCache());
