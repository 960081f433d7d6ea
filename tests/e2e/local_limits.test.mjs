// A local server reports its limits: the agent asks llama.cpp's /props for the loaded model's
// context length (the catalogue does not know a local model), and the editor's usage meter shows
// it from the first answer on.
import test from "node:test";
import assert from "node:assert/strict";
import { withAgent, textOf } from "./lib/sdk-client.mjs";
import { tempDir, workspace } from "./lib/env.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { sseChunk } from "./lib/chat-model.mjs";
import { startSseModel } from "./lib/sse-model.mjs";

const usageChunk = `data: ${JSON.stringify({
  id: "c1",
  object: "chat.completion.chunk",
  choices: [],
  usage: { prompt_tokens: 900, completion_tokens: 20, total_tokens: 920 },
})}\n\n`;

test("a llama.cpp server's context length reaches the usage meter", { timeout: 60000 }, async (t) => {
  const server = await startSseModel(t, {
    record: (req, body) => body,
    frames: (body) => [
      sseChunk(body.model, { role: "assistant", content: "Hello from the local model." }),
      sseChunk(body.model, {}, "stop"),
      usageChunk,
      "data: [DONE]\n\n",
    ],
    other: (req) =>
      req.method === "GET" && req.url === "/props"
        ? [200, { default_generation_settings: { n_ctx: 32768 }, total_slots: 1 }]
        : [404, { error: "not found" }],
  });
  const spec = writeAgentSpec(tempDir(t, "lousho-local-limits-"), {
    name: "local",
    model: "llamacpp/qwen2.5-coder-local",
    tools: [],
    providers: { llamacpp: { baseUrl: `http://127.0.0.1:${server.port}/v1` } },
  });
  await withAgent(t, { spec }, async (c) => {
    const sid = await c.newSession(workspace(t));
    const { res, events } = await c.prompt(sid, "hello");
    assert.equal(res?.stopReason, "end_turn");
    assert.equal(textOf(events, "agent_message_chunk"), "Hello from the local model.");
    const usage = events.map((e) => e.update).filter((u) => u?.sessionUpdate === "usage_update");
    assert.equal(usage.length, 1, "the meter after the answer");
    assert.equal(usage[0].size, 32768);
    assert.equal(usage[0].used, 920);
    assert.deepEqual(server.others, [{ method: "GET", path: "/props" }], "asked once, where llama.cpp answers");
  });
});
