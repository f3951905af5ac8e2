// The code-index benchmark in Node, on the npm package's wasm and its in-wasm SQLite:
// `node bench/index_wasm.mjs DIR [EDITS]` (after scripts/build-pkg.sh). Same phases as the
// native `index_bench` example: pure graph (codeGraph), full indexFiles, one changed file.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

import { loadEngram } from "../pkg/tests/load.mjs";

const exts = new Set([".ts", ".mts", ".cts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".py", ".pyi", ".rs", ".go"]);
const skip = new Set(["target", "node_modules", ".git", "vendor", "dist", "build"]);

async function collect(root, dir, out) {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!skip.has(e.name)) await collect(root, full, out);
    } else if (exts.has(path.extname(e.name))) {
      out.push({ path: path.relative(root, full).split(path.sep).join("/"), content: await readFile(full, "utf8") });
    }
  }
}

const [dir, editsArg] = process.argv.slice(2);
if (!dir) {
  console.error("usage: node bench/index_wasm.mjs DIR [EDITS]");
  process.exit(2);
}
const edits = Number(editsArg ?? 20);
const files = [];
await collect(dir, dir, files);
const lines = files.reduce((n, f) => n + f.content.split("\n").length - (f.content.endsWith("\n") ? 1 : 0), 0);
console.log(`${dir}: ${files.length} files, ${lines} lines`);
const engram = await loadEngram();
let t = performance.now();
const graph = engram.codeGraph(files);
const graphMs = performance.now() - t;
console.log(`pure (outline + graph, codeGraph): ${graphMs.toFixed(0)} ms (${Math.round((lines / graphMs) * 1e3)} LOC/s), ${graph.nodes.length} nodes, ${graph.edges.length} edges`);
const memory = await engram.createMemory({ local: true, projectId: "bench" });
t = performance.now();
const report = await memory.indexFiles(files, { complete: true });
const fullMs = performance.now() - t;
console.log(`full index: ${fullMs.toFixed(0)} ms = ${Math.round((lines / fullMs) * 1e3)} LOC/s (${report.closureRowsWritten} closure rows)`);
const step = Math.max(1, Math.floor(files.length / edits));
const times = [];
for (let i = 0; i < files.length && times.length < edits; i += step) {
  const one = { ...files[i], content: files[i].content + (files[i].path.endsWith(".py") ? "\n# engram bench edit\n" : "\n// engram bench edit\n") };
  t = performance.now();
  const r = await memory.indexFiles([one]);
  times.push(performance.now() - t);
  if (r.changed !== 1) throw new Error("edit not seen");
}
times.sort((a, b) => a - b);
console.log(`one changed file (body edit): median ${times[times.length >> 1].toFixed(2)} ms, max ${times[times.length - 1].toFixed(2)} ms over ${times.length} files`);
