// The `ask` tool as a form: the official ACP SDK client advertises `elicitation.form` and answers
// the agent's `elicitation/create`; @copilotkit/aimock is the model that calls `ask` and whose
// next request must hold the answer. A client without forms gets the numbered-choices message
// that ends the turn. Every line the binary writes is validated against the ACP schema.
import test from "node:test";
import assert from "node:assert/strict";
import { acp } from "./lib/sdk-client.mjs";
import { startAgent, finishAgent } from "./lib/agent-process.mjs";
import { tempDir, workspace } from "./lib/env.mjs";
import { useAimock } from "./lib/aimock.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";

const mock = useAimock("elicitation.json");

// The chat requests since `mark` (a journal length) whose messages hold a tool result.
async function toolResultRequests(mark) {
  return (await mock.journal())
    .slice(mark)
    .filter((e) => e.path === "/v1/chat/completions" && (e.body?.messages ?? []).some((m) => m.role === "tool"));
}
const toolMessage = (req, id) => req.body.messages.find((m) => m.role === "tool" && m.tool_call_id === id);

// A client advertising `clientCapabilities`, answering each elicitation/create with
// `answer(params)` (a value or a promise); runs `body({ctx, asked, updates, prompt})`.
async function withFormClient(agent, clientCapabilities, answer, body) {
  const asked = [];
  const updates = [];
  const app = acp
    .client({ name: "lousho-e2e" })
    .onNotification(acp.methods.client.session.update, ({ params }) => updates.push(params.update))
    .onRequest(acp.methods.client.elicitation.create, ({ params }) => {
      asked.push(params);
      return answer(params);
    });
  return app.connectWith(agent.sdkStream(acp), async (ctx) => {
    await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities,
      clientInfo: { name: "lousho-e2e", version: "0.0.0" },
    });
    const prompt = async (cwd, text) => {
      const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
      const mark = updates.length;
      const res = await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
      return { sessionId, res, updates: updates.slice(mark) };
    };
    return body({ ctx, asked, updates, prompt });
  });
}

const messageText = (updates) =>
  updates
    .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content?.type === "text")
    .map((u) => u.content.text)
    .join("");

function setUp(t) {
  const ws = workspace(t);
  const spec = writeAgentSpec(tempDir(t, "lousho-elicit-"), {
    name: "elicit-e2e",
    model: "openai/gpt-4o-mini",
    instructions: "You are a test agent.",
    tools: ["ask"],
    maxSteps: 3,
  });
  return { ws, agent: startAgent(t, { spec, cwd: ws, env: mock.openaiEnv() }) };
}

const FORMS = { fs: { readTextFile: false, writeTextFile: false }, terminal: false, elicitation: { form: {} } };

test("ask through elicitation forms", { timeout: 60000 }, async (t) => {
  const { ws, agent } = setUp(t);
  let reply = () => ({ action: "accept", content: { answer: "b.txt" } });
  await withFormClient(agent, FORMS, (p) => reply(p), async (c) => {
    await t.test("choices are a titled enum; the answer is the tool's result and the turn goes on", async () => {
      const mark = (await mock.journal()).length;
      const { sessionId, res, updates } = await c.prompt(ws, "pick a file");
      assert.equal(res.stopReason, "end_turn");
      const form = c.asked.at(-1);
      assert.equal(form.mode, "form");
      assert.equal(form.sessionId, sessionId);
      assert.equal(form.toolCallId, "call_ask_1");
      assert.equal(form.message, "Which file?");
      assert.deepEqual(form.requestedSchema.properties.answer.oneOf, [
        { const: "a.txt", title: "a.txt" },
        { const: "b.txt", title: "b.txt" },
      ]);
      assert.deepEqual(form.requestedSchema.required, ["answer"]);
      assert.equal(messageText(updates), "Noted.", "the model's next reply is in the same turn");
      const reqs = await toolResultRequests(mark);
      assert.equal(reqs.length, 1);
      assert.equal(toolMessage(reqs[0], "call_ask_1").content, "The user answered: b.txt");
    });

    await t.test("free text is a string field", async () => {
      reply = () => ({ action: "accept", content: { answer: "feature/forms" } });
      const mark = (await mock.journal()).length;
      const { res } = await c.prompt(ws, "name the branch");
      assert.equal(res.stopReason, "end_turn");
      const field = c.asked.at(-1).requestedSchema.properties.answer;
      assert.equal(field.type, "string");
      assert.equal(field.oneOf, undefined);
      const reqs = await toolResultRequests(mark);
      assert.equal(toolMessage(reqs[0], "call_ask_2").content, "The user answered: feature/forms");
    });

    await t.test("several choices are a multi-select", async () => {
      reply = () => ({ action: "accept", content: { answer: ["lint", "bench"] } });
      const mark = (await mock.journal()).length;
      await c.prompt(ws, "pick several");
      const field = c.asked.at(-1).requestedSchema.properties.answer;
      assert.equal(field.type, "array");
      assert.deepEqual(field.items.anyOf.map((o) => o.const), ["lint", "test", "bench"]);
      const reqs = await toolResultRequests(mark);
      assert.equal(toolMessage(reqs[0], "call_ask_3").content, "The user answered: lint, bench");
    });

    for (const action of ["decline", "cancel"]) {
      await t.test(`a form answered ${action} is the answer that the user declined`, async () => {
        reply = () => ({ action });
        const mark = (await mock.journal()).length;
        const { res, updates } = await c.prompt(ws, "pick a file");
        assert.equal(res.stopReason, "end_turn");
        assert.equal(messageText(updates), "Noted.");
        const reqs = await toolResultRequests(mark);
        assert.equal(reqs.length, 1);
        assert.match(toolMessage(reqs[0], "call_ask_1").content, /the user declined/i);
      });
    }

    await t.test("a prompt cancelled while the form is open cancels the tool and the turn", async () => {
      let settle;
      reply = () => new Promise((r) => (settle = r));
      const mark = (await mock.journal()).length;
      const { sessionId } = await c.ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
      const running = c.ctx.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "ask and wait" }],
      });
      await agent.waitFor((m) => m.method === "elicitation/create" && m.params.sessionId === sessionId, 10000, "the form");
      c.ctx.notify(acp.methods.agent.session.cancel, { sessionId });
      const res = await running;
      assert.equal(res.stopReason, "cancelled");
      const withdrawn = await agent.waitFor((m) => m.method === "$/cancel_request", 10000, "the form withdrawn");
      const create = agent.wire.entries.find((e) => e.dir === "out" && e.msg?.method === "elicitation/create" && e.msg.params.sessionId === sessionId);
      assert.deepEqual(withdrawn.params.requestId, create.msg.id);
      settle({ action: "cancel" }); // a late answer is ignored
      assert.equal((await toolResultRequests(mark)).length, 0, "no request after the cancel");
    });
  });
  await finishAgent(agent);
});

const NO_FORMS = {
  none: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  "URL steps only": { fs: { readTextFile: false, writeTextFile: false }, terminal: false, elicitation: { url: {} } },
};

for (const [name, caps] of Object.entries(NO_FORMS)) {
  test(`a client with ${name}: the question ends the turn as numbered choices`, { timeout: 60000 }, async (t) => {
    const { ws, agent } = setUp(t);
    await withFormClient(
      agent,
      caps,
      () => ({ action: "decline" }),
      async (c) => {
        const mark = (await mock.journal()).length;
        const { res, updates } = await c.prompt(ws, "pick a file");
        assert.equal(res.stopReason, "end_turn");
        assert.equal(c.asked.length, 0, "no form is sent");
        assert.equal(messageText(updates), "Which file?\n\n1. a.txt\n2. b.txt");
        assert.equal((await toolResultRequests(mark)).length, 0, "the answer is the next prompt");
      },
    );
    await finishAgent(agent);
  });
}
