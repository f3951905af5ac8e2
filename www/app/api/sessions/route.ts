import { answer } from "@/lib/api";

export const dynamic = "force-dynamic";

/** The sessions seen last, latest first. */
export async function GET() {
  return answer((memory) => memory.recentSessions(50));
}
