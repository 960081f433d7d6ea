// A small MCP server of the stateless revision (2026-07-28) over streamable HTTP on 127.0.0.1,
// written for the tests: it answers server/discover, refuses the 2025 handshake and any request
// whose _meta does not name the revision, and offers one tool, `pick_color`, that asks the user
// through an `input_required` result (an elicitation form) before it answers. Its input schema
// uses JSON Schema 2020-12 ($defs, $ref, prefixItems), which must reach the model intact.
// Every request is kept in `requests` (its method, headers and params).
import http from "node:http";

export const REVISION = "2026-07-28";

export const PICK_SCHEMA = {
  type: "object",
  $defs: { shade: { type: "string", enum: ["light", "dark"] } },
  properties: {
    shade: { $ref: "#/$defs/shade" },
    point: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }], items: false },
  },
};

const QUESTION = {
  method: "elicitation/create",
  params: {
    mode: "form",
    message: "Which color?",
    requestedSchema: {
      type: "object",
      properties: { color: { type: "string", enum: ["red", "green"] } },
      required: ["color"],
    },
  },
};

export async function startStatelessServer() {
  const requests = [];
  const reply = (res, status, body) => {
    res.writeHead(status, { "Content-Type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const result = (msg, r) => ({ jsonrpc: "2.0", id: msg.id, result: { resultType: "complete", ...r } });
  const error = (msg, code, message) => ({ jsonrpc: "2.0", id: msg.id, error: { code, message } });

  const handle = (msg) => {
    const meta = msg.params?._meta ?? {};
    if (msg.method === "initialize") return [400, error(msg, -32601, "stateless server: no initialize")];
    if (meta["io.modelcontextprotocol/protocolVersion"] !== REVISION)
      return [400, error(msg, -32602, "the request's _meta names no protocol version")];
    if (msg.method === "server/discover")
      return [200, result(msg, { supportedVersions: [REVISION], capabilities: { tools: {} }, serverInfo: { name: "stateless-e2e", version: "1.0.0" }, ttlMs: 0, cacheScope: "public" })];
    if (msg.method === "tools/list")
      return [200, result(msg, { tools: [{ name: "pick_color", description: "Asks the user for a color.", inputSchema: PICK_SCHEMA }], ttlMs: 0, cacheScope: "public" })];
    if (msg.method === "tools/call" && msg.params?.name === "pick_color") {
      const answer = msg.params.inputResponses?.color;
      if (!answer) return [200, { jsonrpc: "2.0", id: msg.id, result: { resultType: "input_required", inputRequests: { color: QUESTION }, requestState: "asked-once" } }];
      if (msg.params.requestState !== "asked-once") return [200, result(msg, { content: [{ type: "text", text: "lost state" }], isError: true })];
      const text = answer.action === "accept" ? `the user picked ${answer.content?.color}` : `the user did not answer (${answer.action})`;
      return [200, result(msg, { content: [{ type: "text", text }] })];
    }
    return [200, error(msg, -32601, `no method ${msg.method}`)];
  };

  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      if (req.method !== "POST") return reply(res, 405, {});
      let msg;
      try {
        msg = JSON.parse(body);
      } catch {
        return reply(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
      }
      requests.push({ method: msg.method, headers: req.headers, params: msg.params });
      if (msg.id === undefined) {
        res.writeHead(202);
        return res.end();
      }
      const [status, answer] = handle(msg);
      reply(res, status, answer);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}/mcp`;
  return {
    url,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
