import { answer } from "@/lib/api";

export const dynamic = "force-dynamic";

/** What a change to `?target=` (a file, or a symbol) impacts, with the memories attached. */
export async function GET(request: Request) {
  const target = new URL(request.url).searchParams.get("target") ?? "";
  return answer((memory) => memory.analyzeImpact(target, 3));
}
