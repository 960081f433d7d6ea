// Sessions that outlive the process, end to end with the official ACP SDK client and the
// @copilotkit/aimock mock LLM: prompt, kill -9 mid-turn, start again, session/list shows the
// session, session/load replays it, and the next model request carries the earlier history
// exactly as it was sent before. Every line the binary writes is validated against the schema.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startAgent } from "./lib/agent-process.mjs";
import { withClient, textOf, acp } from "./lib/sdk-client.mjs";
import { demoSpec, tempDir, workspace } from "./lib/env.mjs";
import { useAimock } from "./lib/aimock.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";

const mock = useAimock("providers.json");

const chatRequests = async () => (await mock.journal()).filter((e) => e.path === "/v1/chat/completions");

const userTexts = (body) =>
  (body?.messages ?? [])
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join("")));

// The agent lines between a client request (by method) and its response, in order.
function linesOfRequest(agent, method) {
  const entries = agent.wire.entries;
  const iReq = entries.findLastIndex((e) => e.dir === "in" && e.msg?.method === method);
  const id = JSON.stringify(entries[iReq].msg.id);
  const out = [];
  for (const e of entries.slice(iReq + 1)) {
    if (e.dir !== "out" || !e.msg) continue;
    if (!Object.hasOwn(e.msg, "method") && JSON.stringify(e.msg.id) === id) return { updates: out, response: e.msg };
    out.push(e.msg);
  }
  return { updates: out, response: undefined };
}

test("a session survives kill -9 and is listed, loaded and continued", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  const home = tempDir(t, "lousho-e2e-sessions-");
  const spec = writeAgentSpec(tempDir(t, "lousho-specs-"), {
    name: "keeper",
    model: "openai/gpt-4o-mini",
    instructions: "You are a test agent.",
    tools: ["read"],
  });
  const env = { ...mock.openaiEnv(), LOUSHO_HOME: home };

  // First life: one whole turn, then a second one killed while the model is still streaming.
  const first = startAgent(t, { spec, env, cwd: ws });
  let sessionId;
  let killed = false;
  await withClient(first, async (c) => {
    assert.equal(c.init.agentCapabilities.loadSession, true);
    sessionId = await c.newSession(ws);
    const { res, error } = await c.prompt(sessionId, "remember the code word");
    assert.equal(error, undefined, error?.message);
    assert.equal(res.stopReason, "end_turn");
    const read = await c.prompt(sessionId, "please read notes");
    assert.equal(read.res?.stopReason, "end_turn", read.error?.message);
    const pending = c.prompt(sessionId, "take your time");
    await first.waitFor(
      (m) => m.params?.update?.sessionUpdate === "agent_message_chunk" && m.params.update.content.text.startsWith("This"),
      10000,
      "the slow answer's first chunk",
    );
    killed = true;
    await first.kill(); // SIGKILL: no clean-up of any kind
    await pending; // fails: the connection is gone
  }).catch((e) => {
    if (!killed) throw e; // after the kill the connection's end is expected
  });
  await first.exited; // the connection may end before the exit is reported
  assert.equal(first.exitInfo.signal, "SIGKILL");
  assert.equal(first.wire.problems.length, 0, first.wire.report());
  const slowRequest = (await chatRequests()).findLast((e) => userTexts(e.body).at(-1) === "take your time");
  assert.ok(slowRequest, "the killed turn reached the model");

  // Second life: the same home.
  const second = startAgent(t, { spec, env, cwd: ws });
  await withClient(second, async (c) => {
    const listed = await c.request(acp.methods.agent.session.list, { cwd: ws });
    const mine = listed.sessions.find((s) => s.sessionId === sessionId);
    assert.ok(mine, `session/list shows ${sessionId}: ${JSON.stringify(listed)}`);
    assert.equal(mine.cwd, ws);
    assert.equal(mine.title, "remember the code word", "the first prompt names the session");
    assert.ok(!Number.isNaN(Date.parse(mine.updatedAt)), "updatedAt is a timestamp");

    await c.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
    const { updates, response } = linesOfRequest(second, "session/load");
    assert.ok(response?.result, "session/load answered");
    const shown = updates
      .map((m) => m.params.update)
      .filter((u) => u.sessionUpdate.endsWith("_message_chunk"))
      .map((u) => `${u.sessionUpdate}: ${u.content.text}`);
    assert.deepEqual(shown, [
      "user_message_chunk: remember the code word",
      "agent_message_chunk: The code word is kiwi.",
      "user_message_chunk: please read notes",
      "agent_message_chunk: Let me read it.",
      "agent_message_chunk: notes.txt lists alpha, beta and gamma.",
      "user_message_chunk: take your time",
    ]);
    // The tool call comes back as it ended: the call, then its final status and output.
    const tool = updates.map((m) => m.params.update).filter((u) => u.toolCallId === "call_read_1");
    assert.deepEqual(tool.map((u) => [u.sessionUpdate, u.status]), [
      ["tool_call", "pending"],
      ["tool_call_update", "completed"],
    ]);
    assert.equal(tool[0].kind, "read");
    assert.deepEqual(tool[0].rawInput, { path: "notes.txt" });
    assert.match(JSON.stringify(tool[1].content), /alpha/);

    const { res, error, events } = await c.prompt(sessionId, "what was the code word");
    assert.equal(error, undefined, error?.message);
    assert.equal(res.stopReason, "end_turn");
    assert.equal(textOf(events, "agent_message_chunk"), "It was kiwi.");
  });
  assert.equal(second.wire.problems.length, 0, second.wire.report());

  // The model got the restored history exactly as the killed turn had sent it, then the new prompt.
  const after = (await chatRequests()).findLast((e) => userTexts(e.body).at(-1) === "what was the code word");
  assert.ok(after, "the prompt after the load reached the model");
  const before = slowRequest.body.messages;
  assert.deepEqual(after.body.messages.slice(0, before.length), before);
  assert.deepEqual(after.body.messages.slice(before.length).map((m) => m.role), ["user"]);

  await second.kill();
});

test("a second process cannot open a session another one holds", { timeout: 30000 }, async (t) => {
  const ws = workspace(t);
  const home = tempDir(t, "lousho-e2e-sessions-");
  const env = { LOUSHO_HOME: home };
  const holder = startAgent(t, { spec: demoSpec, env, cwd: ws });
  const other = startAgent(t, { spec: demoSpec, env, cwd: ws });
  await withClient(holder, async (h) => {
    const sessionId = await h.newSession(ws);
    const { res } = await h.prompt(sessionId, "hello");
    assert.equal(res.stopReason, "end_turn");
    await withClient(other, async (o) => {
      await assert.rejects(
        o.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] }),
        (e) => /in use by another lousho process/.test(e.message) && e.message.includes(home),
      );
    });
    // The holder goes on writing to its file.
    const again = await h.prompt(sessionId, "hello again");
    assert.equal(again.res.stopReason, "end_turn");
  });
  assert.equal(other.wire.problems.length, 0, other.wire.report());
});

test("session/list pages newest first; session/resume continues without replay", { timeout: 30000 }, async (t) => {
  const ws = workspace(t);
  const home = tempDir(t, "lousho-e2e-sessions-");
  // 53 sessions written as lousho writes them (docs/session-format.md), one minute apart.
  const dir = path.join(home, "sessions", `--${ws.slice(1).replace(/[/\\:]/g, "-")}--`);
  fs.mkdirSync(dir, { recursive: true });
  const t0 = Date.parse("2026-11-01T00:00:00.000Z");
  for (let i = 0; i < 53; i++) {
    const ts = new Date(t0 + i * 60000).toISOString();
    const id = `old${String(i).padStart(2, "0")}`;
    const lines = [
      { type: "session", version: 1, id, timestamp: ts, cwd: ws, agent: "demo" },
      { type: "message", id: "00000001", parentId: null, timestamp: ts, message: { role: "user", content: [{ type: "text", text: `question ${i}` }], timestamp: t0 } },
      { type: "session_info", id: "00000002", parentId: "00000001", timestamp: ts, name: `Session ${i}` },
    ];
    const file = path.join(dir, `${ts.replace(/[:.]/g, "-")}_${id}.jsonl`);
    fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    fs.utimesSync(file, new Date(t0 + i * 60000), new Date(t0 + i * 60000));
  }
  const agent = startAgent(t, { spec: demoSpec, env: { LOUSHO_HOME: home }, cwd: ws });
  await withClient(agent, async (c) => {
    const page1 = await c.request(acp.methods.agent.session.list, { cwd: ws });
    assert.equal(page1.sessions.length, 50);
    assert.equal(page1.sessions[0].sessionId, "old52", "newest first");
    assert.equal(page1.sessions[0].title, "Session 52");
    assert.ok(page1.nextCursor, "a cursor to the rest");
    const page2 = await c.request(acp.methods.agent.session.list, { cwd: ws, cursor: page1.nextCursor });
    assert.deepEqual(page2.sessions.map((s) => s.sessionId), ["old02", "old01", "old00"]);
    assert.equal(page2.nextCursor ?? null, null);
    const elsewhere = await c.request(acp.methods.agent.session.list, { cwd: "/nonexistent-place" });
    assert.deepEqual(elsewhere.sessions, []);

    const mark = agent.wire.entries.length;
    await c.request(acp.methods.agent.session.resume, { sessionId: "old07", cwd: ws });
    const sent = agent.wire.entries.slice(mark).filter((e) => e.dir === "out" && e.msg?.method === "session/update");
    assert.ok(
      sent.every((e) => e.msg.params.update.sessionUpdate === "available_commands_update"),
      "resume replays nothing",
    );
    const { res } = await c.prompt("old07", "hello");
    assert.equal(res.stopReason, "end_turn");
  });
  assert.equal(agent.wire.problems.length, 0, agent.wire.report());
  // The resumed session's file grew by the new turn.
  const file = fs.readdirSync(dir).find((f) => f.endsWith("_old07.jsonl"));
  const lines = fs.readFileSync(path.join(dir, file), "utf8").trim().split("\n");
  assert.ok(lines.length > 3, "new entries appended");
  assert.equal(JSON.parse(lines[3]).parentId, "00000002", "hanging off the stored leaf");
});
