// Error paths and process behaviour over raw stdio (no SDK): hand-written JSON-RPC lines in,
// every line out parsed and validated against the ACP schema.
import test from "node:test";
import assert from "node:assert/strict";
import { startAgent, INIT_PARAMS } from "./lib/agent-process.mjs";
import { workspace } from "./lib/env.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Starts an agent; `ready` also runs initialize (+ session/new when asked).
async function start(t, { init = true, session = false } = {}) {
  const ws = workspace(t);
  const agent = startAgent(t, { cwd: ws });
  let sessionId, modes;
  if (init) {
    const r = await agent.request("initialize", INIT_PARAMS, 0);
    assert.equal(r.result?.protocolVersion, 1, JSON.stringify(r));
  }
  if (session) {
    const r = await agent.request("session/new", { cwd: ws, mcpServers: [] }, 1);
    sessionId = r.result?.sessionId;
    modes = r.result?.modes;
    assert.equal(typeof sessionId, "string", JSON.stringify(r));
  }
  return { agent, ws, sessionId, modes };
}

// Ends the connection and checks that everything the binary wrote was valid.
async function finish(agent) {
  agent.closeStdin();
  const exit = await agent.exited;
  await agent.stdoutDone;
  assert.equal(agent.wire.problems.length, 0, agent.wire.report());
  return exit;
}

const prompt = (sessionId, text) => ({ sessionId, prompt: [{ type: "text", text }] });

test("not-JSON line -> -32700 with id null, then the connection goes on", async (t) => {
  const { agent, ws } = await start(t);
  agent.send("this is not json {");
  const err = await agent.waitFor((m) => m.error?.code === -32700, 2000, "-32700");
  assert.equal(err.id, null);
  assert.equal(typeof err.error.message, "string");
  // still alive and answering
  const r = await agent.request("session/new", { cwd: ws, mcpServers: [] });
  assert.equal(typeof r.result?.sessionId, "string", JSON.stringify(r));
  assert.equal((await finish(agent)).code, 0);
});

test("unknown method -> -32601, id echoed with its JSON type", async (t) => {
  const { agent } = await start(t);
  const r = await agent.request("session/does_not_exist", {}, "str-id-7");
  assert.equal(r.id, "str-id-7");
  assert.equal(r.error?.code, -32601, JSON.stringify(r));
  // An unknown notification gets no answer at all.
  const before = agent.wire.entries.filter((e) => e.dir === "out").length;
  agent.send({ jsonrpc: "2.0", method: "some/notification", params: {} });
  await sleep(200);
  assert.equal(agent.wire.entries.filter((e) => e.dir === "out").length, before);
  assert.equal((await finish(agent)).code, 0);
});

test("request before initialize -> -32600", async (t) => {
  const { agent, ws } = await start(t, { init: false });
  const r = await agent.request("session/new", { cwd: ws, mcpServers: [] }, 5);
  assert.equal(r.error?.code, -32600, JSON.stringify(r));
  assert.equal(r.id, 5);
  // initialize itself still works afterwards
  const i = await agent.request("initialize", INIT_PARAMS, 6);
  assert.equal(i.result?.protocolVersion, 1);
  assert.equal((await finish(agent)).code, 0);
});

test("session/prompt with an unknown session -> -32602", async (t) => {
  const { agent } = await start(t, { session: true });
  const r = await agent.request("session/prompt", prompt("no-such-session", "hello"));
  assert.equal(r.error?.code, -32602, JSON.stringify(r));
  assert.equal((await finish(agent)).code, 0);
});

test("empty prompt -> -32602", async (t) => {
  const { agent, sessionId } = await start(t, { session: true });
  const r = await agent.request("session/prompt", { sessionId, prompt: [] });
  assert.equal(r.error?.code, -32602, JSON.stringify(r));
  assert.equal((await finish(agent)).code, 0);
});

test("second prompt while busy -> -32600; the first turn is unaffected", async (t) => {
  const { agent, sessionId } = await start(t, { session: true });
  agent.send({ jsonrpc: "2.0", id: 10, method: "session/prompt", params: prompt(sessionId, "slow") });
  await agent.waitFor((m) => m.params?.update?.sessionUpdate === "agent_message_chunk", 3000, "first chunk");
  const second = await agent.request("session/prompt", prompt(sessionId, "hello"), 11);
  assert.equal(second.error?.code, -32600, JSON.stringify(second));
  agent.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
  const first = await agent.waitFor((m) => m.id === 10 && !m.method, 2000, "first prompt response");
  assert.equal(first.result?.stopReason, "cancelled", JSON.stringify(first));
  assert.equal((await finish(agent)).code, 0);
});

test("stdin closed mid-turn: exit 0 within 2 s, pending prompt answered (cancelled) first", async (t) => {
  const { agent, sessionId } = await start(t, { session: true });
  agent.send({ jsonrpc: "2.0", id: 20, method: "session/prompt", params: prompt(sessionId, "slow") });
  await agent.waitFor((m) => m.params?.update?.sessionUpdate === "agent_message_chunk", 3000, "first chunk");
  const t0 = performance.now();
  agent.closeStdin();
  const exit = await Promise.race([agent.exited, sleep(2000).then(() => null)]);
  assert.ok(exit, `still running 2 s after stdin closed; stderr:\n${agent.stderr}`);
  assert.equal(exit.code, 0, `exit code; stderr:\n${agent.stderr}`);
  assert.ok(exit.t - t0 < 2000);
  await agent.stdoutDone;
  const out = agent.wire.entries.filter((e) => e.dir === "out");
  const resp = out.findIndex((e) => e.msg?.id === 20 && !e.msg.method);
  assert.ok(resp >= 0, "the pending prompt got a response before exit");
  assert.equal(out[resp].msg.result?.stopReason, "cancelled", out[resp].line);
  const late = out.slice(resp + 1).filter((e) => e.msg?.method === "session/update");
  assert.deepEqual(late.map((e) => e.line), [], "no update after the response");
  assert.equal(agent.wire.problems.length, 0, agent.wire.report());
});

test("stdout carries only JSON-RPC lines (and nothing on a clean EOF)", async (t) => {
  const { agent } = await start(t, { init: false });
  agent.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INIT_PARAMS });
  await agent.waitFor((m) => m.id === 1, 2000, "initialize response");
  const exit = await finish(agent);
  assert.equal(exit.code, 0);
  const out = agent.wire.entries.filter((e) => e.dir === "out");
  assert.equal(out.length, 1, out.map((e) => e.line).join("\n"));
});

test("batch array -> -32600 id null; missing jsonrpc -> -32600 with the id", async (t) => {
  const { agent, ws } = await start(t);
  agent.send([{ jsonrpc: "2.0", id: 50, method: "session/new", params: { cwd: ws, mcpServers: [] } }]);
  const b = await agent.waitFor((m) => m.error?.code === -32600 && m.id === null, 2000, "batch error");
  assert.equal(typeof b.error.message, "string");
  agent.send({ id: 51, method: "session/new", params: { cwd: ws, mcpServers: [] } });
  const j = await agent.waitFor((m) => m.id === 51, 2000, "missing-jsonrpc error");
  assert.equal(j.error?.code, -32600, JSON.stringify(j));
  // neither created a session: the next one is sess-1
  const r = await agent.request("session/new", { cwd: ws, mcpServers: [] });
  assert.equal(r.result?.sessionId, "sess-1");
  assert.equal((await finish(agent)).code, 0);
});

test("session/cancel while a permission request is pending -> cancelled, tool failed", async (t) => {
  const { agent, sessionId } = await start(t, { session: true });
  agent.send({ jsonrpc: "2.0", id: 30, method: "session/prompt", params: prompt(sessionId, "run") });
  const perm = await agent.waitFor((m) => m.method === "session/request_permission", 3000, "permission request");
  const toolCallId = perm.params.toolCall.toolCallId;
  const t0 = performance.now();
  agent.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
  const resp = await agent.waitFor((m) => m.id === 30 && !m.method, 1000, "prompt response after cancel");
  assert.ok(performance.now() - t0 < 1000);
  assert.equal(resp.result?.stopReason, "cancelled", JSON.stringify(resp));
  const out = agent.wire.agentMessages();
  const ends = out.filter((m) => m.params?.update?.toolCallId === toolCallId && m.params.update.sessionUpdate === "tool_call_update");
  assert.deepEqual(ends.map((m) => m.params.update.status), ["failed"], "the tool call ends failed, never ran");
  assert.ok(!JSON.stringify(out).includes("hello from bash\\n"), "bash did not run");
  // The client's late answer to the abandoned request is ignored; the session goes on.
  agent.send({ jsonrpc: "2.0", id: perm.id, result: { outcome: { outcome: "cancelled" } } });
  const again = await agent.request("session/prompt", prompt(sessionId, "hello"), 31);
  assert.equal(again.result?.stopReason, "end_turn", JSON.stringify(again));
  assert.equal((await finish(agent)).code, 0);
});

test("session/set_mode to the advertised bypass mode: bash runs without asking", async (t) => {
  const { agent, sessionId, modes } = await start(t, { session: true });
  const ids = (modes?.availableModes ?? []).map((m) => m.id);
  assert.ok(ids.includes(modes.currentModeId), `currentModeId ${modes?.currentModeId} is one of ${ids}`);
  const bypass = ids.find((id) => /bypass/i.test(id));
  assert.ok(bypass, `a bypass mode is advertised: ${ids}`);
  const m = await agent.request("session/set_mode", { sessionId, modeId: bypass });
  assert.deepEqual(m.result, {}, JSON.stringify(m));
  const bad = await agent.request("session/set_mode", { sessionId, modeId: "yolo" });
  assert.equal(bad.error?.code, -32602, JSON.stringify(bad));
  const r = await agent.request("session/prompt", prompt(sessionId, "run"), 40, 5000);
  assert.equal(r.result?.stopReason, "end_turn");
  const out = agent.wire.agentMessages();
  assert.equal(out.filter((x) => x.method === "session/request_permission").length, 0);
  const done = out.find((x) => x.params?.update?.status === "completed");
  assert.match(JSON.stringify(done), /hello from bash/);
  assert.equal((await finish(agent)).code, 0);
});

test("two sessions prompt concurrently; updates carry the right session ids", async (t) => {
  const { agent, ws, sessionId: s1 } = await start(t, { session: true });
  const s2 = (await agent.request("session/new", { cwd: ws, mcpServers: [] }, 2)).result.sessionId;
  assert.notEqual(s1, s2);
  agent.send({ jsonrpc: "2.0", id: 70, method: "session/prompt", params: prompt(s1, "read notes.txt") });
  agent.send({ jsonrpc: "2.0", id: 71, method: "session/prompt", params: prompt(s2, "hello") });
  const [r1, r2] = await Promise.all([
    agent.waitFor((m) => m.id === 70 && !m.method, 5000, "prompt 70"),
    agent.waitFor((m) => m.id === 71 && !m.method, 5000, "prompt 71"),
  ]);
  assert.equal(r1.result?.stopReason, "end_turn");
  assert.equal(r2.result?.stopReason, "end_turn");
  const text = (sid) =>
    agent.wire
      .agentMessages()
      .filter((m) => m.params?.sessionId === sid && m.params.update?.sessionUpdate === "agent_message_chunk")
      .map((m) => m.params.update.content.text)
      .join("");
  assert.match(text(s1), /alpha, beta and gamma/);
  assert.doesNotMatch(text(s1), /offline demo agent/);
  assert.match(text(s2), /offline demo agent/);
  assert.equal((await finish(agent)).code, 0);
});
