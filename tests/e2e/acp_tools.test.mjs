// Tools through the editor's file system, and the stop reasons and failures of a turn, with a
// scripted agent (fixtures/probe-agent.yaml) driven by the official SDK.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startAgent, finishAgent } from "./lib/agent-process.mjs";
import { withClient, textOf } from "./lib/sdk-client.mjs";
import { e2eDir, workspace } from "./lib/env.mjs";

const spec = path.join(e2eDir, "fixtures/probe-agent.yaml");
const updates = (events, kind) => events.filter((e) => e.update?.sessionUpdate === kind).map((e) => e.update);

test("tools, stop reasons and failures (scripted agent)", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  const agent = startAgent(t, { spec, cwd: ws });
  const fsCalls = () =>
    agent.wire.entries.filter((e) => e.dir === "out" && e.msg?.method?.startsWith("fs/")).map((e) => e.msg);

  await withClient(agent, async (c) => {
    await t.test("write + edit go through fs/write_text_file, with diffs in the permission request", async () => {
      const sid = await c.newSession(ws);
      const { res, events } = await c.prompt(sid, "write");
      assert.equal(res?.stopReason, "end_turn");
      const perms = events.filter((e) => e.kind === "permission").map((e) => e.params.toolCall);
      assert.equal(perms.length, 2, "write and edit each ask");
      assert.deepEqual(perms[0].content, [
        { type: "diff", path: path.join(ws, "new.txt"), oldText: null, newText: "fresh\n" },
      ]);
      assert.deepEqual(perms[1].content, [
        { type: "diff", path: path.join(ws, "notes.txt"), oldText: "alpha\nbeta\ngamma\n", newText: "alpha\nBETA\ngamma\n" },
      ]);
      const calls = updates(events, "tool_call");
      assert.deepEqual(calls.map((u) => u.kind), ["edit", "edit"]);
      const ends = updates(events, "tool_call_update").filter((u) => u.status === "completed");
      assert.equal(ends.length, 2);
      assert.equal(ends[1].content?.[0]?.type, "diff", "the edit result shows its diff");
      const writes = fsCalls().filter((m) => m.method === "fs/write_text_file");
      assert.deepEqual(
        writes.map((m) => [m.params.path, m.params.content]),
        [
          [path.join(ws, "new.txt"), "fresh\n"],
          [path.join(ws, "notes.txt"), "alpha\nBETA\ngamma\n"],
        ],
      );
      assert.equal(fs.readFileSync(path.join(ws, "notes.txt"), "utf8"), "alpha\nBETA\ngamma\n");
      assert.equal(textOf(events, "agent_message_chunk"), "done writing");
    });

    await t.test("maxSteps reached -> max_turn_requests", async () => {
      const sid = await c.newSession(ws);
      const { res, events } = await c.prompt(sid, "loop");
      assert.equal(res?.stopReason, "max_turn_requests");
      assert.equal(updates(events, "tool_call").length, 3, "maxSteps: 3 model calls, each with a tool call");
      assert.equal(textOf(events, "agent_message_chunk"), "");
    });

    await t.test("refusal and max_tokens stop reasons pass through", async () => {
      const sid = await c.newSession(ws);
      assert.equal((await c.prompt(sid, "refuse")).res?.stopReason, "refusal");
      assert.equal((await c.prompt(sid, "maxtok")).res?.stopReason, "max_tokens");
    });

    await t.test("a provider failure -> -32603 with data.code", async () => {
      const sid = await c.newSession(ws);
      const { res, error } = await c.prompt(sid, "fail");
      assert.equal(res, undefined);
      assert.equal(error?.code, -32603);
      assert.equal(error?.data?.code, "LOUSHO_PROVIDER_UNAVAILABLE");
      assert.match(error?.message ?? "", /scripted outage/);
    });

    await t.test("failing tools end `failed` and the turn goes on", async () => {
      for (const [prompt, why] of [
        ["missing", /nope\.txt/],
        ["outside", /outside the workspace/],
        ["badtool", /Unknown tool/],
      ]) {
        const sid = await c.newSession(ws);
        const { res, events } = await c.prompt(sid, prompt);
        assert.equal(res?.stopReason, "end_turn", prompt);
        const ends = updates(events, "tool_call_update").filter((u) => u.status);
        assert.equal(ends.at(-1).status, "failed", prompt);
        assert.match(JSON.stringify(ends.at(-1).content), why, prompt);
      }
      const outside = fsCalls().filter((m) => m.params.path === "/etc/passwd");
      assert.equal(outside.length, 0, "no fs request for a path outside the workspace");
    });

    await t.test("ask ends the turn with the question as the message", async () => {
      const sid = await c.newSession(ws);
      const { res, events } = await c.prompt(sid, "ask");
      assert.equal(res?.stopReason, "end_turn");
      assert.equal(textOf(events, "agent_message_chunk"), "Which file?");
    });
  });

  await finishAgent(agent);
});
