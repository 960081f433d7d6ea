// Live terminal output of the local bash tool (scripted agent fixtures/live-output-agent.yaml):
// over ACP with the official SDK client, as a display-only terminal for a client announcing
// `_meta.terminal_output`, as growing text content for one announcing nothing; over RPC as
// partialResult. The command prints, waits for the file `go`, and prints again: the test makes
// `go` only once it has seen the first output, so that output came while the command ran.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startAgent, finishAgent } from "./lib/agent-process.mjs";
import { acp } from "./lib/sdk-client.mjs";
import { RpcHost } from "./lib/rpc-host.mjs";
import { e2eDir, workspace } from "./lib/env.mjs";

const spec = path.join(e2eDir, "fixtures/live-output-agent.yaml");
const command = "echo first; while [ ! -e go ]; do sleep 0.02; done; echo second";

// One prompt "run" in a fresh session of a client announcing `clientCapabilities`; `onUpdate`
// sees each update as it arrives. Resolves with the prompt's result and every update.
async function runWith(t, clientCapabilities, onUpdate) {
  const ws = workspace(t);
  const agent = startAgent(t, { spec, cwd: ws });
  const updates = [];
  const app = acp.client({ name: "lousho-e2e" }).onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params.update);
    onUpdate(params.update, ws);
  });
  const res = await app.connectWith(agent.sdkStream(acp), async (ctx) => {
    await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities,
      clientInfo: { name: "lousho-e2e", version: "0.0.0" },
    });
    const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    return ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "run" }] });
  });
  await finishAgent(agent); // every line the agent wrote validated against the ACP schema
  return { res, updates: updates.filter((u) => u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") };
}

const go = (ws) => fs.writeFileSync(path.join(ws, "go"), "");

test("a client with _meta.terminal_output gets a display-only terminal", { timeout: 60000 }, async (t) => {
  const { res, updates } = await runWith(t, { terminal: false, _meta: { terminal_output: true } }, (u, ws) => {
    if (u._meta?.terminal_output?.data?.includes("first")) go(ws);
  });
  assert.equal(res.stopReason, "end_turn");
  const [call, ...rest] = updates;
  assert.equal(call.sessionUpdate, "tool_call");
  const id = call.toolCallId;
  assert.deepEqual(call.rawInput, { command });
  assert.equal(call.title, "echo first; while [ ! -e go ]; do sleep 0.02; done; echo second");
  assert.deepEqual(call.content, [{ type: "terminal", terminalId: id }]);
  assert.equal(call._meta.terminal_info.terminal_id, id);
  const outputs = rest.filter((u) => u._meta?.terminal_output);
  assert.ok(outputs.length >= 2, `output while it ran and after: ${JSON.stringify(outputs)}`);
  for (const u of outputs) assert.equal(u._meta.terminal_output.terminal_id, id);
  assert.equal(outputs.map((u) => u._meta.terminal_output.data).join(""), "first\nsecond\n", "each byte once");
  const last = rest.at(-1);
  assert.equal(last.status, "completed");
  assert.deepEqual(last.content, [{ type: "terminal", terminalId: id }]);
  assert.deepEqual(last._meta.terminal_exit, { terminal_id: id, exit_code: 0, signal: null });
  assert.ok(rest.indexOf(outputs.at(-1)) < rest.length - 1, "every output update before the end");
});

test("a client announcing nothing gets the output so far as growing text", { timeout: 60000 }, async (t) => {
  const textOf = (u) => u.content?.[0]?.content?.text;
  const { res, updates } = await runWith(t, {}, (u, ws) => {
    if (u.status === undefined && textOf(u)?.includes("first")) go(ws);
  });
  assert.equal(res.stopReason, "end_turn");
  assert.ok(!JSON.stringify(updates).includes("terminal"), "no terminal without the convention");
  const partial = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === undefined);
  assert.ok(partial.length >= 2, JSON.stringify(partial));
  const texts = partial.map(textOf);
  assert.equal(texts[0], "```\nfirst\n```");
  assert.equal(texts.at(-1), "```\nfirst\nsecond\n```");
  const shown = texts.map((s) => s.slice(4, -4));
  for (let i = 1; i < shown.length; i++) assert.ok(shown[i].startsWith(shown[i - 1]), `grows: ${shown}`);
  const end = updates.at(-1);
  assert.equal(end.status, "completed");
  assert.match(JSON.stringify(end.content), /first\\nsecond/);
  assert.ok(updates.indexOf(partial.at(-1)) < updates.length - 1, "every output update before the end");
});

test("the RPC door streams the same output as partialResult", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  const host = new RpcHost(t, { spec, cwd: ws });
  const textOf = (f) => f.partialResult?.content?.[0]?.text;
  const updates = () => host.frames.filter((f) => f.type === "tool_execution_update");
  await host.command({ type: "prompt", message: "run" });
  const first = await host.waitFor((f) => f.type === "tool_execution_update" && textOf(f)?.includes("first"), "first output");
  assert.equal(first.toolName, "bash");
  assert.equal(textOf(first), "first");
  go(ws);
  await host.waitFor((f) => f.type === "agent_end", "agent_end");
  const texts = updates().map(textOf);
  assert.equal(texts.at(-1), "first\nsecond");
  const end = host.frames.findIndex((f) => f.type === "tool_execution_end");
  assert.ok(host.frames.indexOf(updates().at(-1)) < end, "every partialResult before the end");
  await host.waitFor((f) => f.type === "agent_settled", "settled");
  await host.finish();
});
