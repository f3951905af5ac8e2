// The panel's test project, built from the development data with the real CLI: the pytest
// 4.5.0 source indexed into the code graph (dependencies for the map), the 19 pytest
// SWE-agent trajectories replayed through the observer (sessions, co-access pairs, learned
// memories), and a real AGENTS.md imported. Then `engram ui` serves it.
import { execFile, spawn } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

export { freePort } from "../../tests/js/ports.mjs";

const run = promisify(execFile);
export const evalDir = process.env.ENGRAM_EVAL_DIR ?? path.resolve(import.meta.dirname, "../../../shared/eval");
const targetDir = process.env.CARGO_TARGET_DIR ?? path.join(os.homedir(), ".cache/engram/target");
export const engramBin = process.env.ENGRAM_BIN ?? path.join(targetDir, "debug/engram");
const corpora = process.env.ENGRAM_CORPORA_DIR ?? path.join(os.homedir(), ".cache/engram/corpora");

/** Runs the CLI on `db`; resolves to its stdout. */
export async function engram(db, ...args) {
  const { stdout } = await run(engramBin, ["--db", db, ...args], { maxBuffer: 64 << 20 });
  return stdout;
}

/** Builds the project in a fresh folder; resolves to its database path. */
export async function buildProject() {
  const dir = await mkdtemp(path.join(os.tmpdir(), "engram-panel-"));
  const db = path.join(dir, ".engram/engram.db");
  await mkdir(path.dirname(db), { recursive: true });
  await engram(db, "index", path.join(corpora, "swebench/pytest-4.5.0"));
  const trajectories = (await readdir(path.join(evalDir, "trajectories")))
    .filter((name) => name.startsWith("pytest-dev__pytest-"))
    .map((name) => path.join(evalDir, "trajectories", name));
  await engram(db, "observe", "replay", ...trajectories);
  const root = path.join(dir, "project");
  await mkdir(root, { recursive: true });
  await copyFile(path.join(evalDir, "instructions/pydantic__pydantic-ai__AGENTS.md"), path.join(root, "AGENTS.md"));
  await engram(db, "import", "--root", root, path.join(root, "AGENTS.md"));
  return { dir, db, trajectories: trajectories.length };
}

/** Starts `engram ui` on `db` and a free port (with `extra` arguments); resolves once the
 * panel answers. */
export async function startPanel(db, port, ...extra) {
  const args = ["--db", db, "ui", "--port", String(port), "--www", path.resolve(import.meta.dirname, ".."), ...extra];
  const child = spawn(engramBin, args, {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`engram ui exited: ${log}`);
    try {
      // Any answer means it listens (one behind a token answers 401).
      await fetch(`${url}/api/sessions`);
      break;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    log: () => log,
    stop() {
      // The panel's node runs in the CLI's process group: stop both.
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // Already gone.
      }
    },
  };
}
