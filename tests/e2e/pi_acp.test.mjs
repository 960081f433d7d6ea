// A real legacy RPC host we did not write: pi-acp (pinned in package.json) spawns
// `lousho --mode rpc` through PI_ACP_PI_COMMAND, and the official ACP SDK client drives pi-acp
// through a plain prompt, a prompt with a tool call (its permission prompt crosses both doors as
// extension_ui_request -> session/request_permission) and a cancelled prompt, with aimock as the
// model server. Every line pi-acp writes is validated against the ACP schema.
import test, { before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { AgentProcess } from "./lib/agent-process.mjs";
import { withClient, textOf, sleep } from "./lib/sdk-client.mjs";
import { e2eDir, loushoBin, makeWorkspace, rmWorkspace } from "./lib/env.mjs";

const piAcp = path.join(e2eDir, "node_modules/pi-acp/dist/index.js");
let mock; // {proc, base}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

before(async () => {
  const port = await freePort();
  const bin = path.join(e2eDir, "node_modules/.bin/llmock");
  const fixtures = path.join(e2eDir, "fixtures/pi-acp.json");
  const proc = spawn(bin, ["-p", String(port), "-h", "127.0.0.1", "-f", fixtures, "--log-level", "warn"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  proc.stderr.on("data", (d) => (err += d));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {}
    if (i > 100 || proc.exitCode !== null) throw new Error(`llmock did not start: ${err}`);
    await sleep(100);
  }
  mock = { proc, base };
});

after(() => mock?.proc.kill());

async function journal() {
  const j = await (await fetch(`${mock.base}/__aimock/journal`)).json();
  return Array.isArray(j) ? j : j.entries;
}

test("pi-acp drives lousho --mode rpc: prompt, tool call, cancel", { timeout: 90000 }, async (t) => {
  const ws = makeWorkspace();
  // pi-acp passes no agent: lousho takes the user's default agent from XDG_CONFIG_HOME, and pi-acp
  // keeps its own state under HOME; both are private to this test.
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "lousho-piacp-home-"));
  t.after(() => {
    rmWorkspace(ws);
    fs.rmSync(home, { recursive: true, force: true });
  });
  fs.mkdirSync(path.join(home, "config/lousho"), { recursive: true });
  fs.writeFileSync(
    path.join(home, "config/lousho/agent.yaml"),
    [
      "name: pi-acp-e2e",
      "model: mock/mock-model",
      "instructions: You are a test agent.",
      "tools: [read, bash]",
      "maxSteps: 4",
      "providers:",
      `  mock: {api: openai-chat, baseUrl: "${mock.base}/v1", maxRetries: 0}`,
      "",
    ].join("\n"),
  );
  const agent = new AgentProcess({
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
  t.after(() => agent.kill());

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
      assert.match(JSON.stringify(done.update), /e2e-ok/, "the command's real output came back");
      assert.match(textOf(events, "agent_message_chunk"), /The tool said e2e-ok\./);
      const second = (await journal()).filter((e) => JSON.stringify(e.body ?? {}).includes("call_bash_1"));
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
