// The HTTP providers end to end: lousho (OpenAI chat and Anthropic messages) against the
// @copilotkit/aimock mock LLM server, driven over ACP by the official SDK. Every line the binary
// writes is validated against the ACP schema.
import test from "node:test";
import assert from "node:assert/strict";
import { withAgent, textOf, countOf, sleep } from "./lib/sdk-client.mjs";
import { tempDir, workspace } from "./lib/env.mjs";
import { useAimock } from "./lib/aimock.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";

const mock = useAimock("providers.json");

function lastUserText(body) {
  const msgs = body?.messages ?? [];
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i];
    if (m.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    const t = (m.content ?? []).filter((b) => b.type === "text").map((b) => b.text);
    if (t.length) return t.join("");
  }
  return "";
}

// The model requests of one API (by endpoint path) whose last user message contains `needle`.
const requestsFor = async (api, needle) =>
  (await mock.journal()).filter((e) => e.path === api.path && lastUserText(e.body).includes(needle));

const APIS = [
  {
    name: "openai",
    model: "openai/gpt-4o-mini",
    wireModel: "gpt-4o-mini",
    path: "/v1/chat/completions",
    env: () => mock.openaiEnv(),
    provider: () => ({ api: "openai-chat", baseUrl: `${mock.base}/v1`, apiKeyEnv: "OPENAI_API_KEY" }),
    authHeader: "authorization",
    // A truncated stream after text was shown: no retry (output cannot be taken back).
    truncatedAttempts: 1,
  },
  {
    name: "anthropic",
    model: "anthropic/claude-sonnet-4-5",
    wireModel: "claude-sonnet-4-5",
    path: "/v1/messages",
    env: () => mock.anthropicEnv(),
    provider: () => ({ api: "anthropic-messages", baseUrl: mock.base, apiKeyEnv: "ANTHROPIC_API_KEY" }),
    authHeader: "x-api-key",
    // aimock cuts the Anthropic stream before the first text delta: nothing shown, so it retries.
    truncatedAttempts: 3,
  },
];

function writeSpecs(dir, api) {
  const common = { instructions: "You are a test agent.", tools: ["read"], maxSteps: 4 };
  const envSpec = writeAgentSpec(dir, { name: `mock-${api.name}`, model: api.model, ...common }, `${api.name}-env.yaml`);
  const overrideSpec = writeAgentSpec(
    dir,
    {
      name: `mock-${api.name}-override`,
      model: api.model,
      ...common,
      providers: { [api.name]: { ...api.provider(), maxRetries: 2, retryBaseMs: 50 } },
    },
    `${api.name}-override.yaml`,
  );
  return { envSpec, overrideSpec };
}

for (const api of APIS) {
  test(`${api.name} provider against aimock`, { timeout: 60000 }, async (t) => {
    const ws = workspace(t);
    const { envSpec, overrideSpec } = writeSpecs(tempDir(t, "lousho-specs-"), api);

    // Part 1: the built-in provider, pointed at the mock by *_BASE_URL / *_API_KEY.
    await withAgent(t, { spec: envSpec, env: api.env(), cwd: ws }, async (c) => {
      assert.equal(c.init.protocolVersion, 1);

      await t.test("streamed text", async () => {
        const sid = await c.newSession(ws);
        const { res, error, events } = await c.prompt(sid, "say hello");
        assert.equal(error, undefined, error?.message);
        assert.equal(res.stopReason, "end_turn");
        assert.equal(textOf(events, "agent_message_chunk"), "Hello from the mock! Streaming works.");
        assert.ok(countOf(events, "agent_message_chunk") >= 4, "streamed in several chunks");
        const reqs = await requestsFor(api, "say hello");
        assert.equal(reqs.length, 1);
        assert.equal(reqs[0].body.model, api.wireModel);
        assert.equal(reqs[0].body.stream, true);
        assert.ok(reqs[0].headers[api.authHeader], `${api.authHeader} header sent`);
      });

      await t.test("non-ASCII text survives both directions byte for byte", async () => {
        const sid = await c.newSession(ws);
        const msg = "unicode please: Grüße 世界 ✓ «ok»";
        const { res, error, events } = await c.prompt(sid, msg);
        assert.equal(error, undefined, error?.message);
        assert.equal(res.stopReason, "end_turn");
        assert.equal(textOf(events, "agent_message_chunk"), "Grüße, 世界! — naïve café ✓ done");
        const reqs = await requestsFor(api, "unicode please");
        assert.equal(reqs.length, 1);
        assert.equal(lastUserText(reqs[0].body), msg);
      });

      await t.test("reasoning -> agent_thought_chunk before the answer", async () => {
        const sid = await c.newSession(ws);
        const { res, error, events } = await c.prompt(sid, "think first");
        assert.equal(error, undefined, error?.message);
        assert.equal(res.stopReason, "end_turn");
        assert.equal(textOf(events, "agent_thought_chunk"), "User wants the answer. It is 42.");
        assert.equal(textOf(events, "agent_message_chunk"), "The answer is 42.");
        const kinds = events.map((e) => e.update?.sessionUpdate);
        assert.ok(kinds.lastIndexOf("agent_thought_chunk") < kinds.indexOf("agent_message_chunk"));
      });

      await t.test("tool call round trip: read notes.txt, then answer from the result", async () => {
        const sid = await c.newSession(ws);
        const { res, error, events } = await c.prompt(sid, "please read notes");
        assert.equal(error, undefined, error?.message);
        assert.equal(res.stopReason, "end_turn");
        const calls = events.filter((e) => e.update?.sessionUpdate === "tool_call");
        assert.equal(calls.length, 1);
        assert.equal(calls[0].update.kind, "read");
        assert.equal(calls[0].update.toolCallId, "call_read_1", "the provider's tool call id is kept");
        assert.deepEqual(calls[0].update.rawInput, { path: "notes.txt" });
        const done = events.find((e) => e.update?.toolCallId === "call_read_1" && e.update.status === "completed");
        assert.ok(done, "tool call completed");
        assert.equal(
          textOf(events, "agent_message_chunk"),
          "Let me read it.notes.txt lists alpha, beta and gamma.",
        );
        const reqs = await requestsFor(api, "please read notes");
        assert.equal(reqs.length, 2, "two model calls");
        const second = JSON.stringify(reqs[1].body);
        assert.match(second, /call_read_1/, "the tool result refers to the call id");
        assert.match(second, /alpha/, "the file content went back to the model");
        assert.doesNotMatch(JSON.stringify(reqs[0].body), /alpha/);
      });

      await t.test("429 with Retry-After, then success", async () => {
        const sid = await c.newSession(ws);
        const msg = `rate limit ${api.name}`;
        const { res, error, events, ms } = await c.prompt(sid, msg);
        assert.equal(error, undefined, error?.message);
        assert.equal(res.stopReason, "end_turn");
        assert.equal(textOf(events, "agent_message_chunk"), "Made it after the retry.");
        const reqs = await requestsFor(api, msg);
        assert.equal(reqs.length, 2, "one 429 and one retry");
        assert.equal(reqs[0].response?.status, 429);
        assert.ok(ms >= 350, `the retry waited for Retry-After: 0.4 (turn took ${ms.toFixed(0)} ms)`);
      });

      await t.test("cancel mid-stream -> cancelled, nothing after the response", async () => {
        const sid = await c.newSession(ws);
        const { res, error, events, afterCancelMs } = await c.prompt(sid, "slow", {
          cancelOn: (e) => e.update.sessionUpdate === "agent_message_chunk",
        });
        assert.equal(error, undefined, error?.message);
        assert.equal(res.stopReason, "cancelled");
        assert.ok(afterCancelMs < 1000, `answered ${afterCancelMs?.toFixed(0)} ms after the cancel`);
        const text = textOf(events, "agent_message_chunk");
        assert.ok(text.length > 0 && !text.includes("twelve"), `partial text: ${JSON.stringify(text)}`);
        const n = c.events.length;
        await sleep(500);
        assert.equal(c.events.length, n, "no update after the prompt response");
      });
    });

    // Part 2: a `providers:` override in the spec with quick retries.
    const env2 = { [`${api.name.toUpperCase()}_API_KEY`]: "test" };
    await withAgent(t, { spec: overrideSpec, env: env2, cwd: ws }, async (c) => {
      await t.test("providers: override, 500 once then success", async () => {
        const sid = await c.newSession(ws);
        const msg = `server error once ${api.name}`;
        const { res, error, events } = await c.prompt(sid, msg);
        assert.equal(error, undefined, error?.message);
        assert.equal(res.stopReason, "end_turn");
        assert.equal(textOf(events, "agent_message_chunk"), "Recovered from a 500.");
        assert.equal((await requestsFor(api, msg)).length, 2);
      });

      await t.test("truncated stream -> -32603 with a stable data.code; session still usable", async () => {
        const sid = await c.newSession(ws);
        const { res, error } = await c.prompt(sid, "cut me off");
        assert.equal(res, undefined, `expected an error, got ${JSON.stringify(res)}`);
        assert.equal(error.code, -32603, String(error));
        assert.equal(error.data?.code, "LOUSHO_PROVIDER_UNAVAILABLE", JSON.stringify(error.data));
        assert.equal(typeof error.message, "string");
        const attempts = await requestsFor(api, "cut me off");
        assert.equal(attempts.length, api.truncatedAttempts, "attempts at the truncated stream");
        const again = await c.prompt(sid, "say hello");
        assert.equal(again.res?.stopReason, "end_turn", again.error?.message);
        assert.equal(textOf(again.events, "agent_message_chunk"), "Hello from the mock! Streaming works.");
      });
    });
  });
}
