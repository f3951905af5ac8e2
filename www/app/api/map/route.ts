import { answer } from "@/lib/api";

export const dynamic = "force-dynamic";

/** The module map: `?folder=src/&limit=80`. */
export async function GET(request: Request) {
  const query = new URL(request.url).searchParams;
  const limit = query.get("limit");
  return answer((memory) =>
    memory.moduleMap({
      folder: query.get("folder") || undefined,
      limit: limit ? Number(limit) : undefined,
    }),
  );
}
