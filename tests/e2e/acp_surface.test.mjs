// The newer ACP surface with the official SDK client: session/delete, session/fork (unstable),
// logout, messageId on replayed chunks, notices in place of the placeholder tool
// calls, ToolCall.name and PromptResponse.usage. Every line the binary writes is validated
// against the SDK's stable schema as it arrives; what only the unstable schema defines (fork's
// answer, the prompt's usage) is checked against schema.unstable.json here.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { startAgent, finishAgent } from "./lib/agent-process.mjs";
import { withBareClient } from "./lib/sdk-client.mjs";
import { AcpValidator } from "./lib/acp-validator.mjs";
import { e2eDir, demoSpec, tempDir, workspace } from "./lib/env.mjs";

const modelsSpec = path.join(e2eDir, "fixtures/models-agent.yaml");
const unstable = new AcpValidator(
  path.join(e2eDir, "node_modules/@agentclientprotocol/sdk/schema/v1/schema.unstable.json"),
);

// The text and messageIds of the chunks among `updates`.
const chunks = (updates, kind) => updates.filter((u) => u.sessionUpdate === kind);

// The raw result (as written on the wire, before the SDK parses it) of the last `method` request.
function lastResult(agent, method) {
  const entries = agent.wire.entries;
  const req = entries.findLast((e) => e.dir === "in" && e.msg?.method === method);
  const id = JSON.stringify(req.msg.id);
  return entries.find((e) => e.dir === "out" && e.msg && !Object.hasOwn(e.msg, "method") && JSON.stringify(e.msg.id) === id)
    ?.msg.result;
}

async function rpcError(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail("the request succeeded");
}

test("a client with every capability: delete, fork, logout, notices, message ids", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  const home = tempDir(t, "lousho-e2e-surface-");
  const config = tempDir(t, "lousho-e2e-config-");
  fs.mkdirSync(path.join(config, "lousho"));
  const credentials = path.join(config, "lousho", "credentials.json");
  fs.writeFileSync(credentials, JSON.stringify({ env: { OPENAI_API_KEY: "sk-stored" } }), { mode: 0o600 });
  const env = { LOUSHO_HOME: home, XDG_CONFIG_HOME: config };
  const agent = startAgent(t, { spec: modelsSpec, cwd: ws, env });
  const caps = { session: { notices: {} }, fs: { readTextFile: false, writeTextFile: false } };
  await withBareClient(agent, caps, async (ctx, updates) => {
    const init = agent.wire.entries.find((e) => e.dir === "out" && e.msg?.result?.agentCapabilities).msg.result;
    assert.deepEqual(init.agentCapabilities.sessionCapabilities.delete, {});
    assert.deepEqual(init.agentCapabilities.sessionCapabilities.fork, {});
    assert.deepEqual(init.agentCapabilities.auth.logout, {});

    const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const prompt = async (id, text) => {
      const mark = updates.length;
      const res = await ctx.request(acp.methods.agent.session.prompt, { sessionId: id, prompt: [{ type: "text", text }] });
      return { res, updates: updates.slice(mark) };
    };

    const first = await prompt(sessionId, "hello");
    assert.ok(chunks(first.updates, "agent_message_chunk").length > 0);
    // The prompt's usage (unstable PromptResponse.usage).
    const answered = lastResult(agent, "session/prompt");
    assert.equal(unstable.checkDef("PromptResponse", answered), null);
    assert.ok(answered.usage && typeof answered.usage.totalTokens === "number");
    await prompt(sessionId, "how are you");

    // Notices in place of the compaction's think tool call.
    const compact = await prompt(sessionId, "/compact");
    assert.equal(compact.res.stopReason, "end_turn");
    assert.equal(compact.updates.filter((u) => u.toolCallId?.startsWith("compaction-")).length, 0);
    const notices = compact.updates.filter((u) => u.sessionUpdate === "notice");
    assert.deepEqual(
      notices.map((n) => n.title),
      ["Compacting the conversation", "Conversation compacted"],
    );

    // Replay (session/load): every chunk names its message (its entry id), one id per message.
    await ctx.request(acp.methods.agent.session.close, { sessionId });
    let mark = updates.length;
    await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
    const replay = updates.slice(mark);
    const agentIds = chunks(replay, "agent_message_chunk").map((c) => c.messageId);
    const userIds = chunks(replay, "user_message_chunk").map((c) => c.messageId);
    for (const id of [...agentIds, ...userIds]) assert.match(id, /^[0-9a-f]{8}$/);
    assert.ok(new Set(agentIds).size >= 2, JSON.stringify(agentIds)); // one id per reply
    const firstId = agentIds[0];
    assert.equal(chunks(replay, "agent_message_chunk")[0].content.text, "Noted: hello");

    // session/fork of the whole history, then at the first reply.
    const whole = await ctx.request("session/fork", { sessionId, cwd: ws, mcpServers: [] });
    assert.equal(unstable.checkDef("ForkSessionResponse", lastResult(agent, "session/fork")), null);
    assert.notEqual(whole.sessionId, sessionId);
    const inFork = await prompt(whole.sessionId, "still there");
    assert.equal(inFork.res.stopReason, "end_turn");
    const early = await ctx.request("session/fork", {
      sessionId,
      cwd: ws,
      mcpServers: [],
      _meta: { messageId: firstId },
    });
    const badFork = await rpcError(
      ctx.request("session/fork", { sessionId, cwd: ws, mcpServers: [], _meta: { messageId: "nope" } }),
    );
    assert.equal(badFork.code, -32602);
    assert.match(badFork.message, /params\._meta\.messageId/);
    // The early fork ends at the first reply, which keeps its id.
    await ctx.request(acp.methods.agent.session.close, { sessionId: early.sessionId });
    mark = updates.length;
    await ctx.request(acp.methods.agent.session.load, { sessionId: early.sessionId, cwd: ws, mcpServers: [] });
    const earlyReplay = updates.slice(mark);
    assert.deepEqual(chunks(earlyReplay, "agent_message_chunk").map((c) => c.messageId), [firstId]);
    assert.deepEqual(chunks(earlyReplay, "user_message_chunk").map((c) => c.content.text), ["hello"]);

    // session/delete: an open session is closed first; the list no longer has it.
    const listed = async () => (await ctx.request(acp.methods.agent.session.list, {})).sessions.map((s) => s.sessionId);
    assert.ok((await listed()).includes(whole.sessionId));
    assert.deepEqual(await ctx.request(acp.methods.agent.session.delete, { sessionId: whole.sessionId }), {});
    assert.ok(!(await listed()).includes(whole.sessionId));
    const gone = await rpcError(ctx.request(acp.methods.agent.session.prompt, {
      sessionId: whole.sessionId, prompt: [{ type: "text", text: "hi" }],
    }));
    assert.equal(gone.code, -32602);
    const unknown = await rpcError(ctx.request(acp.methods.agent.session.delete, { sessionId: "no-such" }));
    assert.equal(unknown.code, -32602);
    assert.match(unknown.message, /params\.sessionId/);

    // A session another process holds is refused and kept.
    await ctx.request(acp.methods.agent.session.close, { sessionId });
    const other = startAgent(t, { spec: modelsSpec, cwd: ws, env });
    await withBareClient(other, {}, async (octx) => {
      await octx.request(acp.methods.agent.session.resume, { sessionId, cwd: ws, mcpServers: [] });
      const locked = await rpcError(ctx.request(acp.methods.agent.session.delete, { sessionId }));
      assert.equal(locked.data?.code, "LOUSHO_SESSION_LOCKED");
      assert.ok((await listed()).includes(sessionId));
    });
    await finishAgent(other);
    assert.deepEqual(await ctx.request(acp.methods.agent.session.delete, { sessionId }), {});

    // logout forgets what setup stored (not the environment's); authenticate works again.
    const out = await ctx.request(acp.methods.agent.logout, {});
    assert.equal(out._meta.lousho.forgotStoredCredentials, true);
    assert.ok(!fs.existsSync(credentials));
    assert.deepEqual(await ctx.request(acp.methods.agent.authenticate, { methodId: "lousho-env" }), {});
    const again = await ctx.request(acp.methods.agent.logout, {});
    assert.equal(again._meta.lousho.forgotStoredCredentials, false);
  });
  // The clean end, but for session/fork's answers: the stable schema has no session/fork (they
  // were checked against the unstable one above).
  agent.closeStdin();
  assert.equal((await agent.exited).code, 0, agent.stderr);
  await agent.stdoutDone;
  const problems = agent.wire.problems.filter((p) => !/session\/fork which has no response type/.test(JSON.stringify(p)));
  assert.deepEqual(problems, [], agent.wire.report());
  assert.equal(agent.wire.problems.length, 2, "the two fork answers are the only lines the stable schema cannot place");
});

test("live chunks carry the messageId that session/load replays in a new process", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  const home = tempDir(t, "lousho-e2e-msgid-");
  const env = { LOUSHO_HOME: home };
  const first = startAgent(t, { spec: demoSpec, cwd: ws, env });
  let sessionId;
  let live;
  await withBareClient(first, {}, async (ctx, updates) => {
    ({ sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] }));
    await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "read notes.txt" }] });
    live = updates.filter((u) => ["agent_message_chunk", "agent_thought_chunk"].includes(u.sessionUpdate));
  });
  first.child.kill("SIGKILL");
  await first.exited;
  assert.ok(live.length > 1, "the demo streams its reply");
  for (const c of live) assert.match(c.messageId, /^[0-9a-f]{8}$/);
  // The text of each message as streamed, by id.
  const byId = (chunks) => {
    const m = new Map();
    for (const c of chunks) m.set(c.messageId, (m.get(c.messageId) ?? "") + c.content.text);
    return m;
  };
  const second = startAgent(t, { spec: demoSpec, cwd: ws, env });
  await withBareClient(second, {}, async (ctx, updates) => {
    await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
    const replayed = updates.filter((u) => ["agent_message_chunk", "agent_thought_chunk"].includes(u.sessionUpdate));
    assert.deepEqual(byId(replayed), byId(live));
  });
  await finishAgent(second);
});

test("a client that advertises nothing keeps today's rendering", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  const agent = startAgent(t, { spec: modelsSpec, cwd: ws });
  await withBareClient(agent, {}, async (ctx, updates) => {
    const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    const prompt = (text) =>
      ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
    await prompt("hello");
    await prompt("/compact");
    assert.equal(updates.filter((u) => u.sessionUpdate === "notice").length, 0);
    assert.equal(updates.filter((u) => u.sessionUpdate === "compaction_update").length, 0);
    assert.ok(updates.some((u) => u.toolCallId?.startsWith("compaction-")), "the think tool call stays");
  });
  await finishAgent(agent);
});

test("tool calls name the tool beside the title", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  const agent = startAgent(t, { spec: demoSpec, cwd: ws });
  await withBareClient(agent, {}, async (ctx, updates) => {
    const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    await ctx.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "read notes.txt" }],
    });
    const calls = updates.filter((u) => u.sessionUpdate === "tool_call");
    assert.ok(calls.length > 0, "the demo reads a file");
    for (const c of calls) assert.ok(typeof c.name === "string" && c.name.length > 0 && c.title, JSON.stringify(c));
  });
  await finishAgent(agent);
});
