// Which database and project a request may reach, from its bearer token.
//
// With the TENANTS secret set, the Worker is the one that authenticates: TENANTS is JSON,
// a list of `{ "tokenSha256": "<hex of the token's SHA-256>", "url": "libsql://…",
// "authToken": "…", "projects": ["web", "api"] }`. A token that matches no entry is
// `unauthorized`; a project (the `x-engram-project` header, else the tenant's first) that
// is not in its list is `forbidden` ("*" allows any). Tenants sharing one database then
// never reach each other's projects, and the config holds no bearer token in the clear.
//
// Without TENANTS the token is forwarded as the auth token of the database at LIBSQL_URL:
// the database authenticates, so each tenant must have its own database (its own token).

const parsed = new Map();

function rejection(code, message, field) {
  return Object.assign(new Error(message), { code, violations: field ? [{ field, problem: message }] : [] });
}

function tenantsOf(text) {
  let tenants = parsed.get(text);
  if (tenants) return tenants;
  let list;
  try {
    list = JSON.parse(text);
  } catch (e) {
    throw rejection("invalid_input", `TENANTS is not JSON: ${e.message}`, "TENANTS");
  }
  const valid = Array.isArray(list) && list.every((t) =>
    t && /^[0-9a-f]{64}$/.test(t.tokenSha256 ?? "") && typeof t.url === "string" &&
    Array.isArray(t.projects) && t.projects.length > 0 && t.projects.every((p) => typeof p === "string"));
  if (!valid) {
    throw rejection("invalid_input", "TENANTS must be a list of { tokenSha256 (64 hex), url, authToken, projects: [..] }", "TENANTS");
  }
  tenants = new Map(list.map((t) => [t.tokenSha256, t]));
  parsed.set(text, tenants);
  return tenants;
}

async function sha256Hex(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// `{ url, authToken, projectId }` for the request, or a rejection with its code.
export async function resolveTenant(env, token, projectHeader) {
  if (!env.TENANTS) {
    return { url: env.LIBSQL_URL, authToken: token, projectId: projectHeader ?? "default" };
  }
  const tenant = tenantsOf(env.TENANTS).get(await sha256Hex(token));
  if (!tenant) throw rejection("unauthorized", "unknown token");
  const first = tenant.projects[0];
  const projectId = projectHeader ?? (first === "*" ? "default" : first);
  if (!tenant.projects.includes("*") && !tenant.projects.includes(projectId)) {
    throw rejection("forbidden", `this token may not use project ${JSON.stringify(projectId)}`, "x-engram-project");
  }
  return { url: tenant.url, authToken: tenant.authToken ?? null, projectId };
}
