// Search latency in Node on the npm package's wasm and its in-wasm SQLite, keyword + graph
// paths (no model, so the query embedding is excluded by construction):
// `node bench/search_wasm.mjs [SIZES] [QUERIES]` (after scripts/build-pkg.sh; default
// `1000,10000 100`). The corpus and queries follow the native `search_bench` example's
// recipe (same generator, same seeds), so the two are comparable configuration by
// configuration. Prints p50 / p95 ms and the mean candidate and ranking stage times.
import { loadEngram } from "../pkg/tests/load.mjs";

class Rng {
  constructor(seed) { this.s = BigInt(seed); }
  next() {
    const m = (1n << 64n) - 1n;
    this.s ^= this.s >> 12n; this.s ^= (this.s << 25n) & m; this.s ^= this.s >> 27n;
    return (this.s * 0x2545F4914F6CDD1Dn) & m;
  }
  below(n) { return Number(this.next() % BigInt(n)); }
}

const syllables = ["ka", "lo", "mi", "ne", "pu", "ra", "si", "to", "ve", "zu", "bra", "cle", "dri", "fro", "glu", "pla", "sto", "tre"];
const vocabRng = new Rng(7);
const vocab = Array.from({ length: 3000 }, () => {
  const n = 2 + vocabRng.below(3);
  return Array.from({ length: n }, () => syllables[vocabRng.below(syllables.length)]).join("");
});
const word = (rng) => {
  const r = rng.below(vocab.length) / vocab.length;
  return vocab[Math.floor(r * r * r * vocab.length)];
};
const types = ["gotcha", "error_pattern", "decision", "pattern", "dead_end"];

function corpus(n) {
  const rng = new Rng(n * 31 + 1);
  return Array.from({ length: n }, () => {
    const words = 12 + rng.below(40);
    const text = Array.from({ length: words }, () => word(rng));
    if (rng.below(3) === 0) text.push(`${word(rng)}_${word(rng)}`);
    const type = types[rng.below(types.length)];
    return { type, content: text.join(" "), relatedFiles: [`src/mod${rng.below(40)}/file${rng.below(500)}.rs`] };
  });
}

function queries(count) {
  const rng = new Rng(99);
  return Array.from({ length: count }, (_, i) => {
    const n = 3 + rng.below(5);
    const q = Array.from({ length: n }, () => word(rng));
    if (i % 3 === 0) q.push(`${word(rng)}_${word(rng)}`);
    return q.join(" ");
  });
}

const pct = (sorted, p) => sorted[Math.round((sorted.length - 1) * p)];
const [sizesArg, countArg] = process.argv.slice(2);
const sizes = (sizesArg ?? "1000,10000").split(",").map(Number);
const qs = queries(Number(countArg ?? 100));
const engram = await loadEngram();
console.log(`${"size".padStart(7)} ${"configuration".padEnd(34)} ${"p50 ms".padStart(9)} ${"p95 ms".padStart(9)}`);
for (const size of sizes) {
  const memory = await engram.createMemory({ local: true, projectId: `bench-${size}` });
  for (const m of corpus(size)) await memory.remember(m);
  const latencies = [];
  let candidates = 0, ranking = 0;
  for (const text of qs) {
    const t = performance.now();
    const r = await memory.search({ text });
    latencies.push(performance.now() - t);
    candidates += r.timings.candidates / 1e3;
    ranking += r.timings.ranking / 1e3;
  }
  latencies.sort((a, b) => a - b);
  console.log(`${String(size).padStart(7)} ${"wasm (Node), keyword + graph".padEnd(34)} ${pct(latencies, 0.5).toFixed(2).padStart(9)} ${pct(latencies, 0.95).toFixed(2).padStart(9)}  candidates ${(candidates / qs.length).toFixed(2)} ms, ranking ${(ranking / qs.length).toFixed(2)} ms`);
}
