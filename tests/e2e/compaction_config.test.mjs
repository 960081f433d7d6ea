// Model, thinking level and mode as ACP session config options, the built-in /model and /compact
// commands, and a context overflow that is compacted and retried against a real HTTP model
// (@copilotkit/aimock), all driven by the official ACP SDK with every line the binary writes
// validated against the ACP schema.
import test from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { startAgent, finishAgent } from "./lib/agent-process.mjs";
import { withAgent, withBareClient, textOf, sleep } from "./lib/sdk-client.mjs";
import { e2eDir, tempDir, workspace } from "./lib/env.mjs";
import { useAimock } from "./lib/aimock.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";

const modelsSpec = path.join(e2eDir, "fixtures/models-agent.yaml");

const values = (options) => Object.fromEntries(options.map((o) => [o.id, o.currentValue]));

// Waits (bounded) until `pred` holds for one of `events` from index `from` on.
async function waitEvent(events, pred, from = 0, what = "update") {
  for (let i = 0; i < 250; i++) {
    const hit = events.slice(from).find(pred);
    if (hit) return hit;
    await sleep(20);
  }
  throw new Error(`no ${what} arrived`);
}

test("config options, /model and /compact with the official SDK", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  const agent = startAgent(t, { spec: modelsSpec, cwd: ws });
  await withBareClient(agent, {}, async (ctx, events) => {
    const sess = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const sessionId = sess.sessionId;
    const prompt = async (text) => {
      const mark = events.length;
      const res = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text }],
      });
      return { res, events: events.slice(mark).map((update) => ({ kind: "update", update })) };
    };

    await t.test("session/new offers mode, model and thinking level", () => {
      const opts = sess.configOptions;
      assert.deepEqual(
        opts.map((o) => [o.id, o.category, o.type]),
        [
          ["mode", "mode", "select"],
          ["model", "model", "select"],
          ["thought_level", "thought_level", "select"],
        ],
      );
      assert.deepEqual(values(opts), { mode: "default", model: "script/m", thought_level: "off" });
      assert.deepEqual(
        opts[1].options.map((o) => o.value),
        ["script/m", "script/echo"],
      );
      assert.ok(opts[2].options.some((o) => o.value === "high"));
      // The older shapes stay for clients that read them.
      assert.equal(sess.modes.currentModeId, "default");
      assert.equal(sess.models.currentModelId, "script/m");
    });

    await t.test("built-in commands are listed beside the spec's", async () => {
      const cmds = await waitEvent(events, (u) => u.sessionUpdate === "available_commands_update");
      const names = cmds.availableCommands.map((c) => c.name);
      assert.ok(names.includes("compact") && names.includes("model"), names.join(","));
    });

    await t.test("set_config_option switches the model the next prompt uses", async () => {
      const mark = events.length;
      const res = await ctx.request(acp.methods.agent.session.setConfigOption, {
        sessionId,
        configId: "model",
        value: "script/echo",
      });
      assert.equal(values(res.configOptions).model, "script/echo");
      const upd = await waitEvent(events, (u) => u.sessionUpdate === "config_option_update", mark);
      assert.equal(values(upd.configOptions).model, "script/echo");
      const { res: r, events: ev } = await prompt("hi there");
      assert.equal(r.stopReason, "end_turn");
      assert.equal(textOf(ev, "agent_message_chunk"), "You said: hi there");
    });

    await t.test("thinking level and mode through set_config_option", async () => {
      let res = await ctx.request(acp.methods.agent.session.setConfigOption, {
        sessionId,
        configId: "thought_level",
        value: "high",
      });
      assert.equal(values(res.configOptions).thought_level, "high");
      const mark = events.length;
      res = await ctx.request(acp.methods.agent.session.setConfigOption, {
        sessionId,
        configId: "mode",
        value: "plan",
      });
      assert.deepEqual(values(res.configOptions), {
        mode: "plan",
        model: "script/echo",
        thought_level: "high",
      });
      await waitEvent(events, (u) => u.sessionUpdate === "current_mode_update", mark);
      await assert.rejects(
        ctx.request(acp.methods.agent.session.setConfigOption, {
          sessionId,
          configId: "model",
          value: "openai/gpt-4o",
        }),
        (e) => e.code === -32602,
      );
    });

    await t.test("/model switches back and the editor hears of it", async () => {
      const { res, events: ev } = await prompt("/model script/m");
      assert.equal(res.stopReason, "end_turn");
      const upd = ev.find((e) => e.update.sessionUpdate === "config_option_update");
      assert.ok(upd, "config_option_update sent");
      assert.equal(values(upd.update.configOptions).model, "script/m");
      assert.equal(textOf(ev, "agent_message_chunk"), "Model: script/m");
      const again = await prompt("hello again");
      assert.equal(textOf(again.events, "agent_message_chunk"), "Noted: hello again");
    });

    await t.test("/compact shows a think tool call with the summary", async () => {
      const { res, events: ev } = await prompt("/compact");
      assert.equal(res.stopReason, "end_turn");
      const calls = ev.filter((e) => e.update.toolCallId?.startsWith("compaction-"));
      assert.deepEqual(
        calls.map((e) => `${e.update.sessionUpdate}:${e.update.status}`),
        ["tool_call:in_progress", "tool_call_update:completed"],
      );
      assert.equal(calls[0].update.kind, "think");
      assert.match(JSON.stringify(calls[1].update.content), /SUMMARY: the user greeted the agent\./);
      assert.ok(calls[1].update.rawOutput.tokensAfter > 0);
    });
  });
  await finishAgent(agent);
});

test("a client with session.compaction gets compaction_update and the summary as it is written", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  const agent = startAgent(t, { spec: modelsSpec, cwd: ws });
  await withBareClient(agent, { session: { compaction: {} } }, async (ctx, events) => {
    const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const prompt = (text) =>
      ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
    await prompt("hello");
    await prompt("how are you");
    const mark = events.length;
    const res = await prompt("/compact");
    assert.equal(res.stopReason, "end_turn");
    const all = events.slice(mark);
    // The summary streams as compaction_summary_chunks between the start and the end.
    const pieces = all.filter((u) => u.sessionUpdate === "compaction_summary_chunk");
    assert.ok(pieces.length > 0, "the summary as it is written");
    assert.equal(pieces.map((p) => p.content.text).join(""), "SUMMARY: the user greeted the agent.");
    const first = all.findIndex((u) => u.sessionUpdate === "compaction_summary_chunk");
    assert.deepEqual(all.slice(first, first + pieces.length), pieces, "one run of chunks");
    const ev = all.filter((u) => u.sessionUpdate !== "compaction_summary_chunk");
    assert.deepEqual(
      ev.map((u) => `${u.sessionUpdate}:${u.status}`),
      ["compaction_update:in_progress", "compaction_update:completed", "usage_update:undefined"],
    );
    assert.equal(all[first - 1].sessionUpdate, "compaction_update", "after the start");
    for (const p of pieces) assert.equal(p.compactionId, ev[0].compactionId);
    assert.equal(ev[0].compactionId, ev[1].compactionId);
    assert.ok(ev[2].used > 0 && ev[2].used < ev[2].size, "the context meter shows what is left");
    assert.deepEqual(ev[1].summary, [{ type: "text", text: "SUMMARY: the user greeted the agent." }]);
  });
  await finishAgent(agent);
});

// --- Overflow against aimock ---

const mock = useAimock("compaction.json");

const textsOf = (body) =>
  (body?.messages ?? []).map((m) =>
    typeof m.content === "string"
      ? m.content
      : (m.content ?? []).filter((b) => b.type === "text").map((b) => b.text).join(""),
  );

const APIS = [
  {
    name: "openai",
    model: "openai/gpt-4o-mini",
    path: "/v1/chat/completions",
    env: () => mock.openaiEnv(),
  },
  {
    name: "anthropic",
    model: "anthropic/claude-sonnet-4-5",
    path: "/v1/messages",
    env: () => mock.anthropicEnv(),
  },
];

for (const api of APIS) {
  test(`${api.name}: a context overflow is compacted once and the request sent again`, { timeout: 60000 }, async (t) => {
    const ws = workspace(t);
    const spec = writeAgentSpec(tempDir(t, "lousho-specs-"), {
      name: `overflow-${api.name}`,
      model: api.model,
      tools: ["read"],
      compaction: { keepRecentTokens: 10 },
    });
    const needle = `too long for ${api.name}`;
    await withAgent(t, { spec, env: api.env(), cwd: ws }, async (c) => {
      const sid = await c.newSession(ws);
      const first = await c.prompt(sid, "greet the model");
      assert.equal(first.error, undefined, first.error?.message);
      const before = (await mock.journal()).length;
      const { res, error, events } = await c.prompt(sid, needle);
      assert.equal(error, undefined, error?.message);
      assert.equal(res.stopReason, "end_turn");
      assert.equal(textOf(events, "agent_message_chunk"), "It fits now.");
      const note = events.filter((e) => e.update?.toolCallId?.startsWith("compaction-"));
      assert.deepEqual(
        note.map((e) => `${e.update.sessionUpdate}:${e.update.status}`),
        ["tool_call:in_progress", "tool_call_update:completed"],
      );
      assert.equal(note[0].update.rawInput.reason, "overflow");
      assert.equal(note[1].update.rawOutput.willRetry, true);

      // What the model received: the refused request, the summary request, the retry.
      const reqs = (await mock.journal()).slice(before).filter((e) => e.path === api.path);
      assert.equal(reqs.length, 3, JSON.stringify(reqs.map((r) => textsOf(r.body))));
      assert.equal(reqs[0].response?.status, 400);
      assert.ok(textsOf(reqs[0].body).includes("greet the model"));
      assert.match(textsOf(reqs[1].body).at(-1), /^<conversation>[\s\S]*greet the model/);
      assert.ok(!reqs[1].body.tools?.length, "the summary request carries no tools");
      const retried = textsOf(reqs[2].body);
      assert.ok(retried.some((m) => m.includes("SUMMARY: the user greeted the model.")), JSON.stringify(retried));
      assert.ok(!retried.includes("greet the model"), "the summarized turn is no longer sent");
      assert.equal(retried.at(-1), needle);
    });
  });
}
