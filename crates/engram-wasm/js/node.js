// The package's entry in Node (and Electron's main process, and Next.js server code): the
// wasm-bindgen glue fetches the module beside it by URL, which Node's fetch cannot do for a
// file, so this entry reads the file itself and instantiates it on import. `init()` stays
// for code written for browsers: it resolves to the same instance.
import { readFile } from "node:fs/promises";
import initWeb from "./engram.js";

export * from "./engram.js";

const ready = readFile(new URL("./engram_bg.wasm", import.meta.url)).then((bytes) =>
  initWeb({ module_or_path: bytes }),
);
await ready;

/** Resolves when the module is ready; in Node it is ready once this package is imported. */
export default function init() {
  return ready;
}
