import { answerWithBody } from "@/lib/api";
import type { ListRequest } from "engram";

export const dynamic = "force-dynamic";

/** One page of memories (`{ filter, sort, ascending, limit, cursor }` as `list` takes it)
 * and how many the filter matches in all. */
export async function POST(request: Request) {
  return answerWithBody(request, async (memory, input) => {
    const listing = input as ListRequest;
    const [page, total] = await Promise.all([memory.list(listing), memory.count(listing.filter)]);
    return { ...page, total };
  });
}
