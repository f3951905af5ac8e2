// Removes the `name` custom section (function names, for stack traces only) from a wasm
// module in place, after wasm-bindgen has read what it needs; prints the sizes before and
// after. Engines never need the section: a trace shows `wasm-function[N]` instead.
//
//   node scripts/strip-wasm-names.mjs FILE.wasm
import { readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

const file = process.argv[2];
if (!file) {
  console.error("usage: node scripts/strip-wasm-names.mjs FILE.wasm");
  process.exit(2);
}
const bytes = readFileSync(file);
if (bytes.readUInt32LE(0) !== 0x6d736100) {
  console.error(`${file}: not a wasm module`);
  process.exit(1);
}

/** An unsigned LEB128 at `at`: its value and where the next field starts. */
function leb(at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if ((byte & 0x80) === 0) return [value, at];
  }
}

const kept = [bytes.subarray(0, 8)];
let removed = 0;
for (let at = 8; at < bytes.length; ) {
  const start = at;
  const id = bytes[at];
  const [size, payload] = leb(at + 1);
  const end = payload + size;
  let name = "";
  if (id === 0) {
    const [length, text] = leb(payload);
    name = bytes.subarray(text, text + length).toString("utf8");
  }
  if (id === 0 && name === "name") removed += end - start;
  else kept.push(bytes.subarray(start, end));
  at = end;
}
const stripped = Buffer.concat(kept);
writeFileSync(file, stripped);
const mb = (n) => `${(n / 1e6).toFixed(1)} MB`;
console.log(
  `${file}: ${mb(bytes.length)} (${mb(gzipSync(bytes).length)} gzip) -> ${mb(stripped.length)} ` +
    `(${mb(gzipSync(stripped).length)} gzip); the name section was ${mb(removed)}`,
);
