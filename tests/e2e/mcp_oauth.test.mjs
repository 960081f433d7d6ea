// OAuth for HTTP MCP servers: an MCP server behind a small authorization server (both written for
// the test, lib/oauth-servers.mjs) is logged in to through ACP elicitation in URL mode: the
// official SDK client advertises it and follows the URL like a browser (GET the authorization
// page, follow its redirect to lousho's 127.0.0.1 listener). The model (aimock) then calls the
// server's tool. A new lousho process uses the stored token without a login; once the
// authorization server has let every access token expire, the refresh token gets a new one.
// Every line the binary writes is validated against the ACP schema.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { acp } from "./lib/sdk-client.mjs";
import { startAgent, finishAgent } from "./lib/agent-process.mjs";
import { spawn } from "node:child_process";
import { childEnv, loushoBin, tempDir, workspace } from "./lib/env.mjs";
import { useAimock } from "./lib/aimock.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { startOAuthServers } from "./lib/oauth-servers.mjs";

const mock = useAimock("oauth.json");

// Follows a login URL as a browser would: the authorization page redirects to lousho's loopback
// listener, whose page must say the login is done.
// `lousho ARGS` with its own config folder (where tokens are kept), killed when test `t` ends;
// `onStderr` sees stderr as it grows. Resolves to {code, out, err}.
function runLousho(t, config, args, onStderr, env = {}) {
  return new Promise((resolve) => {
    const p = spawn(loushoBin, args, { env: childEnv({ XDG_CONFIG_HOME: config, ...env }) });
    t.after(() => p.exitCode === null && p.kill("SIGKILL"));
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => {
      err += d;
      onStderr?.(err);
    });
    p.on("close", (code) => resolve({ code, out, err }));
  });
}

async function browse(url) {
  const page = await fetch(url, { redirect: "manual" });
  assert.equal(page.status, 302, `the authorization page: ${await page.text()}`);
  const back = page.headers.get("location");
  assert.match(back, /^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
  const done = await fetch(back);
  assert.equal(done.status, 200);
  assert.match(await done.text(), /logged in/);
}

// A client with elicitation URL mode that follows each login URL it is sent; `body` gets
// {asked, updates, newSession, prompt, loggedIn}.
async function withLoginClient(agent, body) {
  const asked = [];
  const updates = [];
  const waiters = new Set();
  const app = acp
    .client({ name: "lousho-e2e" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
      for (const w of [...waiters]) w(params);
    })
    .onNotification(acp.methods.client.elicitation.complete, () => {})
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const opt = params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: opt.optionId } };
    })
    .onRequest(acp.methods.client.elicitation.create, async ({ params }) => {
      asked.push(params);
      assert.equal(params.mode, "url");
      await browse(params.url);
      return { action: "accept" };
    });
  return app.connectWith(agent.sdkStream(acp), async (ctx) => {
    await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, elicitation: { url: {} } },
      clientInfo: { name: "lousho-e2e", version: "0.0.0" },
    });
    const api = {
      asked,
      updates,
      newSession: async (cwd, mcpServers) => (await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers })).sessionId,
      prompt: (sessionId, text) => ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] }),
      // The session's message saying the login to `server` ended (resolves with its text).
      loggedIn: (sessionId, server) =>
        new Promise((resolve) => {
          const ended = new RegExp(`[Ll]og(ged)? in to the MCP server '${server}'`);
          const match = (p) =>
            p.sessionId === sessionId &&
            p.update.sessionUpdate === "agent_message_chunk" &&
            ended.test(p.update.content?.text ?? "");
          const seen = updates.find(match);
          if (seen) return resolve(seen.update.content.text);
          const w = (p) => {
            if (!match(p)) return;
            waiters.delete(w);
            resolve(p.update.content.text);
          };
          waiters.add(w);
        }),
    };
    return body(api);
  });
}

// The tool results the model was sent since journal length `mark`.
async function toolResults(mark) {
  return (await mock.journal())
    .slice(mark)
    .flatMap((e) => e.body?.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

test("an OAuth-protected MCP server: login through elicitation URL mode, restart, refresh", { timeout: 120000 }, async (t) => {
  const servers = await startOAuthServers();
  t.after(() => servers.close());
  const ws = workspace(t);
  const config = tempDir(t, "lousho-oauth-config-");
  const spec = writeAgentSpec(tempDir(t, "lousho-oauth-"), {
    name: "oauth-e2e",
    model: "openai/gpt-4o-mini",
    instructions: "You are a test agent.",
    tools: ["read"],
    maxSteps: 3,
  });
  const mcpServers = [{ name: "secure", type: "http", url: servers.resource, headers: [] }];
  const env = { ...mock.openaiEnv(), XDG_CONFIG_HOME: config };
  const start = () => startAgent(t, { spec, cwd: ws, env });

  // Login, then a tool call.
  let agent = start();
  await withLoginClient(agent, async (c) => {
    const sid = await c.newSession(ws, mcpServers);
    const said = await c.loggedIn(sid, "secure");
    assert.match(said, /Logged in to the MCP server 'secure': 1 tool\(s\) ready/);
    assert.equal(c.asked.length, 1);
    assert.equal(c.asked[0].sessionId, sid);
    assert.match(c.asked[0].url, new RegExp(`^${servers.issuer}/authorize\\?`));
    const url = new URL(c.asked[0].url);
    assert.equal(url.searchParams.get("code_challenge_method"), "S256");
    assert.equal(url.searchParams.get("resource"), servers.resource);
    assert.equal(url.searchParams.get("scope"), "tools:read");
    const mark = (await mock.journal()).length;
    const res = await c.prompt(sid, "oauth secret please");
    assert.equal(res.stopReason, "end_turn");
    assert.match((await toolResults(mark)).join("\n"), /the secret of client-1 is 4711/);
  });
  await finishAgent(agent);
  assert.deepEqual(
    { registrations: servers.counts.registrations, authorizations: servers.counts.authorizations, codeGrants: servers.counts.codeGrants },
    { registrations: 1, authorizations: 1, codeGrants: 1 },
  );

  // The token file: private to its owner, and holding no more than one server's tokens.
  const dir = path.join(config, "lousho", "mcp-auth");
  const files = fs.readdirSync(dir);
  assert.equal(files.length, 1);
  assert.equal(fs.statSync(path.join(dir, files[0])).mode & 0o777, 0o600);

  // A new process: the stored token, no login.
  agent = start();
  await withLoginClient(agent, async (c) => {
    const sid = await c.newSession(ws, mcpServers);
    const mark = (await mock.journal()).length;
    const res = await c.prompt(sid, "oauth secret please");
    assert.equal(res.stopReason, "end_turn");
    assert.match((await toolResults(mark)).join("\n"), /the secret of client-1 is 4711/);
    assert.equal(c.asked.length, 0);

    // Every access token expires: the next request is refused, the refresh token gets a new one
    // and the call goes through, still without a login.
    servers.expire();
    const sid2 = await c.newSession(ws, mcpServers);
    const mark2 = (await mock.journal()).length;
    const res2 = await c.prompt(sid2, "oauth secret please");
    assert.equal(res2.stopReason, "end_turn");
    assert.match((await toolResults(mark2)).join("\n"), /the secret of client-1 is 4711/);
    assert.equal(c.asked.length, 0);
  });
  await finishAgent(agent);
  assert.equal(servers.counts.authorizations, 1);
  assert.equal(servers.counts.refreshGrants, 1);
  assert.ok(servers.counts.refused >= 2, "the server refused the missing and the expired token");
});

// `lousho mcp login <url>` in a terminal prints the URL and waits for the browser's redirect;
// `mcp list` then connects with the stored token, and `mcp logout` forgets it.
test("lousho mcp login, list and logout in a terminal", { timeout: 60000 }, async (t) => {
  const servers = await startOAuthServers();
  t.after(() => servers.close());
  const config = tempDir(t, "lousho-oauth-cli-");
  const run = (args, onStderr) => runLousho(t, config, args, onStderr);
  let browsed;
  const login = await run(["mcp", "login", servers.resource], (err) => {
    const url = /(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)/.exec(err)?.[1];
    if (url && !browsed) browsed = browse(url);
  });
  await browsed;
  assert.equal(login.code, 0, login.err);
  assert.match(login.out, /^Logged in to http:\/\/127\.0\.0\.1:\d+\/mcp; the token is kept in .*mcp-auth/);
  const list = await run(["mcp", "list", servers.resource]);
  assert.equal(list.code, 0, list.err);
  assert.match(list.out, /connected .* 1 tool\(s\)\n\s+secret/);
  const logout = await run(["mcp", "logout", servers.resource]);
  assert.match(logout.out, /^Logged out of /);
  const after = await run(["mcp", "list", servers.resource]);
  assert.equal(after.code, 1);
  assert.match(after.out, /needs you to log in .* `lousho mcp login server`/);
  assert.equal(servers.counts.authorizations, 1);
});

// The device flow (RFC 8628) of `lousho mcp login --device`: lousho shows the verification page
// and the code, polls the token endpoint while the user has not approved it yet, and keeps the
// token it then gets; `mcp list` uses it.
test("lousho mcp login --device: the device code flow", { timeout: 60000 }, async (t) => {
  const servers = await startOAuthServers();
  t.after(() => servers.close());
  const config = tempDir(t, "lousho-oauth-device-");
  const run = (args, onStderr) => runLousho(t, config, args, onStderr);
  let approved;
  const login = await run(["mcp", "login", servers.resource, "--device"], (err) => {
    const m = /Open (http:\/\/127\.0\.0\.1:\d+\/activate\S*) in a browser and enter the code (\S+)/.exec(err);
    if (m && !approved) {
      assert.match(m[1], new RegExp(`user_code=${m[2]}$`));
      // The user approves only once lousho has polled at least once and heard "pending".
      approved = (async () => {
        await servers.pendingPoll();
        const page = await fetch(m[1]);
        assert.equal(page.status, 200);
      })();
    }
  });
  await approved;
  assert.equal(login.code, 0, login.err);
  assert.match(login.out, /^Logged in to http:\/\/127\.0\.0\.1:\d+\/mcp/);
  assert.deepEqual(
    { deviceCodes: servers.counts.deviceCodes, deviceGrants: servers.counts.deviceGrants, authorizations: servers.counts.authorizations },
    { deviceCodes: 1, deviceGrants: 1, authorizations: 0 },
  );
  assert.ok(servers.counts.pendingPolls >= 1);
  const list = await run(["mcp", "list", servers.resource]);
  assert.equal(list.code, 0, list.err);
  assert.match(list.out, /connected .* 1 tool\(s\)/);
});

// A Client ID Metadata Document from the spec (`mcp.clientMetadataUrl`): where the authorization
// server supports them, `lousho mcp login <name>` is known by that URL and registers nothing.
test("lousho mcp login: the spec's Client ID Metadata Document instead of a registration", { timeout: 60000 }, async (t) => {
  const servers = await startOAuthServers({ cimd: true });
  t.after(() => servers.close());
  const config = tempDir(t, "lousho-oauth-cimd-");
  const CIMD = "https://lousho.example/oauth/client.json";
  const spec = writeAgentSpec(tempDir(t, "lousho-oauth-cimd-spec-"), {
    name: "cimd",
    model: "script/echo",
    mcp: { clientMetadataUrl: CIMD },
    mcp_servers: { secret: { url: servers.resource } },
  });
  let authorizeUrl;
  let browsed;
  const login = await runLousho(t, config, ["mcp", "login", "secret", "--spec", spec], (err) => {
    const url = /(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)/.exec(err)?.[1];
    if (url && !browsed) {
      authorizeUrl = new URL(url);
      browsed = browse(url);
    }
  });
  await browsed;
  assert.equal(login.code, 0, login.err);
  assert.equal(authorizeUrl.searchParams.get("client_id"), CIMD);
  assert.deepEqual({ registrations: servers.counts.registrations, cimdClients: servers.counts.cimdClients }, { registrations: 0, cimdClients: 1 });
});

// A client registered beforehand (a server's `oauth:` in the spec, its secret from the
// environment): `lousho mcp login <name>` registers nothing and authenticates at the token
// endpoint with client_secret_basic; the stored tokens do not hold the secret, and `mcp call`
// in a new process uses them. A wrong secret fails with a message naming the server, never the
// secret.
test("lousho mcp login: a pre-registered OAuth client (clientId, clientSecretEnv)", { timeout: 60000 }, async (t) => {
  const SECRET = "s3cret: &/+%";
  const servers = await startOAuthServers({ preRegistered: { id: "lousho app", secret: SECRET, methods: ["client_secret_post", "client_secret_basic"] } });
  t.after(() => servers.close());
  const config = tempDir(t, "lousho-oauth-prereg-");
  const spec = writeAgentSpec(tempDir(t, "lousho-oauth-prereg-spec-"), {
    name: "prereg",
    model: "script/echo",
    mcp_servers: { secret: { url: servers.resource, oauth: { clientId: "lousho app", clientSecretEnv: "E2E_MCP_CLIENT_SECRET" } } },
  });
  const login = async (secret) => {
    let authorizeUrl;
    let browsed;
    const r = await runLousho(t, config, ["mcp", "login", "secret", "--spec", spec], (err) => {
      const url = /(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)/.exec(err)?.[1];
      if (url && !browsed) {
        authorizeUrl = new URL(url);
        browsed = browse(url);
      }
    }, { E2E_MCP_CLIENT_SECRET: secret });
    await browsed;
    return { ...r, authorizeUrl };
  };

  // The wrong secret: refused at the token endpoint, and said so naming the server.
  const wrong = await login("not-the-secret");
  assert.notEqual(wrong.code, 0);
  assert.match(wrong.err, /MCP server 'secret'.*did not accept the client 'lousho app'.*invalid_client/);
  assert.doesNotMatch(wrong.err + wrong.out, /not-the-secret/);
  assert.equal(servers.counts.badClients, 1);

  const ok = await login(SECRET);
  assert.equal(ok.code, 0, ok.err);
  assert.equal(ok.authorizeUrl.searchParams.get("client_id"), "lousho app");
  assert.deepEqual(
    { registrations: servers.counts.registrations, basicClients: servers.counts.basicClients, postClients: servers.counts.postClients, codeGrants: servers.counts.codeGrants },
    { registrations: 0, basicClients: 1, postClients: 0, codeGrants: 1 },
  );
  assert.doesNotMatch(ok.err + ok.out, /s3cret/);
  // The token file holds the tokens, not the secret.
  const dir = path.join(config, "lousho", "mcp-auth");
  const stored = fs.readdirSync(dir).map((f) => fs.readFileSync(path.join(dir, f), "utf8")).join("\n");
  assert.match(stored, /lousho app/);
  assert.doesNotMatch(stored, /s3cret/);

  // A new process calls the tool with the stored token; once it expired, the refresh
  // authenticates with the secret from the environment again.
  const call = await runLousho(t, config, ["mcp", "call", spec, "secret", "secret"], undefined, { E2E_MCP_CLIENT_SECRET: SECRET });
  assert.equal(call.code, 0, call.err);
  assert.match(call.out, /the secret of lousho app is 4711/);
  servers.expire();
  const again = await runLousho(t, config, ["mcp", "call", spec, "secret", "secret"], undefined, { E2E_MCP_CLIENT_SECRET: SECRET });
  assert.equal(again.code, 0, again.err);
  assert.match(again.out, /the secret of lousho app is 4711/);
  assert.deepEqual({ refreshGrants: servers.counts.refreshGrants, basicClients: servers.counts.basicClients, registrations: servers.counts.registrations }, { refreshGrants: 1, basicClients: 2, registrations: 0 });
});

// ACP's mcpServers carry no OAuth client: an editor's HTTP server at the URL of a spec server
// with `oauth` logs in (elicitation URL mode) as that pre-registered client, with its secret from
// the spec (`${VAR}`), and registers nothing.
test("ACP: the editor's server uses the spec's pre-registered client for its URL", { timeout: 120000 }, async (t) => {
  const SECRET = "editor+secret/1";
  const servers = await startOAuthServers({ preRegistered: { id: "lousho-acp", secret: SECRET, methods: ["client_secret_basic"] } });
  t.after(() => servers.close());
  const ws = workspace(t);
  const config = tempDir(t, "lousho-oauth-prereg-acp-");
  const spec = writeAgentSpec(tempDir(t, "lousho-oauth-prereg-acp-spec-"), {
    name: "oauth-prereg-acp",
    model: "openai/gpt-4o-mini",
    instructions: "You are a test agent.",
    tools: ["read"],
    maxSteps: 3,
    // The editor's server of the same name replaces this one, and takes its client (by URL).
    mcp_servers: { secure: { url: servers.resource, oauth: { clientId: "lousho-acp", clientSecret: "${E2E_ACP_SECRET}" } } },
  });
  const env = { ...mock.openaiEnv(), XDG_CONFIG_HOME: config, E2E_ACP_SECRET: SECRET };
  const agent = startAgent(t, { spec, cwd: ws, env });
  await withLoginClient(agent, async (c) => {
    const sid = await c.newSession(ws, [{ name: "secure", type: "http", url: servers.resource, headers: [] }]);
    const said = await c.loggedIn(sid, "secure");
    assert.match(said, /Logged in to the MCP server 'secure': 1 tool\(s\) ready/);
    assert.equal(c.asked.length, 1);
    assert.equal(new URL(c.asked[0].url).searchParams.get("client_id"), "lousho-acp");
    const mark = (await mock.journal()).length;
    const res = await c.prompt(sid, "oauth secret please");
    assert.equal(res.stopReason, "end_turn");
    assert.match((await toolResults(mark)).join("\n"), /the secret of lousho-acp is 4711/);
  });
  await finishAgent(agent);
  assert.deepEqual(
    { registrations: servers.counts.registrations, basicClients: servers.counts.basicClients, badClients: servers.counts.badClients },
    { registrations: 0, basicClients: 1, badClients: 0 },
  );
});
