// The embedding model as an asset the package fetches, checks and caches itself:
// `loadEmbeddingModel({ url })` reads `model.onnx` and `tokenizer.json` from a folder the
// host serves, checks each against the sha256 this package pins, keeps them in a cache (a
// folder in Node, the Cache API in browsers and workers) and loads them. Bytes given
// directly load as they are. Models live in the package's second module (`engram_embed`),
// which each entry instantiates on first use: code that never loads a model never pays
// for tract.
import { httpStatus } from "./engram.js";
import { PINNED_MODEL, sha256Hex } from "./pinned-model.js";

export { PINNED_MODEL, sha256Hex };

/** An engram error (`code`, `status`, `violations`) as the wasm throws them. */
export function modelError(message, field = "model") {
  return Object.assign(new Error(message), {
    name: "EngramError",
    code: "model_error",
    status: httpStatus("model_error"),
    violations: [{ field, problem: message }],
  });
}

function isBytes(value) {
  return value instanceof ArrayBuffer || ArrayBuffer.isView(value);
}

/** `file`'s bytes from the cache when they are there and intact, else from `url`, checked,
 * then cached. */
async function obtain(file, url, cache, fetchFn) {
  const cached = cache ? await cache.get(file) : null;
  if (cached && (await sha256Hex(cached)) === file.sha256) return cached;
  if (!url) {
    throw modelError(
      `no ${file.name} in the model cache and no url to fetch it from: run \`npx engram-model fetch\`, ` +
        "or pass { url } where the host serves the model's files",
      "url",
    );
  }
  const base = url.endsWith("/") ? url : `${url}/`;
  let address;
  try {
    address = new URL(file.name, new URL(base, globalThis.location?.href)).href;
  } catch {
    throw modelError(`${url} is not a URL this host can resolve (give an absolute one)`, "url");
  }
  let response;
  try {
    response = await fetchFn(address);
  } catch (error) {
    throw modelError(`cannot fetch ${address}: ${error?.message ?? error}`, "url");
  }
  if (!response.ok) throw modelError(`cannot fetch ${address}: HTTP ${response.status}`, "url");
  const bytes = new Uint8Array(await response.arrayBuffer());
  const sum = await sha256Hex(bytes);
  if (sum !== file.sha256) {
    throw modelError(`${address} is not the pinned ${file.name}: sha256 ${sum}, expected ${file.sha256}`, "url");
  }
  if (cache) await cache.put(file, bytes);
  return bytes;
}

/**
 * Builds the entries' `loadEmbeddingModel`: with bytes it loads them as they are; with
 * `{ url, cache?, fetch?, footprint? }` it resolves to the pinned model fetched from `url`
 * (a folder holding `model.onnx` and `tokenizer.json`), each file checked against its sha256
 * and kept in `defaultCache(options)` (or none with `cache: false`). `footprint` is "fast"
 * (the default) or "compact" (int8 weights, one plan: for a Worker's 128 MB). `embedder()`
 * resolves to the instantiated embedder module.
 */
export function modelLoader(defaultCache, embedder) {
  const loadFromBytes = async (onnx, json, id, footprint) =>
    (await embedder()).loadEmbeddingModel(onnx, json, id, footprint);
  return function loadEmbeddingModel(source, tokenizer, modelId, footprint) {
    if (isBytes(source)) return loadFromBytes(source, tokenizer, modelId, footprint);
    return (async () => {
      const options = source ?? {};
      if (typeof options !== "object") {
        throw modelError("give the model's bytes, or { url } where its files are served", "source");
      }
      const cache = options.cache === false ? null : await defaultCache(options);
      const fetchFn = options.fetch ?? globalThis.fetch?.bind(globalThis);
      const [onnx, json] = await Promise.all([
        obtain(PINNED_MODEL.files.onnx, options.url, cache, fetchFn),
        obtain(PINNED_MODEL.files.tokenizer, options.url, cache, fetchFn),
      ]);
      return loadFromBytes(onnx, json, PINNED_MODEL.id, options.footprint);
    })();
  };
}

/** The Cache API's store for the model files (browsers, workers); null where there is none. */
export async function browserCache() {
  if (!globalThis.caches) return null;
  const store = await globalThis.caches.open("engram-models-v1");
  const key = (file) => `https://engram.invalid/models/${PINNED_MODEL.id}/${file.name}?sha256=${file.sha256}`;
  return {
    async get(file) {
      const hit = await store.match(key(file));
      return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
    },
    async put(file, bytes) {
      await store.put(key(file), new Response(bytes));
    },
  };
}

/** Memoizes `instantiate()` (the embedder module), trying again after a failure. */
export function once(instantiate) {
  let pending = null;
  return () => {
    pending ??= instantiate().catch((error) => {
      pending = null;
      throw error;
    });
    return pending;
  };
}
