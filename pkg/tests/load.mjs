// Loads the wasm-bindgen build (target web, scripts/build-pkg.sh) in Node.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const distDir = path.resolve(here, "../dist");

export async function loadEngram() {
  const engram = await import(path.join(distDir, "engram.js"));
  const bytes = await readFile(path.join(distDir, "engram_bg.wasm"));
  engram.initSync({ module: bytes });
  return engram;
}

/** The embedder module (the models), instantiated from its file as the Node entry does. */
export async function loadEmbedder() {
  const embedder = await import(path.join(distDir, "engram_embed.js"));
  embedder.initSync({ module: await readFile(path.join(distDir, "engram_embed_bg.wasm")) });
  return embedder;
}

export async function loadVectors() {
  return JSON.parse(await readFile(path.resolve(here, "../../tests/vectors/api.json"), "utf8"));
}
