// Cold start of the Worker in workerd (Miniflare from workers/node_modules), for each way it
// embeds: keyword only, the static edge model, and MiniLM (src/minilm.js, compact footprint,
// the model read from an R2 binding). Each round starts a fresh workerd process, so every
// first request is an isolate's first:
// - ready: workerd up with the Worker loaded (its wasm modules compiled);
// - first: the first request, a remember (model load from the binding plus one embedding
//   plus the database's migration check and write);
// - warm: a hybrid search on the same isolate afterwards;
// - isolate: what the Worker's isolate holds after those two requests, read through V8's
//   inspector: the JS heap, the ArrayBuffers' backing stores (garbage not yet collected
//   included) and every wasm module's linear memory (which only grows, so it is the peak);
//   compiled code is not in it;
// - rss: the workerd process's resident memory when ready and at its peak (VmHWM). The
//   process also runs Miniflare's own workers, the R2 simulator holding the uploaded model
//   among them, so only the isolate figure is the Worker's.
// The variants alternate, so load on the machine falls on all of them alike. Prints a table
// of medians. Usage (after scripts/build-worker.sh and a debug engram-testserver build):
//   node bench/worker_cold_start.mjs [ROUNDS]   (default 3)
import { readFile, readdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { startTestServer } from "../tests/js/testserver.mjs";
import { workerOptions } from "../workers/test/miniflare-options.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const workers = path.resolve(here, "../workers");
const requireFromWorkers = createRequire(path.join(workers, "package.json"));
const { Miniflare } = requireFromWorkers("miniflare");
const WebSocket = requireFromWorkers("ws");
const modelDir = path.join(process.env.ENGRAM_MODEL_DIR ?? path.join(os.homedir(), ".cache/engram/models"), "all-minilm-l6-v2-int8");
const rounds = Number(process.argv[2] ?? 3);
const TOKEN = "bench-token";

const variants = {
  keyword: { script: "src/index.js", bindings: { EMBEDDINGS: "off" } },
  static: { script: "src/index.js", bindings: { EMBEDDINGS: "static" } },
  minilm: { script: "src/minilm.js", bindings: { EMBEDDINGS: "minilm" }, r2: true },
};

// The workerd processes under this one, by pid.
async function workerdPids() {
  const pids = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = await readFile(`/proc/${entry}/status`, "utf8");
      if (/^Name:\s*workerd$/m.test(status)) pids.push(Number(entry));
    } catch {
      // The process ended while listing.
    }
  }
  return new Set(pids);
}

// The process's resident memory now (VmRSS) or at its peak (VmHWM), in MiB.
async function rssMiB(pid, field = "VmRSS") {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`^${field}:\\s*(\\d+) kB`, "m").exec(status)[1]) / 1024;
}

// The user Worker's isolate through V8's inspector on `port`: JS heap, backing stores and
// wasm memories, in MiB.
async function isolateMiB(port) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const target = targets.find((t) => t.title.endsWith("core:user:"));
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  let next = 0;
  const contexts = [];
  const replies = new Map();
  socket.on("message", (data) => {
    const message = JSON.parse(data);
    if (message.method === "Runtime.executionContextCreated") contexts.push(message.params.context.id);
    replies.get(message.id)?.(message);
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      replies.set(id, (message) => (message.error ? reject(new Error(`${method}: ${message.error.message}`)) : resolve(message.result)));
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    await send("Runtime.enable");
    const heap = await send("Runtime.getHeapUsage");
    const prototype = await send("Runtime.evaluate", { expression: "WebAssembly.Memory.prototype", contextId: contexts[0] });
    const { objects } = await send("Runtime.queryObjects", { prototypeObjectId: prototype.result.objectId });
    const sizes = await send("Runtime.callFunctionOn", {
      objectId: objects.objectId,
      functionDeclaration: "function () { return this.map((memory) => memory.buffer.byteLength); }",
      returnByValue: true,
    });
    const mib = (bytes) => bytes / 2 ** 20;
    const wasm = mib(sizes.result.value.reduce((a, b) => a + b, 0));
    return { jsHeap: mib(heap.totalSize), backing: mib(heap.backingStorageSize), wasm, isolate: mib(heap.totalSize + heap.backingStorageSize) + wasm };
  } finally {
    socket.close();
  }
}

let inspectorPort = 9400;

async function measure(name, server, modelFiles) {
  const variant = variants[name];
  const before = await workerdPids();
  let started = performance.now();
  const mf = new Miniflare({
    ...workerOptions(`workers/${variant.script}`),
    inspectorPort: ++inspectorPort,
    bindings: { LIBSQL_URL: server.url, ...variant.bindings },
    ...(variant.r2 ? { r2Buckets: ["MODELS"] } : {}),
  });
  try {
    const base = (await mf.ready).toString().replace(/\/$/, "");
    const ready = performance.now() - started;
    const pid = [...(await workerdPids())].find((p) => !before.has(p));
    const rssReady = await rssMiB(pid);
    if (variant.r2) {
      const bucket = await mf.getR2Bucket("MODELS");
      for (const [key, bytes] of modelFiles) await bucket.put(key, bytes);
    }
    const project = `bench-${name}-${Date.now()}`;
    const call = async (route, body) => {
      const response = await fetch(`${base}/v1/${route}`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "x-engram-project": project },
        body: JSON.stringify(body),
      });
      const answer = await response.json();
      if (answer.error) throw new Error(`${name}: ${answer.error.code}: ${answer.error.message}`);
      return answer;
    };
    started = performance.now();
    await call("remember", { type: "gotcha", content: "SQLite reports 'database is locked' when two test processes share one database file" });
    const first = performance.now() - started;
    started = performance.now();
    await call("search", { text: "parallel test runs collide on the database" });
    const warm = performance.now() - started;
    return { ready, first, warm, ...(await isolateMiB(inspectorPort)), rssReady, rss: await rssMiB(pid, "VmHWM") };
  } finally {
    await mf.dispose();
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const server = await startTestServer({ authToken: TOKEN });
try {
  const modelFiles = [];
  for (const file of ["model.onnx", "tokenizer.json"]) {
    modelFiles.push([`all-minilm-l6-v2-int8/${file}`, new Uint8Array(await readFile(path.join(modelDir, file)))]);
  }
  const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const name of Object.keys(variants)) samples[name].push(await measure(name, server, modelFiles));
    process.stderr.write(`round ${round + 1}/${rounds} done\n`);
  }
  console.log(`Worker cold start in local workerd, median of ${rounds} fresh processes each (${os.cpus().length} cores)`);
  console.log("variant  | ready ms | first request ms | warm search ms | isolate MiB: JS heap | backing stores | wasm memories | total | workerd RSS MiB: ready | peak");
  for (const [name, list] of Object.entries(samples)) {
    const m = (key) => median(list.map((s) => s[key]));
    console.log(
      [
        name.padEnd(8),
        m("ready").toFixed(0).padStart(8),
        m("first").toFixed(0).padStart(16),
        m("warm").toFixed(1).padStart(14),
        m("jsHeap").toFixed(1).padStart(20),
        m("backing").toFixed(1).padStart(14),
        m("wasm").toFixed(1).padStart(13),
        m("isolate").toFixed(1).padStart(5),
        m("rssReady").toFixed(1).padStart(22),
        m("rss").toFixed(1).padStart(4),
      ].join(" | "),
    );
  }
} finally {
  await server.stop();
}
