// A dedicated worker that opens engram on a database kept in OPFS (sync access handles exist
// only in workers), remembers if asked, and reports what the database holds.
import init, { createMemory } from "/pkg/dist/browser.js";

const ready = init({ module_or_path: "/pkg/dist/engram_bg.wasm" });
let memory;

self.onmessage = async ({ data }) => {
  try {
    await ready;
    memory ??= await createMemory({ local: true, path: data.name, projectId: "tabs" });
    if (data.remember) {
      await memory.remember({ type: "gotcha", content: data.remember });
    }
    const { hits } = await memory.search({ text: "integration tests fail", limit: 3 });
    self.postMessage({ count: await memory.count(), backend: memory.backend, first: hits[0]?.memory.content ?? null });
  } catch (error) {
    self.postMessage({ code: error.code ?? null, error: String(error.message ?? error) });
  }
};
