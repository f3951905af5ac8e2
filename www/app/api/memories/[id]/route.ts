import { answer, answerWithBody } from "@/lib/api";
import type { Engram, Memory, MemoryUpdate } from "engram";

export const dynamic = "force-dynamic";

type Context = { params: Promise<{ id: string }> };

/** A memory with its history and the instruction lines that state it. */
async function detail(memory: Engram, found: Memory) {
  const [history, origins] = await Promise.all([memory.history(found.id), memory.origins(found.id)]);
  return { memory: found, history, origins };
}

/** A memory in any state, with its history and the instruction lines that state it. */
export async function GET(_request: Request, { params }: Context) {
  const { id } = await params;
  return answer(async (memory) => {
    const found = await memory.getAny(id);
    if (!found) {
      throw Object.assign(new Error(`no memory ${id}`), { code: "not_found", status: 404 });
    }
    return detail(memory, found);
  });
}

/** What a person does to a memory: `{ action, … }`. */
const actions: Record<string, (memory: Engram, id: string, input: Record<string, unknown>) => Promise<unknown>> = {
  confirm: (memory, id) => memory.confirm(id),
  flag: (memory, id, input) => memory.flagWrong(id, typeof input.reason === "string" ? input.reason : null),
  pin: (memory, id) => memory.pin(id, true),
  unpin: (memory, id) => memory.pin(id, false),
  forget: (memory, id) => memory.forget(id),
  restore: (memory, id) => memory.restore(id),
  // A person's edit is a correction: the memory becomes user-verified.
  edit: (memory, id, input) => memory.update(id, (input.update ?? {}) as MemoryUpdate, true),
};

export async function POST(request: Request, { params }: Context) {
  const { id } = await params;
  return answerWithBody(request, async (memory, input) => {
    const action = actions[String(input.action)];
    if (!action) {
      throw Object.assign(new Error(`unknown action ${JSON.stringify(input.action)}`), {
        code: "invalid_input",
        status: 400,
        violations: [{ field: "action", problem: `one of ${Object.keys(actions).join(", ")}` }],
      });
    }
    await action(memory, id, input);
    const after = await memory.getAny(id);
    if (!after) throw Object.assign(new Error(`no memory ${id}`), { code: "not_found", status: 404 });
    return detail(memory, after);
  });
}
