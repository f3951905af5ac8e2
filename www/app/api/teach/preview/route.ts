import { answerWithBody } from "@/lib/api";
import type { Taught } from "engram";

export const dynamic = "force-dynamic";

/** What an agent would be given for a taught memory; nothing is stored. */
export async function POST(request: Request) {
  return answerWithBody(request, (memory, input) => memory.previewTeach(input as unknown as Taught));
}
