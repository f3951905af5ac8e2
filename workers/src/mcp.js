// engram over the Model Context Protocol's streamable HTTP transport, at POST /mcp, for the
// tenant and project of the request (as every other route). The messages are read and
// answered by the wasm (`mcpMessage`, `engram.answerMcp`): the same request handling the
// CLI serves over stdio, so a tool or prompt added once is offered by both. This file is
// only the transport: stateless (each POST carries one JSON-RPC message and is answered
// with one JSON body, which the transport allows instead of an event stream, so any isolate
// serves any message and no session id is issued); GET (a server-to-client stream) is
// refused with 405, which the transport defines as "no stream here".

// As the other routes' bodies.
const MAX_BODY_BYTES = 256 * 1024;
const INVALID_REQUEST = -32600;

function jsonResponse(text, status = 200) {
  return new Response(text, { status, headers: { "content-type": "application/json" } });
}

// Serves one POST to /mcp. `open` resolves to the request's engram handle, opened only for
// messages that need the database (tool calls, prompts).
export async function serveMcp(request, open, { mcpMessage }) {
  if (request.method !== "POST") {
    return new Response(null, { status: 405, headers: { allow: "POST" } });
  }
  const text = await request.text();
  if (text.length > MAX_BODY_BYTES) {
    return jsonResponse(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: INVALID_REQUEST, message: `body is larger than ${MAX_BODY_BYTES} bytes` } }));
  }
  const first = mcpMessage(text);
  let reply = first.reply;
  if (first.needsEngram) {
    let engram;
    try {
      engram = await open();
    } catch (e) {
      // The tenant's database refused the token: an HTTP 401, so the client asks for another.
      const status = e?.code === "unauthorized" ? 401 : (e?.status ?? 500);
      return jsonResponse(JSON.stringify({ error: { code: e?.code ?? "internal", message: String(e?.message ?? e), violations: e?.violations ?? [] } }), status);
    }
    reply = await engram.answerMcp(text);
  }
  // A notification or a response to the server: accepted with nothing to say.
  return reply == null ? new Response(null, { status: 202 }) : jsonResponse(reply);
}
