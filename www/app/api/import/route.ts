import { answerWithBody } from "@/lib/api";
import type { ImportRequest } from "engram";

export const dynamic = "force-dynamic";

/** Imports instruction files: `{ files: [{ path, text }] }`. */
export async function POST(request: Request) {
  return answerWithBody(request, (memory, input) => memory.importInstructions(input as unknown as ImportRequest));
}
