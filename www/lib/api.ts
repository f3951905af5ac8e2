// Route handlers are thin: decode the request, make one engram call, answer JSON. An
// engram error keeps its code, message and fields, and its HTTP status.
import { engram } from "./engram";
import type { Engram } from "engram";

export interface ApiError {
  code: string;
  message: string;
  violations?: { field: string; problem: string }[];
}

function errorResponse(error: unknown): Response {
  const e = error as { code?: string; status?: number; message?: string; violations?: ApiError["violations"] };
  const body: ApiError = {
    code: e?.code ?? "internal",
    message: e?.message ?? String(error),
    violations: e?.violations,
  };
  return Response.json({ error: body }, { status: e?.status ?? 500 });
}

/** Runs `call` on the shared engram and answers its result as JSON. */
export async function answer<T>(call: (memory: Engram) => Promise<T> | T): Promise<Response> {
  try {
    const result = await call(await engram());
    return Response.json(result ?? null);
  } catch (error) {
    return errorResponse(error);
  }
}

/** The request's JSON body, or an `invalid_input` error naming it. */
export async function body(request: Request): Promise<Record<string, unknown>> {
  try {
    const value = await request.json();
    if (value && typeof value === "object" && !Array.isArray(value)) return value;
  } catch {
    // Falls through to the typed error below.
  }
  throw Object.assign(new Error("the request body must be a JSON object"), {
    code: "invalid_input",
    status: 400,
    violations: [{ field: "body", problem: "not a JSON object" }],
  });
}

/** `answer`, with the request's JSON body decoded first. */
export async function answerWithBody<T>(
  request: Request,
  call: (memory: Engram, input: Record<string, unknown>) => Promise<T> | T,
): Promise<Response> {
  try {
    const input = await body(request);
    return answer((memory) => call(memory, input));
  } catch (error) {
    return errorResponse(error);
  }
}
