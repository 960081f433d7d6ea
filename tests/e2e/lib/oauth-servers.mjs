// A small OAuth 2.1 authorization server and an MCP resource server that wants its tokens, each
// on its own 127.0.0.1 port (two origins, as in the wild), written for the login tests:
// RFC 9728 protected-resource metadata, RFC 8414 metadata with the `iss` response parameter,
// RFC 7591 registration, the code flow with PKCE S256 and RFC 8707 `resource`, refresh tokens,
// and the device flow (RFC 8628: a user code approved by a GET of its verification page).
// Everything it saw is counted, and expire() makes every access token it gave invalid.
import http from "node:http";
import crypto from "node:crypto";

const SCOPE = "tools:read";

function listen(handler) {
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      try {
        handler(req, res, body);
      } catch (e) {
        res.writeHead(500).end(String(e));
      }
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const json = (res, status, value, headers = {}) =>
  res.writeHead(status, { "Content-Type": "application/json", ...headers }).end(JSON.stringify(value));
const b64url = (buf) => buf.toString("base64url");

// `cimd`: the authorization server takes Client ID Metadata Documents (an https URL as the
// client id, no registration); counts.cimdClients counts the authorizations made that way.
// `preRegistered` ({id, secret, methods}): a confidential client known beforehand, which
// authenticates at the token endpoint by one of `methods` (client_secret_basic: the header over
// the form-encoded id and secret, RFC 6749 2.3.1; client_secret_post: body fields); a request
// with its id and anything else is refused as invalid_client (counts.badClients). Registration
// stays offered (counts.registrations shows whether it was used).
export async function startOAuthServers({ cimd = false, preRegistered = null } = {}) {
  const counts = { cimdClients: 0, registrations: 0, authorizations: 0, codeGrants: 0, refreshGrants: 0, refused: 0, calls: 0, deviceCodes: 0, deviceGrants: 0, pendingPolls: 0, basicClients: 0, postClients: 0, badClients: 0 };
  const devices = new Map(); // device_code -> {client_id, resource, user_code, approved}
  let pendingWaiters = []; // resolved at the next poll of a device code not yet approved
  const clients = new Map(); // client_id -> redirect_uris
  const codes = new Map(); // code -> {client_id, redirect_uri, challenge, resource, scope}
  const access = new Map(); // token -> {resource, client_id}
  const refresh = new Map(); // token -> {resource, client_id}
  let as, rs;
  const issuer = () => `http://127.0.0.1:${as.address().port}`;
  const resource = () => `http://127.0.0.1:${rs.address().port}/mcp`;
  const mint = (map, grant) => {
    const t = b64url(crypto.randomBytes(24));
    map.set(t, grant);
    return t;
  };
  const tokens = (grant) => ({
    access_token: mint(access, grant),
    refresh_token: mint(refresh, grant),
    token_type: "Bearer",
    expires_in: 3600,
    scope: SCOPE,
  });

  as = await listen((req, res, body) => {
    const url = new URL(req.url, issuer());
    if (req.method === "GET" && url.pathname === "/.well-known/oauth-authorization-server") {
      return json(res, 200, {
        issuer: issuer(),
        authorization_endpoint: `${issuer()}/authorize`,
        token_endpoint: `${issuer()}/token`,
        registration_endpoint: `${issuer()}/register`,
        device_authorization_endpoint: `${issuer()}/device`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: preRegistered ? preRegistered.methods : ["none"],
        scopes_supported: [SCOPE],
        authorization_response_iss_parameter_supported: true,
        ...(cimd ? { client_id_metadata_document_supported: true } : {}),
      });
    }
    if (req.method === "POST" && url.pathname === "/register") {
      const meta = JSON.parse(body);
            // Loopback redirects only, with a port or (RFC 8252: any port) without one.
      if (!Array.isArray(meta.redirect_uris) || !meta.redirect_uris.every((u) => /^http:\/\/127\.0\.0\.1[:/]/.test(u)))
        return json(res, 400, { error: "invalid_redirect_uri" });
      counts.registrations++;
      const id = `client-${counts.registrations}`;
      clients.set(id, meta.redirect_uris);
      return json(res, 201, { ...meta, client_id: id, token_endpoint_auth_method: "none" });
    }
    if (req.method === "GET" && url.pathname === "/authorize") {
      const q = Object.fromEntries(url.searchParams);
      // A metadata document's client: a real server fetches the document and checks the
      // redirect against it; this one takes any loopback redirect.
      const byDocument = cimd && /^https:\/\/[^/]+\/./.test(q.client_id ?? "") && /^http:\/\/127\.0\.0\.1[:/]/.test(q.redirect_uri ?? "");
      if (byDocument) counts.cimdClients++;
      const known = preRegistered && q.client_id === preRegistered.id && /^http:\/\/127\.0\.0\.1[:/]/.test(q.redirect_uri ?? "");
      const ok =
        (byDocument || known || clients.get(q.client_id)?.includes(q.redirect_uri)) &&
        q.response_type === "code" &&
        q.code_challenge_method === "S256" &&
        q.code_challenge &&
        q.state &&
        q.resource === resource();
      if (!ok) return json(res, 400, { error: "invalid_request", got: q });
      counts.authorizations++;
      const code = b64url(crypto.randomBytes(16));
      codes.set(code, { client_id: q.client_id, redirect_uri: q.redirect_uri, challenge: q.code_challenge, resource: q.resource });
      const back = new URL(q.redirect_uri);
      back.searchParams.set("code", code);
      back.searchParams.set("state", q.state);
      back.searchParams.set("iss", issuer());
      return res.writeHead(302, { Location: back.toString() }).end();
    }
    if (req.method === "POST" && url.pathname === "/device") {
      const f = Object.fromEntries(new URLSearchParams(body));
      if (!clients.has(f.client_id) || f.resource !== resource()) return json(res, 400, { error: "invalid_request" });
      counts.deviceCodes++;
      const device_code = b64url(crypto.randomBytes(16));
      const user_code = `CODE-${counts.deviceCodes}`;
      devices.set(device_code, { client_id: f.client_id, resource: f.resource, user_code, approved: false });
      return json(res, 200, {
        device_code,
        user_code,
        verification_uri: `${issuer()}/activate`,
        verification_uri_complete: `${issuer()}/activate?user_code=${user_code}`,
        expires_in: 60,
        interval: 1,
      });
    }
    if (req.method === "GET" && url.pathname === "/activate") {
      const d = [...devices.values()].find((x) => x.user_code === url.searchParams.get("user_code"));
      if (!d) return json(res, 404, { error: "unknown code" });
      d.approved = true;
      return res.writeHead(200, { "Content-Type": "text/plain" }).end("approved");
    }
    if (req.method === "POST" && url.pathname === "/token") {
      const f = Object.fromEntries(new URLSearchParams(body));
      if (preRegistered) {
        // The client's authentication: the Basic header (form-encoded id and secret), or fields.
        const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "")?.[1];
        const formDecode = (x) => decodeURIComponent(x.replace(/\+/g, " "));
        let id, secret, method;
        if (basic) {
          const pair = Buffer.from(basic, "base64").toString("utf8");
          const colon = pair.indexOf(":");
          [id, secret, method] = [formDecode(pair.slice(0, colon)), formDecode(pair.slice(colon + 1)), "client_secret_basic"];
        } else {
          [id, secret, method] = [f.client_id, f.client_secret, "client_secret_post"];
        }
        if (id === preRegistered.id) {
          if (secret !== preRegistered.secret || !preRegistered.methods.includes(method)) {
            counts.badClients++;
            return json(res, 401, { error: "invalid_client", error_description: "client authentication failed" });
          }
          if (method === "client_secret_basic") counts.basicClients++;
          else counts.postClients++;
          f.client_id = id;
        }
      }
      if (f.grant_type === "urn:ietf:params:oauth:grant-type:device_code") {
        const d = devices.get(f.device_code);
        if (!d || d.client_id !== f.client_id || d.resource !== f.resource) return json(res, 400, { error: "invalid_grant" });
        if (!d.approved) {
          counts.pendingPolls++;
          for (const w of pendingWaiters) w();
          pendingWaiters = [];
          return json(res, 400, { error: "authorization_pending" });
        }
        devices.delete(f.device_code);
        counts.deviceGrants++;
        return json(res, 200, tokens({ resource: d.resource, client_id: d.client_id }));
      }
      if (f.grant_type === "authorization_code") {
        const c = codes.get(f.code);
        codes.delete(f.code);
        const verified = c && b64url(crypto.createHash("sha256").update(f.code_verifier ?? "").digest()) === c.challenge;
        if (!verified || c.client_id !== f.client_id || c.redirect_uri !== f.redirect_uri || c.resource !== f.resource)
          return json(res, 400, { error: "invalid_grant" });
        counts.codeGrants++;
        return json(res, 200, tokens({ resource: c.resource, client_id: c.client_id }));
      }
      if (f.grant_type === "refresh_token") {
        const g = refresh.get(f.refresh_token);
        if (!g || g.client_id !== f.client_id || g.resource !== f.resource) return json(res, 400, { error: "invalid_grant" });
        refresh.delete(f.refresh_token);
        counts.refreshGrants++;
        return json(res, 200, tokens(g));
      }
      return json(res, 400, { error: "unsupported_grant_type" });
    }
    json(res, 404, { error: "not_found" });
  });

  // The MCP server: one tool, `secret`, for a valid token bound to this resource.
  rs = await listen((req, res, body) => {
    const url = new URL(req.url, resource());
    if (req.method === "GET" && url.pathname === "/.well-known/oauth-protected-resource/mcp") {
      return json(res, 200, { resource: resource(), authorization_servers: [issuer()], scopes_supported: [SCOPE] });
    }
    if (url.pathname !== "/mcp") return json(res, 404, { error: "not_found" });
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const grant = token && access.get(token);
    if (!grant || grant.resource !== resource()) {
      counts.refused++;
      return json(res, 401, { error: "invalid_token" }, {
        "WWW-Authenticate": `Bearer error="invalid_token", resource_metadata="http://127.0.0.1:${rs.address().port}/.well-known/oauth-protected-resource/mcp", scope="${SCOPE}"`,
      });
    }
    if (req.method === "GET") return res.writeHead(405).end();
    if (req.method === "DELETE") return res.writeHead(200).end();
    const msg = JSON.parse(body);
    if (msg.id === undefined) return res.writeHead(202).end();
    const reply = (result) => json(res, 200, { jsonrpc: "2.0", id: msg.id, result });
    if (msg.method === "initialize")
      return reply({ protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "oauth-e2e", version: "1.0.0" } });
    if (msg.method === "tools/list")
      return reply({ tools: [{ name: "secret", description: "The secret of the logged-in client", inputSchema: { type: "object", properties: {} } }] });
    if (msg.method === "tools/call") {
      counts.calls++;
      return reply({ content: [{ type: "text", text: `the secret of ${grant.client_id} is 4711` }] });
    }
    if (msg.method === "ping") return reply({});
    json(res, 200, { jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "Method not found" } });
  });

  return {
    counts,
    issuer: issuer(),
    resource: resource(),
    // Every access token given so far stops working (the refresh tokens still do).
    expire: () => access.clear(),
    // Resolves once a device code has been polled while not yet approved (at once if it was).
    pendingPoll: () => (counts.pendingPolls > 0 ? Promise.resolve() : new Promise((r) => pendingWaiters.push(r))),
    close: () => Promise.all([as, rs].map((s) => new Promise((r) => s.close(r)))),
  };
}
