// Proxies end to end: a small forward proxy on 127.0.0.1, written here, is the only way to the
// model and the MCP server (their host names exist nowhere else). HTTPS_PROXY tunnels TLS with
// CONNECT (with the proxy's credentials), HTTP_PROXY takes plain requests; the servers' TLS
// certificate is trusted through SSL_CERT_FILE. A proxy that refuses is named in the error the
// editor sees.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { withAgent, textOf } from "./lib/sdk-client.mjs";
import { e2eDir, tempDir, workspace } from "./lib/env.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { startChatModel, textOfContent } from "./lib/chat-model.mjs";
import { freePort, startServerProcess } from "./lib/server-process.mjs";

const everything = path.join(e2eDir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

// The headers a proxy passes on: the hop-by-hop ones (RFC 9110 7.6.1) are its own connection's.
// Passing the client's `Connection: close` upstream, as an earlier version of this proxy did, made
// the upstream server close a connection another request was already being sent on (an HTTP 400
// with no body, about one run in three).
const hopByHop = new Set(["connection", "proxy-connection", "keep-alive", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"]);
function endToEnd(headers) {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !hopByHop.has(k)));
}

// The proxy: every host is 127.0.0.1 and `ports` maps the port asked for to the real one.
// CONNECT is tunnelled when the credentials are right (407 otherwise); plain requests are
// forwarded. It logs "CONNECT host:port" and "METHOD absolute-url".
function startProxy(t, ports, { user = "u", password = "p w" } = {}) {
  const log = [];
  const expected = "Basic " + Buffer.from(`${user}:${password}`).toString("base64");
  const server = http.createServer((req, res) => {
    log.push(`${req.method} ${req.url}`);
    const url = new URL(req.url);
    const asked = url.port || "80";
    const up = http.request(
      { host: "127.0.0.1", port: ports[asked] ?? asked, method: req.method, path: url.pathname + url.search, headers: endToEnd(req.headers), agent: false },
      (r) => {
        res.writeHead(r.statusCode, endToEnd(r.headers));
        r.pipe(res);
      },
    );
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  server.on("connect", (req, socket, head) => {
    log.push(`CONNECT ${req.url}`);
    if (req.headers["proxy-authorization"] !== expected) {
      socket.end("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    const port = req.url.split(":").at(-1);
    const up = net.connect(ports[port] ?? port, "127.0.0.1", () => {
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on("error", () => socket.destroy());
    socket.on("error", () => up.destroy());
  });
  t.after(() => server.close());
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ port: server.address().port, log })));
}

// A certificate for the given names, made with the openssl command (null when there is none).
function makeCertificate(dir, names) {
  const key = path.join(dir, "key.pem");
  const cert = path.join(dir, "cert.pem");
  const r = spawnSync("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", `/CN=${names[0]}`,
    "-addext", `subjectAltName=${names.map((n) => `DNS:${n}`).join(",")}`,
    "-keyout", key, "-out", cert,
  ]);
  if (r.status !== 0) return null;
  return { key: fs.readFileSync(key), cert: fs.readFileSync(cert), certFile: cert };
}

// TLS in front of a plain HTTP server (the MCP server and the model speak HTTP themselves).
function tlsFront(t, tls, port) {
  const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const headers = { ...endToEnd(req.headers), host: `127.0.0.1:${port}` };
    const up = http.request({ host: "127.0.0.1", port, method: req.method, path: req.url, headers, agent: false }, (r) => {
      res.writeHead(r.statusCode, endToEnd(r.headers));
      r.pipe(res);
    });
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  t.after(() => server.close());
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));
}

test("a provider (HTTPS, CONNECT) and an MCP server (HTTP) reached only through a proxy", { timeout: 90000 }, async (t) => {
  const dir = tempDir(t, "lousho-proxy-");
  const tls = makeCertificate(dir, ["model.test", "mcp.test"]);
  if (!tls) return t.skip("no openssl command to make a certificate");
  // The model calls the MCP server's echo tool once, then answers.
  const echo = { name: "mcp__web__echo", arguments: JSON.stringify({ message: "through the proxy" }) };
  const model = await startChatModel(t, (json) =>
    json.messages.at(-1).role === "tool"
      ? [[{ content: "Done." }, "stop"]]
      : [[{ tool_calls: [{ index: 0, id: "call_1", type: "function", function: echo }] }], [{}, "tool_calls"]],
  );
  const mcpPort = await freePort();
  const mcp = await startServerProcess(process.execPath, [everything, "streamableHttp"], {
    env: { PORT: String(mcpPort) },
    ready: new RegExp(`(listening|running) on port ${mcpPort}$`),
    stream: "stderr",
  });
  t.after(() => mcp.stop());
  const modelTls = await tlsFront(t, tls, model.port);
  const mcpTls = await tlsFront(t, tls, mcpPort);
  // The names are asked for at port 443 (the model) and 8443 (MCP); the proxy knows the rest.
  const proxy = await startProxy(t, { 443: modelTls, 8443: mcpTls, 8080: mcpPort });
  const spec = writeAgentSpec(dir, {
    name: "proxied",
    model: "remote/m",
    tools: [],
    providers: { remote: { api: "openai-chat", baseUrl: "https://model.test/v1", apiKeyEnv: "REMOTE_KEY" } },
  });
  const env = {
    REMOTE_KEY: "k",
    HTTPS_PROXY: `http://u:p%20w@127.0.0.1:${proxy.port}`,
    HTTP_PROXY: `http://127.0.0.1:${proxy.port}`,
    SSL_CERT_FILE: tls.certFile,
  };
  await withAgent(t, { spec, env }, async (c) => {
    const sid = await c.newSession(workspace(t), [{ name: "web", type: "http", url: process.env.MCP_VIA_TLS ? "https://mcp.test:8443/mcp" : "http://mcp.test:8080/mcp", headers: [] }]);
    const { res, error, events } = await c.prompt(sid, "echo through the proxy");
    assert.equal(error, undefined, error?.message);
    assert.equal(res.stopReason, "end_turn");
    assert.equal(textOf(events, "agent_message_chunk"), "Done.");
    // The MCP server's tools, listed through the proxy, reached the model.
    const tools = model.requests[0].tools.map((x) => x.function.name);
    assert.ok(tools.includes("mcp__web__echo"), tools.join(","));
    // The call went through the proxy and its result came back to the model.
    const result = model.requests[1].messages.at(-1);
    assert.equal(result.role, "tool");
    assert.match(textOfContent(result.content), /Echo: through the proxy/);
  });
  assert.ok(proxy.log.includes("CONNECT model.test:443"), proxy.log.join("\n"));
  assert.ok(proxy.log.some((l) => l.startsWith("POST http://mcp.test:8080/mcp")), proxy.log.join("\n"));
  // Every request to the MCP server (discovery, handshake, list, call) went through the proxy.
  assert.ok(proxy.log.filter((l) => l.startsWith("POST http://mcp.test:8080/mcp")).length >= 4, proxy.log.join("\n"));
});

test("a proxy that refuses is named, and plain HTTP goes through HTTP_PROXY", { timeout: 60000 }, async (t) => {
  const model = await startChatModel(t, () => [[{ content: "plain" }, "stop"]]);
  const proxy = await startProxy(t, { 80: model.port });
  const spec = writeAgentSpec(tempDir(t, "lousho-proxy-plain-"), {
    name: "plain",
    model: "plainp/m",
    tools: [],
    providers: {
      plainp: { api: "openai-chat", baseUrl: "http://model.test/v1", apiKeyEnv: "K" },
      tunnel: { api: "openai-chat", baseUrl: "https://model.test/v1", apiKeyEnv: "K", maxRetries: 0 },
    },
  });
  // Wrong credentials for the CONNECT.
  const env = { K: "k", HTTP_PROXY: `http://127.0.0.1:${proxy.port}`, HTTPS_PROXY: `http://bad:creds@127.0.0.1:${proxy.port}` };
  await withAgent(t, { spec, env }, async (c) => {
    const sid = await c.newSession(workspace(t));
    const plain = await c.prompt(sid, "hi");
    assert.equal(textOf(plain.events, "agent_message_chunk"), "plain");
    assert.ok(proxy.log.includes(`POST http://model.test:80/v1/chat/completions`), proxy.log.join("\n"));
  });
  const refused = writeAgentSpec(tempDir(t, "lousho-proxy-refused-"), {
    name: "refused",
    model: "tunnel/m",
    tools: [],
    providers: { tunnel: { api: "openai-chat", baseUrl: "https://model.test/v1", apiKeyEnv: "K", maxRetries: 0 } },
  });
  await withAgent(t, { spec: refused, env }, async (c) => {
    const sid = await c.newSession(workspace(t));
    const { error, res, events } = await c.prompt(sid, "hi");
    const said = JSON.stringify({ error: error?.message, data: error?.data, res, events: events.map((e) => e.update) });
    assert.match(said, /the proxy http:\/\/127\.0\.0\.1:\d+ \(from HTTPS_PROXY\) refused the tunnel to model\.test with HTTP 407/);
    assert.doesNotMatch(said, /creds/, "the proxy's password is never shown");
  });
});

// The spec's `proxy:` in place of the environment: no proxy variable is set (and NO_PROXY says
// "everything direct", which the spec overrides), yet the provider (HTTPS, CONNECT with the
// spec URL's credentials), the MCP server and the fetch tool (plain HTTP) all go through it.
test("the spec's proxy setting: provider, MCP server and fetch through it, the environment ignored", { timeout: 90000 }, async (t) => {
  const dir = tempDir(t, "lousho-proxy-spec-");
  const tls = makeCertificate(dir, ["model.test"]);
  if (!tls) return t.skip("no openssl command to make a certificate");
  const model = await startChatModel(t, (body, n) =>
    n === 1
      ? [
          [{ tool_calls: [{ index: 0, id: "call_fetch", type: "function", function: { name: "fetch", arguments: JSON.stringify({ url: "http://page.test/doc.txt", format: "raw" }) } }] }],
          [{}, "tool_calls"],
        ]
      : [[{ content: "Done." }, "stop"]],
  );
  const page = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("the page behind the proxy\n");
  });
  t.after(() => page.close());
  const pagePort = await new Promise((resolve) => page.listen(0, "127.0.0.1", () => resolve(page.address().port)));
  const mcpPort = await freePort();
  const mcp = await startServerProcess(process.execPath, [everything, "streamableHttp"], {
    env: { PORT: String(mcpPort) },
    ready: new RegExp(`(listening|running) on port ${mcpPort}$`),
    stream: "stderr",
  });
  t.after(() => mcp.stop());
  const modelTls = await tlsFront(t, tls, model.port);
  const proxy = await startProxy(t, { 443: modelTls, 8080: mcpPort, 80: pagePort });
  const spec = writeAgentSpec(dir, {
    name: "spec-proxied",
    model: "remote/m",
    tools: ["fetch"],
    permissions: { fetch: "allow" },
    providers: { remote: { api: "openai-chat", baseUrl: "https://model.test/v1", apiKeyEnv: "REMOTE_KEY" } },
    mcp_servers: { web: { type: "http", url: "http://mcp.test:8080/mcp" } },
    proxy: { https: `http://u:p%20w@127.0.0.1:${proxy.port}`, http: `http://127.0.0.1:${proxy.port}`, noProxy: ["elsewhere.test"] },
  });
  const env = { REMOTE_KEY: "k", SSL_CERT_FILE: tls.certFile, NO_PROXY: "*", no_proxy: "*" };
  for (const name of ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]) env[name] = "";
  await withAgent(t, { spec, env }, async (c) => {
    const sid = await c.newSession(workspace(t));
    const { res, error, events } = await c.prompt(sid, "fetch the page through the spec's proxy");
    assert.equal(error, undefined, error?.message);
    assert.equal(res.stopReason, "end_turn");
    assert.equal(textOf(events, "agent_message_chunk"), "Done.");
    const tools = model.requests[0].tools.map((x) => x.function.name);
    assert.ok(tools.includes("mcp__web__echo"), tools.join(","));
    const result = model.requests[1].messages.find((m) => m.role === "tool");
    assert.match(JSON.stringify(result.content), /the page behind the proxy/);
    assert.doesNotMatch(JSON.stringify(events), /p%20w|p w/, "the proxy's password is never shown");
  });
  assert.ok(proxy.log.includes("CONNECT model.test:443"), proxy.log.join("\n"));
  assert.ok(proxy.log.some((l) => l.startsWith("POST http://mcp.test:8080/mcp")), proxy.log.join("\n"));
  assert.ok(proxy.log.includes("GET http://page.test:80/doc.txt"), proxy.log.join("\n"));
});
