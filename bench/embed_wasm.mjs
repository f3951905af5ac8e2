// The npm package's model in Node (wasm, simd128), same inputs as the tract bench.
import { readFile } from "node:fs/promises";
import path from "node:path";

import { loadEmbedder } from "../pkg/tests/load.mjs";

const dir = process.argv[2];
const engram = await loadEmbedder();
const [onnx, tokenizer] = await Promise.all([readFile(path.join(dir, "model.onnx")), readFile(path.join(dir, "tokenizer.json"))]);
const rssBefore = process.memoryUsage().rss;
let started = performance.now();
const model = engram.loadEmbeddingModel(onnx, tokenizer);
console.log(JSON.stringify({ runtime: "tract-wasm", loadMs: +(performance.now() - started).toFixed(1) }));
for (const tokens of [16, 64, 256]) {
  const text = Array(tokens - 2).fill("hello").join(" ");
  for (let i = 0; i < 3; i++) model.embed(text);
  const times = [];
  for (let i = 0; i < 20; i++) {
    started = performance.now();
    model.embed(text);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ runtime: "tract-wasm", tokens, medianMs: +times[10].toFixed(2) }));
}
console.log(JSON.stringify({ runtime: "tract-wasm", rssBeforeLoadMb: Math.round(rssBefore / 1e6), rssAfterMb: Math.round(process.memoryUsage().rss / 1e6) }));
