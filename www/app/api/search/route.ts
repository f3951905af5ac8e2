import { answerWithBody } from "@/lib/api";
import type { SearchQuery } from "engram";

export const dynamic = "force-dynamic";

/** A search through the full pipeline, each hit with its score breakdown. */
export async function POST(request: Request) {
  return answerWithBody(request, (memory, input) => memory.search(input as unknown as SearchQuery));
}
