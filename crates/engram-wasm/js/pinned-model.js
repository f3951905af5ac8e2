// The embedding model this package pins, in a module of its own (no imports, no wasm) so the
// loader, the `engram-model` script and a Worker reading the files from a binding check the
// same sums.

/** The model this package pins: its id and each file's name, sha256 and size. */
export const PINNED_MODEL = Object.freeze({
  id: "all-minilm-l6-v2-int8",
  files: Object.freeze({
    onnx: Object.freeze({
      name: "model.onnx",
      sha256: "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
      bytes: 22928619,
    }),
    tokenizer: Object.freeze({
      name: "tokenizer.json",
      sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
      bytes: 466247,
    }),
  }),
});

/** The lowercase hex sha256 of `bytes` (Web Crypto: Node 20+, browsers, workers). */
export async function sha256Hex(bytes) {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}
