// The Worker with the MiniLM transformer (wrangler.minilm.toml): hybrid search with the
// same model as the CLI and the npm package, inside a Worker's 128 MB. It bundles the npm
// package's embedder module (tract) instead of the static edge model's table; the model's
// files come from an R2 bucket at the isolate's first request, each checked against the
// sha256 the package pins, and load in the compact footprint: int8 weights dequantized per
// product, no ONNX bytes kept (docs/npm-package.md, "MiniLM at the edge"). The ONNX file is
// streamed straight into the embedder's memory, so the isolate never holds a second, 23 MB
// copy of it in JavaScript while the model loads.
//
// Bindings: MODELS, the R2 bucket holding `<MODEL_PREFIX>model.onnx` and
// `<MODEL_PREFIX>tokenizer.json` (MODEL_PREFIX defaults to "all-minilm-l6-v2-int8/", the
// layout `npx engram-model fetch --dir` writes). EMBEDDINGS = "off" serves keyword search
// only, without reading the bucket.
import { initSync, loadEmbeddingModelFromParts, ModelBytes } from "../build/embed/engram_embed.js";
import embedderWasm from "../build/embed/engram_embed_bg.wasm";
import { PINNED_MODEL } from "../build/embed/pinned-model.js";
import { httpStatus } from "../build/engram/engram.js";
import { workerFor } from "./worker.js";

const DEFAULT_PREFIX = `${PINNED_MODEL.id}/`;

// The load in flight or done, shared by every request of the isolate; a failed one is
// dropped so the next request tries again (after an upload, say).
let loading = null;

function embeddingModel(env) {
  if (env.EMBEDDINGS === "off") return null;
  loading ??= loadFromBucket(env).catch((error) => {
    loading = null;
    throw error;
  });
  return loading;
}

async function loadFromBucket(env) {
  const bucket = env.MODELS;
  if (!bucket || typeof bucket.get !== "function") {
    throw modelError("no R2 binding MODELS: bind the bucket holding the model's files (wrangler.minilm.toml)", "MODELS");
  }
  const prefix = env.MODEL_PREFIX ?? DEFAULT_PREFIX;
  // Instantiated here, not at startup: global scope has a tight CPU budget, and an isolate
  // with EMBEDDINGS = "off" never needs it.
  initSync({ module: embedderWasm });
  const { onnx, tokenizer } = PINNED_MODEL.files;
  const onnxBytes = await streamChecked(bucket, prefix, onnx);
  let tokenizerBytes;
  try {
    tokenizerBytes = await streamChecked(bucket, prefix, tokenizer);
  } catch (error) {
    onnxBytes.free();
    throw error;
  }
  return loadEmbeddingModelFromParts(onnxBytes, tokenizerBytes, PINNED_MODEL.id, "compact");
}

// `file` streamed from the bucket into the embedder's memory and checked against its pinned
// sha256, or a `model_error` naming the key and what is wrong.
async function streamChecked(bucket, prefix, file) {
  const key = `${prefix}${file.name}`;
  const object = await bucket.get(key);
  if (!object) {
    throw modelError(`no object ${key} in the MODELS bucket: upload the pinned ${file.name} there (npx engram-model fetch, then wrangler r2 object put)`, "MODELS");
  }
  // Checked before anything is allocated for it: a wrong object may be any size.
  if (object.size !== file.bytes) {
    await object.body.cancel();
    throw modelError(`${key} in the MODELS bucket is not the pinned ${file.name}: ${object.size} bytes, expected ${file.bytes}`, "MODELS");
  }
  const bytes = new ModelBytes(object.size);
  try {
    const reader = object.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes.push(value);
    }
    const sum = bytes.sha256();
    if (sum !== file.sha256) {
      throw modelError(`${key} in the MODELS bucket is not the pinned ${file.name}: sha256 ${sum}, expected ${file.sha256}`, "MODELS");
    }
  } catch (error) {
    bytes.free();
    throw error;
  }
  return bytes;
}

function modelError(message, field) {
  return Object.assign(new Error(message), {
    code: "model_error",
    status: httpStatus("model_error"),
    violations: [{ field, problem: message }],
  });
}

export default workerFor(embeddingModel);
