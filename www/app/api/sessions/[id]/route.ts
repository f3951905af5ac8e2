import { answer } from "@/lib/api";

export const dynamic = "force-dynamic";

/** One session's review. */
export async function GET(_request: Request, { params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return answer((memory) => memory.sessionReview(id));
}
