// The package's entry in Node (and Electron's main process, and Next.js server code): the
// wasm-bindgen glue fetches the module beside it by URL, which Node's fetch cannot do for a
// file, so this entry reads the file itself and instantiates it on import. `init()` stays
// for code written for browsers: it resolves to the same instance. `loadEmbeddingModel`
// also takes `{ url }` (or nothing, for the cache alone), keeping the model's files in
// `cacheDir`: by default $ENGRAM_MODEL_DIR or ~/.cache/engram/models, where the engram CLI
// keeps them too. `createMemory({ local: true, path })` keeps the database in a file
// through `node:fs` (files.js).
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import initWeb, * as wasm from "./engram.js";
import { withFiles } from "./files.js";
import { modelLoader, once, PINNED_MODEL } from "./model.js";

export * from "./engram.js";
export { PINNED_MODEL } from "./model.js";

// Bundlers for Node (Next.js's Turbopack) emit the module as an asset from the `new URL`;
// the comment keeps their file tracing from copying it a second time from node_modules.
const ready = readFile(/* turbopackIgnore: true */ new URL("./engram_bg.wasm", import.meta.url)).then((bytes) =>
  initWeb({ module_or_path: bytes }),
);
await ready;

/** Handles on database files, closed when the process exits: a file in WAL mode holds its
 * lock file for as long as it is open, and closing checkpoints its log. */
const fileHandles = new Set();
process.once("exit", () => {
  for (const handle of fileHandles) {
    try {
      handle.deref()?.free();
    } catch {
      // Already freed by the application.
    }
  }
});

/** Opens with `open(options)`, the file calls added where `options` name a file. */
async function opened(options, open) {
  const prepared = withFiles(options);
  const memory = await open(prepared);
  if (prepared?.files) fileHandles.add(new WeakRef(memory));
  return memory;
}

/** Opens engram; `{ local: true, path }` keeps the database in that file (created with its
 * folder if absent), `{ local: true }` alone in memory. */
export function createMemory(options) {
  return opened(options, (prepared) => wasm.createMemory(prepared));
}

/** `createMemory` with an embedding model: searches are hybrid. */
export function createMemoryWithModel(options, model) {
  return opened(options, (prepared) => wasm.createMemoryWithModel(prepared, model));
}

/** Resolves when the module is ready; in Node it is ready once this package is imported. */
export default function init() {
  return ready;
}

/** The folder the model's files are cached in: `cacheDir`, else $ENGRAM_MODEL_DIR, else
 * ~/.cache/engram/models; each model in a folder named by its id. */
function modelCacheDir(options = {}) {
  // Joined as text: a `path.join` over a root only known at run time makes bundlers' file
  // tracing copy this whole package into a standalone build.
  const root = options.cacheDir ?? process.env.ENGRAM_MODEL_DIR ?? `${os.homedir()}/.cache/engram/models`;
  return `${root}/${PINNED_MODEL.id}`;
}

function folderCache(options) {
  const dir = modelCacheDir(options);
  return {
    async get(file) {
      try {
        return new Uint8Array(await readFile(path.join(dir, file.name)));
      } catch {
        return null;
      }
    },
    async put(file, bytes) {
      await mkdir(dir, { recursive: true });
      // Written beside and renamed, so a reader never sees half a file.
      const partial = path.join(dir, `${file.name}.${process.pid}.partial`);
      await writeFile(partial, bytes);
      await rename(partial, path.join(dir, file.name));
    },
  };
}

/** The embedder module, read from the package and instantiated on first use. */
const embedder = once(async () => {
  const glue = await import("./engram_embed.js");
  const url = new URL("./engram_embed_bg.wasm", import.meta.url);
  await glue.default({ module_or_path: await readFile(/* turbopackIgnore: true */ url) });
  return glue;
});

/** Loads the model from its bytes, or (`{ url, cacheDir }`) from the cache folder, fetching
 * and checking what is missing first. */
export const loadEmbeddingModel = modelLoader(async (options) => folderCache(options), embedder);

/** Loads the static edge model from its table and tokenizer bytes. */
export async function loadStaticEmbeddingModel(table, tokenizer, modelId) {
  return (await embedder()).loadStaticEmbeddingModel(table, tokenizer, modelId);
}
