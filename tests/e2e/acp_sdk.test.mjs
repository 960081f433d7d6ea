// Drives the lousho binary with the official ACP SDK (2.x app API) through a full session on
// the offline demo agent, while a wire tap validates every line the binary writes against the
// official ACP JSON schema.
import test from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { startAgent } from "./lib/agent-process.mjs";
import { serveReadTextFile, serveWriteTextFile } from "./lib/sdk-client.mjs";
import { workspace } from "./lib/env.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const GREETING = "Hello! I am the offline demo agent. Ask me to read notes.txt, make a plan, or run a command.";

const textOf = (events, kind) =>
  events
    .filter((e) => e.kind === "update" && e.update.sessionUpdate === kind)
    .map((e) => (e.update.content?.type === "text" ? e.update.content.text : ""))
    .join("");

// Everything that happened for one tool call id, in order.
function toolTrace(events, toolCallId) {
  return events
    .filter(
      (e) =>
        (e.kind === "update" && e.update.toolCallId === toolCallId) ||
        (e.kind === "permission" && e.params.toolCall.toolCallId === toolCallId),
    )
    .map((e) => (e.kind === "permission" ? "permission" : `${e.update.sessionUpdate}:${e.update.status ?? "-"}`));
}

function toolCalls(events) {
  return events.filter((e) => e.kind === "update" && e.update.sessionUpdate === "tool_call").map((e) => e.update);
}

// The wire invariant of a prompt turn: a session's updates (other than the command list sent
// after session/new) only travel while a session/prompt of that session is in flight.
function checkUpdatesInsideTurns(wire) {
  const open = new Map(); // sessionId -> set of prompt ids in flight
  const promptSession = new Map(); // prompt id -> sessionId
  const bad = [];
  for (const e of wire.entries) {
    const m = e.msg;
    if (!m) continue;
    if (e.dir === "in" && m.method === "session/prompt") {
      const sid = m.params?.sessionId;
      promptSession.set(JSON.stringify(m.id), sid);
      if (!open.has(sid)) open.set(sid, new Set());
      open.get(sid).add(JSON.stringify(m.id));
    } else if (e.dir === "out" && !m.method && promptSession.has(JSON.stringify(m.id))) {
      open.get(promptSession.get(JSON.stringify(m.id)))?.delete(JSON.stringify(m.id));
    } else if (e.dir === "out" && m.method === "session/update") {
      const sid = m.params?.sessionId;
      if (m.params?.update?.sessionUpdate === "available_commands_update") continue;
      if (!open.get(sid)?.size) bad.push(e.line.slice(0, 200));
    }
  }
  return bad;
}

test("ACP SDK client drives the demo agent through a full session", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  const agent = startAgent(t, { cwd: ws });

  const events = []; // {kind:"update", sessionId, update} | {kind:"permission", params, choice}
  const fsReads = [];
  let permissionKind = "allow_once";

  const app = acp
    .client({ name: "lousho-e2e" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      events.push({ kind: "update", sessionId: params.sessionId, update: params.update });
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const opt = params.options.find((o) => o.kind === permissionKind);
      events.push({ kind: "permission", params, choice: opt?.optionId });
      if (!opt) return { outcome: { outcome: "cancelled" } };
      return { outcome: { outcome: "selected", optionId: opt.optionId } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      fsReads.push(params);
      return serveReadTextFile(params);
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => serveWriteTextFile(params));

  await app.connectWith(agent.sdkStream(acp), async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      clientInfo: { name: "lousho-e2e", version: "0.0.0" },
    });
    assert.equal(init.protocolVersion, 1);
    assert.equal(init.agentInfo?.name, "lousho");
    assert.equal(init.agentCapabilities?.promptCapabilities?.embeddedContext, true);

    const sess = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    assert.equal(sess.sessionId, "sess-1", "LOUSHO_TEST_MODE=1 gives deterministic ids");
    const sessionId = sess.sessionId;

    async function prompt(text, { cancelAfterMs } = {}) {
      const mark = events.length;
      if (cancelAfterMs) {
        setTimeout(() => ctx.notify(acp.methods.agent.session.cancel, { sessionId }), cancelAfterMs);
      }
      const t0 = performance.now();
      const res = await ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text }],
      });
      return { res, events: events.slice(mark), ms: performance.now() - t0 };
    }

    await t.test("session/new is followed by the command list", async () => {
      // The SDK dispatches notifications asynchronously: poll the handler's log.
      let cmds;
      for (let i = 0; i < 100 && !cmds; i++) {
        cmds = events.find((e) => e.update?.sessionUpdate === "available_commands_update");
        if (!cmds) await sleep(20);
      }
      assert.ok(cmds, "available_commands_update delivered to the client");
      assert.deepEqual(
        cmds.update.availableCommands.map((c) => c.name),
        ["compact", "model", "name", "export", "rewind", "explain"],
      );
      const outs = agent.wire.entries.filter((e) => e.dir === "out" && e.msg);
      const iResp = outs.findIndex((e) => e.msg.result?.sessionId === sessionId);
      const iCmds = outs.findIndex((e) => e.msg.params?.update?.sessionUpdate === "available_commands_update");
      assert.ok(iResp >= 0 && iResp < iCmds, "session/new response precedes the first update of the session");
    });

    await t.test("greeting: thought + message chunks, end_turn", async () => {
      const { res, events: ev } = await prompt("hello there");
      assert.equal(res.stopReason, "end_turn");
      assert.equal(textOf(ev, "agent_thought_chunk"), "A greeting. I will answer briefly.");
      assert.equal(textOf(ev, "agent_message_chunk"), GREETING);
      const kinds = ev.map((e) => e.update?.sessionUpdate);
      assert.ok(kinds.indexOf("agent_thought_chunk") < kinds.indexOf("agent_message_chunk"), "thinking first");
      assert.equal(toolCalls(ev).length, 0);
      assert.ok(ev.every((e) => e.sessionId === sessionId));
    });

    await t.test("read notes.txt: read tool call, completed, answer mentions alpha", async () => {
      const { res, events: ev } = await prompt("read notes.txt");
      assert.equal(res.stopReason, "end_turn");
      const calls = toolCalls(ev);
      assert.equal(calls.length, 1, JSON.stringify(calls));
      const call = calls[0];
      assert.equal(call.kind, "read");
      assert.equal(call.status, "pending");
      assert.deepEqual(call.rawInput, { path: "notes.txt" });
      assert.deepEqual(toolTrace(ev, call.toolCallId).at(-1), "tool_call_update:completed");
      assert.ok(!toolTrace(ev, call.toolCallId).includes("permission"), "reading asks no permission");
      const done = ev.find((e) => e.update?.toolCallId === call.toolCallId && e.update.status === "completed");
      assert.match(JSON.stringify(done.update.content ?? done.update.rawOutput), /alpha/);
      // The client advertised fs.readTextFile, so the read goes through the editor.
      assert.equal(fsReads.length, 1, "one fs/read_text_file request");
      assert.equal(fsReads[0].path, path.join(ws, "notes.txt"));
      assert.equal(fsReads[0].sessionId, sessionId);
      const text = textOf(ev, "agent_message_chunk");
      assert.match(text, /alpha/);
      assert.equal(text, "Let me read the file.The file notes.txt has three short lines: alpha, beta and gamma.");
    });

    await t.test("run with allow_once: pending -> permission -> in_progress -> completed", async () => {
      permissionKind = "allow_once";
      const { res, events: ev } = await prompt("run");
      assert.equal(res.stopReason, "end_turn");
      const calls = toolCalls(ev);
      assert.equal(calls.length, 1);
      const call = calls[0];
      assert.equal(call.kind, "execute");
      assert.deepEqual(call.rawInput, { command: "echo hello from bash" });
      assert.deepEqual(toolTrace(ev, call.toolCallId), [
        "tool_call:pending",
        "permission",
        "tool_call_update:in_progress",
        "tool_call_update:-", // the output while it ran
        "tool_call_update:completed",
      ]);
      const perm = ev.find((e) => e.kind === "permission");
      assert.equal(perm.params.sessionId, sessionId);
      assert.deepEqual(
        perm.params.options.map((o) => o.kind).sort(),
        ["allow_always", "allow_once", "reject_always", "reject_once"],
      );
      const done = ev.find((e) => e.update?.toolCallId === call.toolCallId && e.update.status === "completed");
      assert.match(JSON.stringify([done.update.content, done.update.rawOutput]), /hello from bash/);
      assert.equal(textOf(ev, "agent_message_chunk"), "Running a command.The command printed its greeting.");
    });

    await t.test("run with reject_once: tool fails, turn still ends end_turn", async () => {
      permissionKind = "reject_once";
      const { res, events: ev } = await prompt("run it again");
      assert.equal(res.stopReason, "end_turn");
      const calls = toolCalls(ev);
      assert.equal(calls.length, 1);
      const trace = toolTrace(ev, calls[0].toolCallId);
      assert.deepEqual(trace, ["tool_call:pending", "permission", "tool_call_update:failed"]);
      const failed = ev.find((e) => e.update?.status === "failed");
      assert.doesNotMatch(JSON.stringify(failed.update), /hello from bash\\n/, "the command did not run");
      assert.match(JSON.stringify(failed.update), /reject/i);
    });

    await t.test("make a plan: a plan update with two entries", async () => {
      permissionKind = "allow_once";
      const { res, events: ev } = await prompt("make a plan");
      assert.equal(res.stopReason, "end_turn");
      const plans = ev.filter((e) => e.update?.sessionUpdate === "plan");
      assert.ok(plans.length >= 1, "at least one plan update");
      assert.deepEqual(plans.at(-1).update.entries, [
        { content: "Read the code", status: "in_progress", priority: "high" },
        { content: "Write the fix", status: "pending", priority: "medium" },
      ]);
      assert.equal(textOf(ev, "agent_message_chunk"), "Here is my plan.");
    });

    await t.test("slow + session/cancel after 500 ms: cancelled, nothing after the response", async () => {
      const { res, events: ev, ms } = await prompt("slow", { cancelAfterMs: 500 });
      assert.equal(res.stopReason, "cancelled");
      assert.ok(ms < 1500, `the cancelled turn ended within 1.5 s (took ${ms.toFixed(0)} ms)`);
      const text = textOf(ev, "agent_message_chunk");
      assert.ok(text.length > 0, "some words streamed before the cancel");
      assert.ok(text.length < 40, `streaming stopped early, got: ${JSON.stringify(text)}`);
      const after = events.length;
      await sleep(700); // the scripted model would have emitted ~3 more words by now
      assert.equal(events.length, after, "no update after the prompt response");
    });

    await t.test("the session still works after a cancel", async () => {
      const { res, events: ev } = await prompt("hello again");
      assert.equal(res.stopReason, "end_turn");
      assert.equal(textOf(ev, "agent_message_chunk"), GREETING);
    });
  });

  await t.test("wire: every line is a schema-valid JSON-RPC message", async () => {
    agent.closeStdin();
    const exit = await agent.exited;
    await agent.stdoutDone;
    assert.equal(exit.code, 0, `exit code; stderr:\n${agent.stderr}`);
    const out = agent.wire.entries.filter((e) => e.dir === "out");
    assert.ok(out.length > 30, `the binary wrote ${out.length} lines`);
    assert.equal(agent.wire.problems.length, 0, agent.wire.report());
    assert.deepEqual(checkUpdatesInsideTurns(agent.wire), [], "updates outside a prompt turn");
  });
});
