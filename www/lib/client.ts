// The browser side's one way to reach the panel's routes: JSON in, JSON out, an engram
// error as an Error whose message says what was wrong.
export class PanelError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export async function call<T>(path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    headers: body === undefined ? undefined : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  const value = await response.json().catch(() => null);
  if (!response.ok) {
    const error = value?.error;
    const fields = (error?.violations ?? [])
      .map((v: { field: string; problem: string }) => `${v.field}: ${v.problem}`)
      .join("; ");
    throw new PanelError(
      `${error?.message ?? response.statusText}${fields ? ` (${fields})` : ""}`,
      error?.code ?? "internal",
    );
  }
  return value as T;
}

/** A memory type or source as people read it: `error_pattern` → `error pattern`. */
export function words(name: string): string {
  return name.replaceAll("_", " ");
}

/** An RFC 3339 time as a short local date and time. */
export function when(at: string | undefined): string {
  if (!at) return "";
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? at : date.toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" });
}
