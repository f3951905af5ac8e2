// Search latency in Node on the npm package's wasm and its in-wasm SQLite: keyword + graph
// paths (FTS5, then resident keywords), then hybrid with the dense path by exact scan and
// with resident vectors and keywords (query
// embedding excluded): `node bench/search_wasm.mjs [SIZES] [QUERIES]` (after
// scripts/build-pkg.sh; default `1000,10000 100`; `BENCH_KEYWORD_ONLY=1` for the first). The corpus and queries follow the native `search_bench` example's
// recipe (same generator, same seeds), so the two are comparable configuration by
// configuration. Prints p50 / p95 ms and the mean candidate and ranking stage times.
// `BENCH_ONLY=<text>` measures only the configurations whose label contains it (for
// profiling and for side-by-side runs of two builds).
// The last configuration stores over HTTP: the same wasm against engram-testserver (a
// libSQL engine serving Hrana, in its own process; the release build, `cargo build
// --release -p engram-testserver`, unless `ENGRAM_TESTSERVER_BIN` names another), filled
// over HTTP, at sizes up to 10,000; it also prints HTTP requests per search. It searches
// with resident vectors and keywords, then as a Worker does (nothing resident), then as a
// project of 300 memories on the same server (a tenant beside the large project).
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadEngram } from "../pkg/tests/load.mjs";
import { startTestServer } from "../tests/js/testserver.mjs";

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

// A fake embedder for benchmarks only, served through `fetch` as an OpenAI-compatible
// endpoint: the native bench's hash embedder (FNV-1a per word into 384 buckets), so both
// benches rank the same vectors. Its time is excluded (`timings.embed`).
const DIMS = 384;
const encoder = new TextEncoder();
function hashVector(text) {
  const v = new Float64Array(DIMS);
  for (const w of text.split(/\s+/).filter(Boolean)) {
    let h = 1469598103934665603n;
    for (const b of encoder.encode(w)) h = ((h ^ BigInt(b)) * 1099511628211n) & ((1n << 64n) - 1n);
    v[Number(h % BigInt(DIMS))] += 1;
    v[Number((h >> 20n) % BigInt(DIMS))] += 0.5;
  }
  const norm = Math.max(Math.sqrt(v.reduce((a, x) => a + x * x, 0)), 1e-6);
  return Array.from(v, (x) => x / norm);
}
const hashFetch = async (_url, init) => {
  const { input } = JSON.parse(init.body);
  const data = input.map((text, index) => ({ index, embedding: hashVector(text) }));
  return new Response(JSON.stringify({ data }), { status: 200, headers: { "content-type": "application/json" } });
};
const embedder = { provider: "openai", url: "http://bench.invalid/v1", model: "bench-hash-384", dims: DIMS };

const pct = (sorted, p) => sorted[Math.round((sorted.length - 1) * p)];
const [sizesArg, countArg] = process.argv.slice(2);
const sizes = (sizesArg ?? "1000,10000").split(",").map(Number);
const qs = queries(Number(countArg ?? 100));
const engram = await loadEngram();
console.log(`${"size".padStart(7)} ${"configuration".padEnd(34)} ${"p50 ms".padStart(9)} ${"p95 ms".padStart(9)}`);
const only = process.env.BENCH_ONLY;
const wanted = (label) => !only || label.includes(only);
async function measure(memory, size, label, requests) {
  const latencies = [];
  let candidates = 0, ranking = 0;
  const before = requests?.count;
  for (const text of qs) {
    const t = performance.now();
    const r = await memory.search({ text });
    latencies.push(performance.now() - t - r.timings.embed / 1e3);
    candidates += r.timings.candidates / 1e3;
    ranking += r.timings.ranking / 1e3;
  }
  latencies.sort((a, b) => a - b);
  const trips = requests ? `${((requests.count - before) / qs.length).toFixed(2)} round trips per search; ` : "";
  console.log(`${String(size).padStart(7)} ${label.padEnd(34)} ${pct(latencies, 0.5).toFixed(2).padStart(9)} ${pct(latencies, 0.95).toFixed(2).padStart(9)}  ${trips}candidates ${(candidates / qs.length).toFixed(2)} ms, ranking ${(ranking / qs.length).toFixed(2)} ms`);
}

// Loads the resident keywords, then searches until every vector is resident (4,096 a
// search): what a long-lived instance pays once, not what a search costs.
async function loadResident(memory, size) {
  await memory.loadResidentKeywords();
  for (let i = 0; i <= Math.ceil(size / 4096); i++) await memory.search({ text: qs[0] });
}

const HTTP_RESIDENT = "wasm (Node) over HTTP, hybrid (res.)";
const HTTP_PER_REQUEST = "wasm (Node) over HTTP, hybrid (exact)";
// The small project the per-request rows put beside the large one (the native
// `search_bench`'s recipe and size).
const SMALL_PROJECT_SIZE = 300;
let server;
// The test server, started once; null (with a line saying why) when its binary is absent.
async function testServer() {
  if (server === undefined) {
    const target = process.env.CARGO_TARGET_DIR ?? path.join(path.dirname(fileURLToPath(import.meta.url)), "../target");
    process.env.ENGRAM_TESTSERVER_BIN ??= path.join(target, "release", "engram-testserver");
    if (!existsSync(process.env.ENGRAM_TESTSERVER_BIN)) {
      console.log(`${HTTP_RESIDENT}: skipped, no ${process.env.ENGRAM_TESTSERVER_BIN} (cargo build --release -p engram-testserver)`);
      server = null;
    } else {
      server = await startTestServer();
    }
  }
  return server;
}

const hybrid = !process.env.BENCH_KEYWORD_ONLY;
for (const size of sizes) {
  const docs = corpus(size);
  if (wanted("wasm (Node), keyword + graph")) {
    const memory = await engram.createMemory({ local: true, projectId: `bench-${size}` });
    for (const m of docs) await memory.remember(m);
    await measure(memory, size, "wasm (Node), keyword + graph");
  }
  if (wanted("wasm (Node), keyword + graph (res.)")) {
    const m = await engram.createMemory({ local: true, projectId: `bench-${size}`, residentKeywords: true });
    for (const d of docs) await m.remember(d);
    await m.loadResidentKeywords();
    await measure(m, size, "wasm (Node), keyword + graph (res.)");
  }
  if (!hybrid) continue;
  // Each `local` instance is its own in-memory database, so the exact scan and resident
  // vectors get one each, filled with the same memories.
  for (const [label, residentVectors] of [["wasm (Node), hybrid (exact dense)", false], ["wasm (Node), hybrid (resident, both)", true]]) {
    if (!wanted(label)) continue;
    const m = await engram.createMemory({ local: true, projectId: `bench-${size}`, fetch: hashFetch, embedder, residentVectors, residentKeywords: residentVectors });
    for (const d of docs) await m.remember(d);
    if (residentVectors) await loadResident(m, size);
    await measure(m, size, label);
  }
  const http = size <= 10_000 && (wanted(HTTP_RESIDENT) || wanted(HTTP_PER_REQUEST)) ? await testServer() : null;
  if (http) {
    const { url } = http;
    // Storage requests go to the server and are counted; the embedder's go to the hash.
    const requests = { count: 0 };
    const routed = (target, init) => {
      if (String(target).startsWith(embedder.url)) return hashFetch(target, init);
      requests.count++;
      return fetch(target, init);
    };
    const m = await engram.createMemory({ url, projectId: `bench-${size}`, fetch: routed, embedder, residentVectors: true, residentKeywords: true });
    const started = performance.now();
    for (const d of docs) await m.remember(d);
    console.error(`  ${size}: filled over HTTP in ${((performance.now() - started) / 1e3).toFixed(1)} s`);
    if (wanted(HTTP_RESIDENT)) {
      await loadResident(m, size);
      await measure(m, size, HTTP_RESIDENT, requests);
    }
    if (wanted(HTTP_PER_REQUEST)) {
      // A Worker's case: nothing resident (an instance serves one request), the dense path
      // by the exact scan, and a small project as one tenant beside the large one on the
      // same server, each searching only its own rows.
      const large = await engram.createMemory({ url, projectId: `bench-${size}`, fetch: routed, embedder });
      await measure(large, size, HTTP_PER_REQUEST, requests);
      const small = await engram.createMemory({ url, projectId: `bench-${size}-small`, fetch: routed, embedder });
      for (const d of corpus(SMALL_PROJECT_SIZE)) await small.remember(d);
      await measure(small, `${SMALL_PROJECT_SIZE}`, "  small project beside it", requests);
    }
  }
}
await server?.stop();
