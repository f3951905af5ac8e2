import { answerWithBody } from "@/lib/api";
import type { Taught } from "engram";

export const dynamic = "force-dynamic";

/** Stores a person's memory. */
export async function POST(request: Request) {
  return answerWithBody(request, (memory, input) => memory.teach(input as unknown as Taught));
}
