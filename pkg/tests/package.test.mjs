// The package as a new app developer meets it: `npm pack` of pkg/dist installed into an
// empty folder, and the README's snippet run there unchanged, in a Node of its own.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import test from "node:test";
import { distDir } from "./load.mjs";

const repo = path.resolve(distDir, "../..");

/** The first `js` block of the README's npm package section. */
async function readmeSnippet() {
  const readme = await readFile(path.join(repo, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### npm package"));
  const block = section.match(/```js\n([\s\S]*?)```/);
  assert.ok(block, "the README's npm section has a js block");
  return block[1];
}

test("the packed package installs into an empty folder and the README's snippet runs there", async () => {
  const app = await mkdtemp(path.join(tmpdir(), "engram-app-"));
  try {
    const packed = JSON.parse(execFileSync("npm", ["pack", distDir, "--json", "--pack-destination", app], { encoding: "utf8" }));
    const manifest = JSON.parse(await readFile(path.join(distDir, "package.json"), "utf8"));
    assert.equal(manifest.name, "engram");
    assert.equal(manifest.engines.node, ">=20");
    for (const file of ["node.js", "files.js", "browser.js", "model.js", "engram-model.js"]) {
      assert.ok(packed[0].files.some((f) => f.path === file), `${file} is packed`);
    }
    assert.equal(manifest.bin["engram-model"], "engram-model.js");
    assert.equal(manifest.exports["."].default, "./browser.js");
    await writeFile(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", path.join(app, packed[0].filename)], { cwd: app, stdio: "pipe" });
    await writeFile(path.join(app, "snippet.mjs"), await readmeSnippet());
    const printed = execFileSync(process.execPath, ["snippet.mjs"], { cwd: app, encoding: "utf8" });
    assert.equal(printed.trim(), "Run the migrations before the integration tests");
    // The snippet keeps its database in a file: a second run finds the same memory there.
    assert.ok(existsSync(path.join(app, ".data/engram.db")), "the snippet's database is a file");
    await writeFile(path.join(app, "again.mjs"), 'import { createMemory } from "engram";\nconst m = await createMemory({ local: true, path: ".data/engram.db" });\nconsole.log(await m.count());\n');
    assert.equal(execFileSync(process.execPath, ["again.mjs"], { cwd: app, encoding: "utf8" }).trim(), "1");
    // A plain import is enough in Node: the module is ready when the import resolves.
    await writeFile(path.join(app, "plain.mjs"), 'import { createMemory } from "engram";\nconst m = await createMemory({ local: true });\nconsole.log(await m.count());\n');
    assert.equal(execFileSync(process.execPath, ["plain.mjs"], { cwd: app, encoding: "utf8" }).trim(), "0");
  } finally {
    await rm(app, { recursive: true, force: true });
  }
});
