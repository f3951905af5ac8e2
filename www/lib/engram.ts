// The panel's one engram handle, opened on first use in the server process: the project's
// database over libSQL's HTTP protocol (`engram ui` serves the local file on loopback and
// passes its address here), or any libSQL server given by ENGRAM_URL. With the bundled
// model on disk (ENGRAM_MODEL_DIR, as the CLI uses it) searches are hybrid, as the agent's
// are; without it they are keyword and graph only, and the panel says so.
import { createMemory, createMemoryWithModel, loadEmbeddingModel, type Engram } from "engram";

export interface Opened {
  engram: Engram;
  /** The embedding model searches use, or null for keyword and graph only. */
  model: string | null;
  projectId: string;
}

let opened: Promise<Opened> | undefined;

/** Where the panel's memories live, from the environment `engram ui` (or a person) sets. */
export function databaseSettings() {
  const url = process.env.ENGRAM_URL;
  if (!url) {
    throw new Error(
      "ENGRAM_URL is not set: start the panel with `engram ui` (it serves the project's " +
        "database), or set ENGRAM_URL (and ENGRAM_AUTH_TOKEN) to a libSQL server",
    );
  }
  return {
    url,
    authToken: process.env.ENGRAM_AUTH_TOKEN || undefined,
    projectId: process.env.ENGRAM_PROJECT || "default",
  };
}

async function open(): Promise<Opened> {
  const settings = databaseSettings();
  // The package reads the model from the folder and checks each file's sha256; a missing
  // or altered file means keyword and graph only.
  const cacheDir = process.env.ENGRAM_MODEL_DIR;
  const model = cacheDir ? await loadEmbeddingModel({ cacheDir }).catch(() => null) : null;
  if (model) {
    const engram = await createMemoryWithModel(settings, model);
    return { engram, model: model.modelId, projectId: settings.projectId };
  }
  const engram = await createMemory({ ...settings, embedder: { provider: "none" } });
  return { engram, model: null, projectId: settings.projectId };
}

/** The shared handle; a failed open is retried by the next request. */
export function openEngram(): Promise<Opened> {
  if (!opened) {
    opened = open().catch((error) => {
      opened = undefined;
      throw error;
    });
  }
  return opened;
}

/** The shared engram. */
export async function engram(): Promise<Engram> {
  return (await openEngram()).engram;
}
