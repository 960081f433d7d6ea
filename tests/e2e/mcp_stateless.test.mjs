// An MCP server of the stateless revision (2026-07-28, lib/mcp-stateless-server.mjs) in an ACP
// session: lousho discovers it (no initialize, no session), names each request in the standard
// headers and its _meta, passes the tool's JSON Schema 2020-12 input schema to the model intact,
// and answers the tool's `input_required` result through the editor: the official ACP SDK
// client gets an elicitation form and its answer reaches the server on the retried call. A
// client without forms makes lousho decline. Every line the binary writes is validated against
// the ACP schema.
import test from "node:test";
import assert from "node:assert/strict";
import { acp } from "./lib/sdk-client.mjs";
import { startAgent, finishAgent } from "./lib/agent-process.mjs";
import { tempDir, workspace } from "./lib/env.mjs";
import { useAimock } from "./lib/aimock.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { startStatelessServer, PICK_SCHEMA, REVISION } from "./lib/mcp-stateless-server.mjs";

const mock = useAimock("mcp_stateless.json");

async function withClient(agent, clientCapabilities, answer, body) {
  const asked = [];
  const app = acp
    .client({ name: "lousho-e2e" })
    .onNotification(acp.methods.client.session.update, () => {})
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const opt = params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: opt.optionId } };
    })
    .onRequest(acp.methods.client.elicitation.create, ({ params }) => {
      asked.push(params);
      return answer(params);
    });
  return app.connectWith(agent.sdkStream(acp), async (ctx) => {
    await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities,
      clientInfo: { name: "lousho-e2e", version: "0.0.0" },
    });
    const prompt = async (cwd, mcpServers, text) => {
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers });
      return ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
    };
    return body({ asked, prompt });
  });
}

// The tool results and tool definitions of the chat requests since journal length `mark`.
async function sent(mark) {
  const reqs = (await mock.journal()).slice(mark).filter((e) => e.path === "/v1/chat/completions");
  return {
    results: reqs.flatMap((e) => e.body?.messages ?? []).filter((m) => m.role === "tool").map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))),
    tools: reqs.flatMap((e) => e.body?.tools ?? []),
  };
}

function setUp(t, server) {
  const ws = workspace(t);
  const spec = writeAgentSpec(tempDir(t, "lousho-stateless-"), {
    name: "stateless-e2e",
    model: "openai/gpt-4o-mini",
    instructions: "You are a test agent.",
    tools: ["read"],
    maxSteps: 3,
  });
  const agent = startAgent(t, { spec, cwd: ws, env: mock.openaiEnv() });
  return { ws, agent, mcpServers: [{ name: "colors", type: "http", url: server.url, headers: [] }] };
}

test("a stateless MCP server: discovery, _meta, standard headers, 2020-12 schemas, input_required through an ACP form", { timeout: 60000 }, async (t) => {
  const server = await startStatelessServer();
  t.after(() => server.close());
  const { ws, agent, mcpServers } = setUp(t, server);
  const FORMS = { fs: { readTextFile: false, writeTextFile: false }, terminal: false, elicitation: { form: {} } };
  await withClient(agent, FORMS, () => ({ action: "accept", content: { color: "green" } }), async (c) => {
    const mark = (await mock.journal()).length;
    const res = await c.prompt(ws, mcpServers, "pick a color please");
    assert.equal(res.stopReason, "end_turn");
    assert.equal(c.asked.length, 1);
    assert.equal(c.asked[0].mode, "form");
    assert.equal(c.asked[0].message, "Which color?");
    assert.deepEqual(c.asked[0].requestedSchema.required, ["color"]);
    const { results, tools } = await sent(mark);
    assert.match(results.join("\n"), /the user picked green/);
    const tool = tools.find((x) => x.function?.name === "mcp__colors__pick_color");
    assert.ok(tool, "the tool was offered to the model");
    assert.deepEqual(tool.function.parameters.$defs, PICK_SCHEMA.$defs);
    assert.deepEqual(tool.function.parameters.properties.shade, { $ref: "#/$defs/shade" });
    assert.deepEqual(tool.function.parameters.properties.point.prefixItems, PICK_SCHEMA.properties.point.prefixItems);
  });
  await finishAgent(agent);
  const methods = server.requests.map((r) => r.method);
  assert.ok(!methods.includes("initialize"), methods.join(","));
  assert.equal(methods[0], "server/discover");
  const calls = server.requests.filter((r) => r.method === "tools/call");
  assert.equal(calls.length, 2, "asked once, then retried with the answer");
  assert.equal(calls[1].params.requestState, "asked-once");
  for (const r of server.requests) {
    assert.equal(r.headers["mcp-protocol-version"], REVISION);
    assert.equal(r.headers["mcp-session-id"], undefined);
    assert.equal(r.headers["mcp-method"], r.method);
    assert.equal(r.params._meta["io.modelcontextprotocol/protocolVersion"], REVISION);
    assert.equal(r.params._meta["io.modelcontextprotocol/clientInfo"].name, "lousho");
  }
  assert.equal(calls[0].headers["mcp-name"], "pick_color");
  assert.ok(calls[0].params._meta["io.modelcontextprotocol/clientCapabilities"].elicitation, "forms are offered");
});

test("a stateless MCP server's question is declined when the editor has no forms", { timeout: 60000 }, async (t) => {
  const server = await startStatelessServer();
  t.after(() => server.close());
  const { ws, agent, mcpServers } = setUp(t, server);
  const NONE = { fs: { readTextFile: false, writeTextFile: false }, terminal: false };
  await withClient(agent, NONE, () => assert.fail("no form may be asked"), async (c) => {
    const mark = (await mock.journal()).length;
    const res = await c.prompt(ws, mcpServers, "pick a color please");
    assert.equal(res.stopReason, "end_turn");
    assert.match((await sent(mark)).results.join("\n"), /the user did not answer \(decline\)/);
  });
  await finishAgent(agent);
});
