// engram over the Model Context Protocol's streamable HTTP transport, at POST /mcp: the
// tools search_memory, record_memory and analyze_impact, and the prompt session_context,
// for the tenant and project of the request (as every other route). Stateless: each POST
// carries one JSON-RPC message and a request is answered with one JSON body (the transport
// allows that instead of an event stream), so any isolate can serve any message and no
// session id is issued. GET (a server-to-client stream) is refused with 405, which the
// transport defines as "no stream here".

// Newest first; a client asking for another version is offered the newest.
const PROTOCOL_VERSIONS = ["2025-06-18", "2025-03-26", "2024-11-05"];

// JSON-RPC error codes.
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

// As the other routes' bodies.
const MAX_BODY_BYTES = 256 * 1024;

function jsonResponse(body, status = 200) {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

function rpcError(id, code, message) {
  return jsonResponse({ jsonrpc: "2.0", id: id ?? null, error: { code, message } });
}

function paramsObject(params) {
  return params && typeof params === "object" && !Array.isArray(params) ? params : {};
}

// The answer to one request: its result, or throws `{ rpcCode, message }`.
async function answer(message, open, { toolDefinitions, promptDefinitions, serverInstructions }) {
  const params = paramsObject(message.params);
  switch (message.method) {
    case "initialize": {
      const asked = params.protocolVersion;
      return {
        protocolVersion: PROTOCOL_VERSIONS.includes(asked) ? asked : PROTOCOL_VERSIONS[0],
        capabilities: { tools: {}, prompts: {} },
        serverInfo: { name: "engram", version: "0.1.0" },
        instructions: serverInstructions(),
      };
    }
    case "ping":
      return {};
    case "tools/list":
      return { tools: toolDefinitions("mcp") };
    case "prompts/list":
      return { prompts: promptDefinitions() };
    case "tools/call": {
      const engram = await open();
      try {
        const output = await engram.callTool(String(params.name ?? ""), params.arguments ?? {});
        return { content: [{ type: "text", text: output.text }], isError: false };
      } catch (e) {
        // The model should read why its call failed, so a failure is a tool result marked
        // as an error, not a protocol error.
        return { content: [{ type: "text", text: `engram: ${e?.message ?? e}` }], isError: true };
      }
    }
    case "prompts/get": {
      const engram = await open();
      try {
        const output = await engram.getPrompt(String(params.name ?? ""), params.arguments ?? {});
        return { description: output.description, messages: [{ role: "user", content: { type: "text", text: output.text } }] };
      } catch (e) {
        // A person picked the prompt: a bad argument is the request's fault.
        if (e?.code === "invalid_input") throw { rpcCode: INVALID_PARAMS, message: `engram: ${e.message}` };
        throw e;
      }
    }
    default:
      throw { rpcCode: METHOD_NOT_FOUND, message: `method ${JSON.stringify(message.method)} is not offered` };
  }
}

// Serves one POST to /mcp. `open` resolves to the request's engram handle (opened only for
// calls that need the database); the definitions and instructions come from the npm
// package.
export async function serveMcp(request, open, engram) {
  if (request.method !== "POST") {
    return new Response(null, { status: 405, headers: { allow: "POST" } });
  }
  const text = await request.text();
  if (text.length > MAX_BODY_BYTES) {
    return rpcError(null, INVALID_REQUEST, `body is larger than ${MAX_BODY_BYTES} bytes`);
  }
  let message;
  try {
    message = JSON.parse(text);
  } catch (e) {
    return rpcError(null, PARSE_ERROR, `malformed JSON: ${e.message}`);
  }
  if (Array.isArray(message)) {
    return rpcError(null, INVALID_REQUEST, "send one JSON-RPC message per request (batches are not supported)");
  }
  if (!message || typeof message !== "object" || message.jsonrpc !== "2.0") {
    return rpcError(message?.id, INVALID_REQUEST, "expected a JSON-RPC 2.0 message");
  }
  // A notification (no id: `notifications/initialized`, a cancellation) or a response to
  // the server: accepted with nothing to say.
  if (message.id === undefined || message.method === undefined) {
    return new Response(null, { status: 202 });
  }
  try {
    const result = await answer(message, open, engram);
    return jsonResponse({ jsonrpc: "2.0", id: message.id, result });
  } catch (e) {
    if (typeof e?.rpcCode === "number") return rpcError(message.id, e.rpcCode, e.message);
    // The tenant's database refused the token: an HTTP 401, so the client asks for another.
    if (e?.code === "unauthorized") {
      return jsonResponse({ error: { code: "unauthorized", message: e.message, violations: [] } }, 401);
    }
    return rpcError(message.id, INTERNAL_ERROR, `engram: ${e?.message ?? e}`);
  }
}
