// Both doors give the same answers for the same agent (issue 19, "One session host"): the built
// binary is driven through `lousho acp <spec>` (the ACP SDK) and `lousho --mode rpc --agent
// <spec>` against one spec and one HOME, where one provider's key was stored by `lousho setup`
// (its credentials file) and the other's comes from the environment. Compared: the models
// offered, the thinking levels, which key each door sends (a loopback model server records the
// Authorization header of every request), and the session files (a session made by one door is
// listed and loaded by the other, from the same folder).
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { startAgent, finishAgent } from "./lib/agent-process.mjs";
import { withClient, acp } from "./lib/sdk-client.mjs";
import { tempDir, workspace } from "./lib/env.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { RpcHost } from "./lib/rpc-host.mjs";

const STORED_KEY = "sk-stored-by-setup";
const ENV_KEY = "sk-from-the-environment";

// An OpenAI chat server: records each request's path, Authorization header and last user text;
// answers "ok <text>".
function startModel() {
  const seen = [];
  const server = http.createServer((req, res) => {
    // A loopback server is asked for its context length first (GET /props, ...): it knows none.
    if (req.method !== "POST") return res.writeHead(404).end();
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const json = JSON.parse(body);
      const last = json.messages.at(-1);
      const text = typeof last.content === "string" ? last.content : last.content.map((b) => b.text ?? "").join("");
      seen.push({ path: req.url, auth: req.headers.authorization, text });
      const chunk = (delta, finish = null) =>
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: json.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk({ role: "assistant", content: `ok ${text}` }));
      res.write(chunk({}, "stop"));
      res.end("data: [DONE]\n\n");
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, seen, port: server.address().port })));
}

// One spec, one HOME: the `stored` provider's key only in the credentials file `lousho setup`
// writes, the `envp` provider's only in the environment, the `nokey` provider's nowhere.
function setUp(t, model) {
  const home = tempDir(t, "lousho-one-host-home-");
  fs.mkdirSync(path.join(home, ".config/lousho"), { recursive: true });
  fs.writeFileSync(
    path.join(home, ".config/lousho/credentials.json"),
    JSON.stringify({ provider: "openai-compatible", model: "", env: { STORED_API_KEY: STORED_KEY } }),
    { mode: 0o600 },
  );
  const base = (name) => `http://127.0.0.1:${model.port}/${name}/v1`;
  const spec = writeAgentSpec(tempDir(t, "lousho-one-host-spec-"), {
    name: "one-host",
    model: "stored/alpha",
    tools: ["read"],
    providers: {
      stored: { api: "openai-chat", baseUrl: base("stored"), apiKeyEnv: "STORED_API_KEY", models: [{ id: "alpha", name: "Alpha" }, { id: "beta" }] },
      envp: { api: "openai-chat", baseUrl: base("envp"), apiKeyEnv: "ENV_API_KEY", models: [{ id: "gamma", reasoning: true }] },
      // No key anywhere: offered by neither door.
      nokey: { api: "openai-chat", baseUrl: base("nokey"), apiKeyEnv: "NOKEY_API_KEY", models: [{ id: "delta" }] },
    },
  });
  // Session ids from the random generator (not sess-N), so the two doors' ids never collide.
  const env = { HOME: home, LOUSHO_HOME: home, XDG_CONFIG_HOME: "", ENV_API_KEY: ENV_KEY, LOUSHO_TEST_MODE: "0" };
  return { ws: workspace(t), spec, env, home };
}

const authOf = (model, text) => model.seen.find((s) => s.text === text)?.auth;

test("both doors offer the same models and thinking levels, send the same keys, and share session files", async (t) => {
  const model = await startModel();
  t.after(() => model.server.close());
  const { ws, spec, env, home } = setUp(t, model);

  // The ACP door: offers, a prompt with the agent's model (stored key), then with envp's.
  const acpSide = {};
  const agent = startAgent(t, { spec, env, cwd: ws });
  await withClient(agent, async (c) => {
    const res = await c.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    acpSide.session = res.sessionId;
    acpSide.models = res.models.availableModels.map((m) => m.modelId);
    acpSide.levels = res.configOptions.find((o) => o.id === "thought_level").options.map((o) => o.value);
    const first = await c.prompt(res.sessionId, "hello from acp");
    assert.equal(first.res?.stopReason, "end_turn", String(first.error?.message));
    await c.request(acp.methods.agent.session.setConfigOption, { sessionId: res.sessionId, configId: "model", value: "envp/gamma" });
    const second = await c.prompt(res.sessionId, "acp on envp");
    assert.equal(second.res?.stopReason, "end_turn", String(second.error?.message));
  });
  await finishAgent(agent);

  // The RPC door, same spec, HOME and folder.
  const rpc = new RpcHost(t, { spec, cwd: ws, env });
  await rpc.waitFor((f) => f.type === "ready", "ready");
  const rpcModels = (await rpc.command({ type: "get_available_models" })).data.models.map((m) => `${m.provider}/${m.id}`);
  const rpcLevels = (await rpc.command({ type: "get_available_thinking_levels" })).data.levels;
  assert.deepEqual(rpcModels, acpSide.models, "the same models, in the same order");
  assert.deepEqual(rpcModels, ["stored/alpha", "envp/gamma", "stored/beta"]);
  assert.deepEqual(rpcLevels, acpSide.levels, "the same thinking levels");

  await rpc.prompt("hello from rpc");
  await rpc.command({ type: "set_model", provider: "envp", modelId: "gamma" });
  await rpc.prompt("rpc on envp");
  // The same credentials through both doors: the stored key for `stored`, the environment's for
  // `envp`.
  assert.equal(authOf(model, "hello from acp"), `Bearer ${STORED_KEY}`);
  assert.equal(authOf(model, "hello from rpc"), `Bearer ${STORED_KEY}`);
  assert.equal(authOf(model, "acp on envp"), `Bearer ${ENV_KEY}`);
  assert.equal(authOf(model, "rpc on envp"), `Bearer ${ENV_KEY}`);

  // Session files: the RPC session's file sits beside the ACP session's; the RPC door opens the
  // ACP session's file and continues it.
  const rpcFile = (await rpc.command({ type: "get_state" })).data.sessionFile;
  const folder = path.dirname(rpcFile);
  assert.equal(path.dirname(folder), path.join(home, "sessions"));
  const acpFile = fs.readdirSync(folder).find((f) => f.endsWith(`_${acpSide.session}.jsonl`));
  assert.ok(acpFile, `the ACP session's file is in ${folder}: ${fs.readdirSync(folder).join(", ")}`);
  await rpc.command({ type: "switch_session", sessionPath: path.join(folder, acpFile) });
  const texts = (await rpc.command({ type: "get_messages" })).data.messages
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text).join("")));
  assert.deepEqual(texts, ["hello from acp", "acp on envp"]);
  const rpcSession = path.basename(rpcFile, ".jsonl").split("_").at(-1);
  await rpc.finish();

  // The ACP door lists the RPC door's session and loads it (its history replayed).
  const again = startAgent(t, { spec, env, cwd: ws });
  await withClient(again, async (c) => {
    const listed = await c.request(acp.methods.agent.session.list, { cwd: ws });
    const ids = listed.sessions.map((s) => s.sessionId);
    assert.ok(ids.includes(rpcSession) && ids.includes(acpSide.session), ids.join(", "));
    const mark = c.events.length;
    await c.request(acp.methods.agent.session.load, { sessionId: rpcSession, cwd: ws, mcpServers: [] });
    const replayed = c.events
      .slice(mark)
      .filter((e) => e.update.sessionUpdate === "user_message_chunk")
      .map((e) => e.update.content.text);
    assert.deepEqual(replayed, ["hello from rpc", "rpc on envp"]);
  });
  await finishAgent(again);
});
