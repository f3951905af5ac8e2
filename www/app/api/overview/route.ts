import { answer } from "@/lib/api";
import { openEngram } from "@/lib/engram";

export const dynamic = "force-dynamic";

/** The dashboard's data: health, the trust level, the review backlog and retired counts. */
export async function GET() {
  const { model, projectId } = await openEngram().catch(() => ({ model: null, projectId: "" }));
  return answer(async (memory) => {
    const [health, trust, needsReview, stale, superseded, pinned, retired] = await Promise.all([
      memory.health(),
      memory.trustLevel(),
      memory.count({ needsReview: true }),
      memory.count({ stale: true }),
      memory.count({ superseded: true, status: "all" }),
      memory.count({ pinned: true }),
      memory.count({ status: "retired" }),
    ]);
    return { health, trust, counts: { needsReview, stale, superseded, pinned, retired }, model, projectId };
  });
}
