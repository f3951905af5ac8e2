import { fileURLToPath } from "node:url";

/** @type {import("next").NextConfig} */
const config = {
  // The engram package is WebAssembly that Node loads from its own folder at run time;
  // bundling it would copy the module into every server chunk.
  serverExternalPackages: ["engram"],
  // The package is linked from ../pkg/dist, outside this folder.
  turbopack: { root: fileURLToPath(new URL("..", import.meta.url)) },
  outputFileTracingRoot: fileURLToPath(new URL("..", import.meta.url)),
  poweredByHeader: false,
  reactStrictMode: true,
};

export default config;
