// The reference vectors inside workerd (Miniflare): the transformer (npm package) and the
// static edge model (the Worker's build) must each reach cosine >= 0.99 against their
// independently computed references.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { cosine } from "../../tests/js/cosine.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const modelDir = process.env.ENGRAM_MODEL_DIR ?? path.join(os.homedir(), ".cache/engram/models");
let mf, base;

before(async () => {
  mf = new Miniflare({
    modules: true,
    scriptPath: path.resolve(here, "../reference/reference-worker.js"),
    modulesRoot: root,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
      { type: "Data", include: ["**/*.bin"] },
    ],
    dataBlobBindings: {
      MINILM_ONNX: path.join(modelDir, "all-minilm-l6-v2-int8/model.onnx"),
      MINILM_TOKENIZER: path.join(modelDir, "all-minilm-l6-v2-int8/tokenizer.json"),
    },
    compatibilityDate: "2026-04-01",
    host: "127.0.0.1",
  });
  base = (await mf.ready).toString();
});

after(async () => {
  await mf?.dispose();
});

async function check(model, file, expectedId) {
  const reference = JSON.parse(await readFile(path.join(root, "tests/vectors", file), "utf8"));
  const texts = reference.texts.map((r) => r.text);
  const response = await fetch(base, { method: "POST", body: JSON.stringify({ model, texts }) });
  const answer = await response.json();
  assert.equal(answer.modelId, expectedId);
  assert.equal(answer.dims, reference.dims);
  assert.equal(answer.vectors.length, texts.length);
  let worst = 1;
  reference.texts.forEach((record, i) => {
    const c = cosine(answer.vectors[i], record.embedding);
    worst = Math.min(worst, c);
    assert.ok(c >= 0.99, `${model}: cosine ${c} for ${JSON.stringify(record.text.slice(0, 40))}`);
  });
  console.log(`workerd ${model}: worst cosine ${worst.toFixed(6)}, ${(answer.ms / texts.length).toFixed(1)} ms/text (incl. load), linear memory ${answer.linearMiB.toFixed(1)} MiB`);
}

test("the transformer matches its fp32 reference in workerd", () => check("minilm", "embeddings.json", "all-minilm-l6-v2-int8"));
test("the static edge model matches its reference in workerd", () => check("static", "static-embeddings.json", "static-minilm-256-int8"));
