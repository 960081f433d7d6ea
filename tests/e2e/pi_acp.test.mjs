// A real legacy RPC host we did not write: pi-acp (pinned in package.json) spawns
// `lousho --mode rpc` through PI_ACP_PI_COMMAND, and the official ACP SDK client drives pi-acp
// through a plain prompt, a prompt with a tool call (its permission prompt crosses both doors as
// extension_ui_request -> session/request_permission) and a cancelled prompt, with aimock as the
// model server. Every line pi-acp writes is validated against the ACP schema.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startAgent } from "./lib/agent-process.mjs";
import { withClient, textOf } from "./lib/sdk-client.mjs";
import { e2eDir, loushoBin, tempDir, workspace } from "./lib/env.mjs";
import { useAimock } from "./lib/aimock.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";

const piAcp = path.join(e2eDir, "node_modules/pi-acp/dist/index.js");
const mock = useAimock("pi-acp.json");

test("pi-acp drives lousho --mode rpc: prompt, tool call, cancel", { timeout: 90000 }, async (t) => {
  const ws = workspace(t);
  // pi-acp passes no agent: lousho takes the user's default agent from XDG_CONFIG_HOME, and pi-acp
  // keeps its own state under HOME; both are private to this test.
  const home = tempDir(t, "lousho-piacp-home-");
  fs.mkdirSync(path.join(home, "config/lousho"), { recursive: true });
  writeAgentSpec(path.join(home, "config/lousho"), {
    name: "pi-acp-e2e",
    model: "mock/mock-model",
    instructions: "You are a test agent.",
    tools: ["read", "bash"],
    maxSteps: 4,
    providers: { mock: mock.openaiProvider({ maxRetries: 0 }) },
  });
  const agent = startAgent(t, {
    command: process.execPath,
    argv: [piAcp],
    cwd: ws,
    env: {
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, "config"),
      PI_ACP_PI_COMMAND: loushoBin,
      // pi-acp also runs `pi --version` and `npm view` for its banner; keep those offline.
      PATH: path.dirname(process.execPath),
      NPM_CONFIG_OFFLINE: "true",
    },
  });

  await withClient(agent, async (c) => {
    const sid = await c.newSession(ws);
    assert.equal(typeof sid, "string");

    await t.test("a plain prompt streams and ends on agent_settled", async () => {
      const { res, error, events } = await c.prompt(sid, "say hello");
      assert.equal(error, undefined, error?.message);
      assert.equal(res.stopReason, "end_turn");
      // pi-acp may open the first reply of a session with a separator line of its own.
      assert.equal(textOf(events, "agent_message_chunk").trim(), "Hello through pi-acp.");
    });

    await t.test("a tool call: permission through extension_ui_request, real bash, result", async () => {
      const { res, error, events } = await c.prompt(sid, "run the tool");
      assert.equal(error, undefined, error?.message);
      assert.equal(res.stopReason, "end_turn");
      const asked = events.filter((e) => e.kind === "permission");
      assert.equal(asked.length, 1, "one permission request reached the ACP client");
      assert.ok(asked[0].choice, "the client chose an option");
      const calls = events.filter((e) => e.kind === "update" && e.update.sessionUpdate === "tool_call");
      assert.ok(calls.some((e) => e.update.toolCallId === "call_bash_1"), "the bash call was shown");
      const done = events.find(
        (e) => e.kind === "update" && e.update.toolCallId === "call_bash_1" && e.update.status === "completed",
      );
      assert.ok(done, "the tool call completed");
      // pi-acp shows bash as a terminal: the output streamed in partialResult is its data, and
      // the final update adds only what the result has beyond it (here nothing).
      const shown = events.filter((e) => e.kind === "update" && e.update.toolCallId === "call_bash_1");
      assert.match(JSON.stringify(shown), /e2e-ok/, "the command's real output came back");
      assert.match(textOf(events, "agent_message_chunk"), /The tool said e2e-ok\./);
      const second = (await mock.journal()).filter((e) => JSON.stringify(e.body ?? {}).includes("call_bash_1"));
      assert.ok(second.length >= 1, "the tool result went back to the model");
      assert.match(JSON.stringify(second.at(-1).body), /e2e-ok/);
    });

    await t.test("cancel: abort reaches lousho, the prompt ends cancelled", async () => {
      const { res, error, events } = await c.prompt(sid, "tell a long story", {
        cancelOn: (e) => e.update?.sessionUpdate === "agent_message_chunk",
      });
      assert.equal(error, undefined, error?.message);
      assert.equal(res.stopReason, "cancelled");
      const text = textOf(events, "agent_message_chunk");
      assert.ok(text.length > 0 && !text.includes("someone cancelled it"), `partial text only: ${text}`);
    });

    await t.test("the session goes on after the cancel", async () => {
      const { res, error, events } = await c.prompt(sid, "say hello");
      assert.equal(error, undefined, error?.message);
      assert.equal(res.stopReason, "end_turn");
      assert.match(textOf(events, "agent_message_chunk"), /Hello through pi-acp\./);
    });
  });
  assert.equal(agent.wire.problems.length, 0, agent.wire.report());
});
