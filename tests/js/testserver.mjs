// Starts engram-testserver (a libSQL engine serving Hrana over HTTP) on a free loopback port.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export function testServerBinary() {
  if (process.env.ENGRAM_TESTSERVER_BIN) return process.env.ENGRAM_TESTSERVER_BIN;
  const target = process.env.CARGO_TARGET_DIR ?? path.join(root, "target");
  return path.join(target, "debug", "engram-testserver");
}

/** @returns {Promise<{url: string, stop: () => Promise<void>, stats: () => Promise<{pipelineRequests: number}>, rows: (sql: string) => Promise<Array<Array<string | null>>>}>} */
export async function startTestServer({ authToken, v2Only } = {}) {
  const args = [];
  if (authToken) args.push("--auth-token", authToken);
  if (v2Only) args.push("--v2-only");
  const child = spawn(testServerBinary(), args, { stdio: ["ignore", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`engram-testserver exited with ${code}`)));
    lines.once("line", (line) => {
      const match = /^ENGRAM_TESTSERVER_URL=(.*)$/.exec(line);
      match ? resolve(match[1]) : reject(new Error(`unexpected output: ${line}`));
    });
  });
  return {
    url,
    stats: async () => (await fetch(`${url}/engram-test/stats`)).json(),
    // Rows of one statement run on the server directly, over Hrana (each value as Hrana
    // sends it: integers as strings).
    rows: async (sql) => {
      const response = await fetch(`${url}/v3/pipeline`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authToken ? { authorization: `Bearer ${authToken}` } : {}) },
        body: JSON.stringify({ requests: [{ type: "execute", stmt: { sql } }, { type: "close" }] }),
      });
      const result = (await response.json()).results[0];
      if (result.type !== "ok") throw new Error(`${sql}: ${JSON.stringify(result.error)}`);
      return result.response.result.rows.map((row) => row.map((v) => v.value));
    },
    stop: async () => {
      child.kill("SIGINT");
      await once(child, "exit");
    },
  };
}
