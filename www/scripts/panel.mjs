// `npm run dev` / `npm start`: the panel on 127.0.0.1 (PORT, default 3000). It needs the
// database's address in ENGRAM_URL; `engram ui` sets it (serving the project's local file
// on loopback) and runs this. Without it this explains how to start.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const mode = process.argv[2] === "dev" ? "dev" : "start";
const here = fileURLToPath(new URL("..", import.meta.url));
if (!process.env.ENGRAM_URL) {
  console.error(
    "The panel needs a database: run `engram ui` in your project (it serves the project's\n" +
      "database and starts this panel), or set ENGRAM_URL (and ENGRAM_AUTH_TOKEN, ENGRAM_PROJECT)\n" +
      "to a libSQL server and run this again.",
  );
  process.exit(2);
}
if (mode === "start" && !existsSync(new URL("../.next/BUILD_ID", import.meta.url))) {
  console.error("No build yet: run `npm run build` first (or `npm run dev`).");
  process.exit(2);
}
const host = process.env.HOSTNAME || "127.0.0.1";
const port = process.env.PORT || "3000";
const next = fileURLToPath(new URL("../node_modules/next/dist/bin/next", import.meta.url));
const child = spawn(process.execPath, [next, mode, "-H", host, "-p", port], { cwd: here, stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
