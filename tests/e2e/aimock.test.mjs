// The HTTP providers end to end: lousho (OpenAI chat and Anthropic messages) against the
// @copilotkit/aimock mock LLM server, driven over ACP by the official SDK. Every line the binary
// writes is validated against the ACP schema.
import test, { before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { AgentProcess } from "./lib/agent-process.mjs";
import { withClient, textOf, countOf, sleep } from "./lib/sdk-client.mjs";
import { e2eDir, makeWorkspace, rmWorkspace } from "./lib/env.mjs";

const fixtures = path.join(e2eDir, "fixtures/providers.json");
let mock; // {proc, port, base}

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
  mock = { proc, port, base };
});

after(() => {
  mock?.proc.kill();
});

async function journal() {
  const j = await (await fetch(`${mock.base}/__aimock/journal`)).json();
  return Array.isArray(j) ? j : j.entries;
}

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
  (await journal()).filter((e) => e.path === api.path && lastUserText(e.body).includes(needle));

const APIS = [
  {
    name: "openai",
    model: "openai/gpt-4o-mini",
    wireModel: "gpt-4o-mini",
    path: "/v1/chat/completions",
    env: () => ({ OPENAI_BASE_URL: `${mock.base}/v1`, OPENAI_API_KEY: "test" }),
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
    env: () => ({ ANTHROPIC_BASE_URL: mock.base, ANTHROPIC_API_KEY: "test" }),
    provider: () => ({ api: "anthropic-messages", baseUrl: mock.base, apiKeyEnv: "ANTHROPIC_API_KEY" }),
    authHeader: "x-api-key",
    // aimock cuts the Anthropic stream before the first text delta: nothing shown, so it retries.
    truncatedAttempts: 3,
  },
];

function writeSpecs(dir, api) {
  const common = `instructions: You are a test agent.\ntools: [read]\nmaxSteps: 4\n`;
  const envSpec = path.join(dir, `${api.name}-env.yaml`);
  fs.writeFileSync(envSpec, `name: mock-${api.name}\nmodel: ${api.model}\n${common}`);
  const overrideSpec = path.join(dir, `${api.name}-override.yaml`);
  const p = { ...api.provider(), maxRetries: 2, retryBaseMs: 50 };
  fs.writeFileSync(
    overrideSpec,
    `name: mock-${api.name}-override\nmodel: ${api.model}\n${common}providers:\n  ${api.name}: ${JSON.stringify(p)}\n`,
  );
  return { envSpec, overrideSpec };
}

async function finish(agent) {
  agent.closeStdin();
  const exit = await agent.exited;
  await agent.stdoutDone;
  assert.equal(exit.code, 0, `exit code; stderr:\n${agent.stderr}`);
  assert.equal(agent.wire.problems.length, 0, agent.wire.report());
}

for (const api of APIS) {
  test(`${api.name} provider against aimock`, { timeout: 60000 }, async (t) => {
    const ws = makeWorkspace();
    const specDir = fs.mkdtempSync(path.join(os.tmpdir(), "lousho-specs-"));
    t.after(() => {
      rmWorkspace(ws);
      fs.rmSync(specDir, { recursive: true, force: true });
    });
    const { envSpec, overrideSpec } = writeSpecs(specDir, api);

    // Part 1: the built-in provider, pointed at the mock by *_BASE_URL / *_API_KEY.
    const agent = new AgentProcess({ spec: envSpec, env: api.env(), cwd: ws });
    t.after(() => agent.kill());
    await withClient(agent, async (c) => {
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
    await finish(agent);

    // Part 2: a `providers:` override in the spec with quick retries.
    const agent2 = new AgentProcess({ spec: overrideSpec, env: { [`${api.name.toUpperCase()}_API_KEY`]: "test" }, cwd: ws });
    t.after(() => agent2.kill());
    await withClient(agent2, async (c) => {
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
    await finish(agent2);
  });
}
