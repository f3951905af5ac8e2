// Miniflare's options for one of this repository's Worker scripts, bundled as wrangler does
// (ES modules, wasm compiled, `.bin` imported as bytes, the compatibility date of
// wrangler.toml), less its bindings. Shared by the workerd tests and the cold-start bench.
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The options for `script`, a path from the repository's root. */
export function workerOptions(script) {
  return {
    modules: true,
    scriptPath: path.resolve(root, script),
    modulesRoot: root,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
      { type: "Data", include: ["**/*.bin"] },
    ],
    compatibilityDate: "2026-04-01",
    host: "127.0.0.1",
  };
}
