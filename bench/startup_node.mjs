// Start-up of the npm package in Node, one fresh process per measurement: importing the
// entry (reading, compiling and instantiating the core module), opening an in-memory engram,
// then loading the pinned model from the cache folder (the embedder module on first use).
// Prints one JSON line. Usage: node bench/startup_node.mjs [DIST_DIR] (default pkg/dist).
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(process.argv[2] ?? path.join(here, "../pkg/dist"));
const mb = (bytes) => +(bytes / 1e6).toFixed(0);

let started = performance.now();
const engram = await import(path.join(dist, "node.js"));
const importMs = performance.now() - started;
const memory = await engram.createMemory({ local: true });
await memory.remember({ type: "gotcha", content: "Run the migrations before the integration tests" });
const rssOpen = process.memoryUsage().rss;
started = performance.now();
const model = await engram.loadEmbeddingModel({});
const modelMs = performance.now() - started;
// The core module alone, compiled and instantiated again from its bytes (imports stubbed).
const bytes = readFileSync(path.join(dist, "engram_bg.wasm"));
started = performance.now();
const compiled = await WebAssembly.compile(bytes);
const stubs = {};
for (const { module, name } of WebAssembly.Module.imports(compiled)) (stubs[module] ??= {})[name] = () => {};
await WebAssembly.instantiate(compiled, stubs);
const coreInstantiateMs = performance.now() - started;
model.embed("flaky integration tests");
console.log(
  JSON.stringify({
    dist,
    importMs: +importMs.toFixed(0),
    coreInstantiateMs: +coreInstantiateMs.toFixed(0),
    rssAfterOpenMB: mb(rssOpen),
    modelLoadMs: +modelMs.toFixed(0),
    rssWithModelMB: mb(process.memoryUsage().rss),
    peakRssMB: mb(process.resourceUsage().maxRSS * 1024),
  }),
);
