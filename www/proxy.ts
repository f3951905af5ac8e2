// When the panel listens beyond loopback (`engram ui --listen …`), every request must carry
// its token: `?token=…` once (which sets a cookie and drops the token from the address),
// then the cookie. On loopback, without ENGRAM_PANEL_TOKEN, nothing is asked.
import { NextResponse, type NextRequest } from "next/server";

const COOKIE = "engram_panel";

/** Compares two strings in time that depends only on their lengths. */
function same(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

export function proxy(request: NextRequest) {
  const token = process.env.ENGRAM_PANEL_TOKEN;
  if (!token) return NextResponse.next();
  const given = request.nextUrl.searchParams.get("token");
  if (given !== null && same(given, token)) {
    const clean = request.nextUrl.clone();
    clean.searchParams.delete("token");
    const response = NextResponse.redirect(clean);
    response.cookies.set(COOKIE, token, { httpOnly: true, sameSite: "strict", path: "/" });
    return response;
  }
  const cookie = request.cookies.get(COOKIE)?.value;
  if (cookie !== undefined && same(cookie, token)) return NextResponse.next();
  return new NextResponse("This engram panel needs its token: open the address `engram ui` printed.", {
    status: 401,
    headers: { "content-type": "text/plain; charset=utf-8" },
  });
}

export const config = { matcher: "/((?!_next/static|_next/image|favicon.ico).*)" };
