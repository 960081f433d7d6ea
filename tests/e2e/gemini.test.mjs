// Gemini's native API end to end: a session against a mock written to the published
// streamGenerateContent shape, driven by the official ACP SDK: thoughts shown as thoughts, a
// function call run and answered, the thought signature sent back on the call's part, cached
// tokens in the usage.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { withAgent, textOf } from "./lib/sdk-client.mjs";
import { tempDir, workspace } from "./lib/env.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { startGeminiModel } from "./lib/gemini-model.mjs";

test("a Gemini session: thinking, a function call, its signature sent back", { timeout: 60000 }, async (t) => {
  const model = await startGeminiModel(t, (body, n) => {
    if (n === 1)
      return [
        { thought: "**Looking** at the notes first." },
        { text: "Reading." },
        { call: { name: "read", args: { path: "notes.txt" } }, signature: "SIG-READ" },
      ];
    return [{ thought: "It lists three words.", signature: "SIG-DONE" }, { text: "The notes list alpha, beta and gamma." }];
  });
  const ws = workspace(t);
  fs.writeFileSync(path.join(ws, "notes.txt"), "alpha\nbeta\ngamma\n");
  const spec = writeAgentSpec(tempDir(t, "lousho-gemini-spec-"), {
    name: "gem",
    model: "gemini/gemini-2.5-flash",
    thinking: "medium",
    tools: ["read"],
    providers: { gemini: { baseUrl: `http://127.0.0.1:${model.port}/v1beta` } },
  });
  await withAgent(t, { spec, env: { GEMINI_API_KEY: "g-e2e" } }, async (c) => {
    const sid = await c.newSession(ws);
    const { res, events } = await c.prompt(sid, "what do the notes say?");
    assert.equal(res?.stopReason, "end_turn");
    assert.equal(textOf(events, "agent_thought_chunk"), "**Looking** at the notes first.It lists three words.");
    assert.equal(textOf(events, "agent_message_chunk"), "Reading.The notes list alpha, beta and gamma.");
    const done = events
      .map((e) => e.update)
      .filter((u) => u?.sessionUpdate === "tool_call_update" && u.status === "completed");
    assert.equal(done.length, 1);

    assert.equal(model.requests.length, 2);
    for (const r of model.requests) {
      assert.equal(r.path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
      assert.equal(r.headers["x-goog-api-key"], "g-e2e");
      assert.deepEqual(r.body.generationConfig.thinkingConfig, { includeThoughts: true, thinkingBudget: 8192 });
      assert.deepEqual(
        r.body.tools[0].functionDeclarations.map((f) => f.name),
        ["read"],
      );
    }
    // The second request: the model's turn with its text and the call carrying its signature
    // (a thought summary without a signature is not sent back), then the function's response.
    const [user, modelTurn, answer] = model.requests[1].body.contents;
    assert.equal(user.role, "user");
    assert.equal(modelTurn.role, "model");
    assert.deepEqual(modelTurn.parts, [
      { text: "Reading." },
      { functionCall: { args: { path: "notes.txt" }, name: "read" }, thoughtSignature: "SIG-READ" },
    ]);
    assert.equal(answer.role, "user");
    assert.equal(answer.parts[0].functionResponse.name, "read");
    assert.match(answer.parts[0].functionResponse.response.output, /beta/);

    // The usage reached the editor: the context meter and the cost of the cached tokens.
    const usage = events.map((e) => e.update).filter((u) => u?.sessionUpdate === "usage_update");
    assert.ok(usage.length > 0);
    assert.equal(usage.at(-1).size, 1048576);
    assert.ok(usage.at(-1).used > 0);
    assert.ok(usage.at(-1).cost.amount > 0);
  });
});
