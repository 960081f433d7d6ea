// OpenAI Responses end to end: a codex model (which the openai provider asks through the
// Responses API) against a mock written to the published event sequence, driven by the official
// ACP SDK: reasoning summaries as thoughts, the encrypted reasoning sent back after each tool
// call, and apply_patch (offered instead of edit and write, as a custom tool) changing three files.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { withAgent, textOf, acp } from "./lib/sdk-client.mjs";
import { tempDir, workspace } from "./lib/env.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { startResponsesModel } from "./lib/responses-model.mjs";
import { useAimock } from "./lib/aimock.mjs";

const PATCH = [
  "*** Begin Patch",
  "*** Update File: notes.txt",
  " alpha",
  "-beta",
  "+BETA",
  " gamma",
  "*** Add File: src/added.txt",
  "+a new file",
  "+of two lines",
  "*** Delete File: old.txt",
  "*** End Patch",
].join("\n");

const updates = (events, kind) => events.filter((e) => e.update?.sessionUpdate === kind).map((e) => e.update);

test("a codex session: reasoning summaries, encrypted reasoning across tool calls, apply_patch on three files", { timeout: 60000 }, async (t) => {
  const model = await startResponsesModel(t, (body, n) => {
    if (n === 1)
      return [
        { type: "reasoning", summary: ["**Reading** the notes", "then patching"], encrypted: "ENC-ONE" },
        { type: "function_call", name: "read", callId: "call_read", arguments: JSON.stringify({ path: "notes.txt" }) },
      ];
    if (n === 2)
      return [
        { type: "reasoning", summary: ["Three files change."], encrypted: "ENC-TWO" },
        { type: "message", text: "Patching now." },
        { type: "custom_tool_call", name: "apply_patch", callId: "call_patch", input: PATCH },
      ];
    return [{ type: "message", text: "All three files are changed." }];
  });
  const ws = workspace(t);
  fs.writeFileSync(path.join(ws, "old.txt"), "remove me\n");
  const spec = writeAgentSpec(tempDir(t, "lousho-responses-spec-"), {
    name: "codex",
    model: "openai/gpt-5-codex",
    thinking: "medium",
    providers: {
      openai: { api: "openai-chat", baseUrl: `http://127.0.0.1:${model.port}/v1`, apiKeyEnv: "OPENAI_API_KEY" },
    },
  });
  await withAgent(t, { spec, env: { OPENAI_API_KEY: "sk-e2e" } }, async (c) => {
    const sid = await c.newSession(ws);
    const { res, events } = await c.prompt(sid, "fix the notes");
    assert.equal(res?.stopReason, "end_turn");

    // The summaries are the session's thoughts; the answer is the message.
    const thoughts = textOf(events, "agent_thought_chunk");
    assert.match(thoughts, /\*\*Reading\*\* the notes\n\nthen patching/);
    assert.match(thoughts, /Three files change\./);
    assert.equal(textOf(events, "agent_message_chunk"), "Patching now.All three files are changed.");

    // Every request went to /v1/responses, stateless, asking for the encrypted reasoning.
    assert.equal(model.requests.length, 3);
    for (const r of model.requests) {
      assert.equal(r.path, "/v1/responses");
      assert.equal(r.headers.authorization, "Bearer sk-e2e");
      assert.equal(r.body.store, false);
      assert.equal(r.body.stream, true);
      assert.equal(r.body.previous_response_id, undefined);
      assert.deepEqual(r.body.include, ["reasoning.encrypted_content"]);
      assert.deepEqual(r.body.reasoning, { effort: "medium", summary: "auto" });
    }
    // apply_patch takes the place of edit and write, as a custom tool with its grammar.
    const tools = model.requests[0].body.tools;
    const names = tools.map((x) => x.name);
    assert.ok(!names.includes("edit") && !names.includes("write"), names.join(","));
    const patchTool = tools.find((x) => x.name === "apply_patch");
    assert.equal(patchTool.type, "custom");
    assert.equal(patchTool.format.type, "grammar");
    assert.equal(patchTool.format.syntax, "lark");
    assert.match(patchTool.format.definition, /Begin Patch/);
    assert.equal(tools.find((x) => x.name === "read").type, "function");

    // The second request carries the first reasoning item, encrypted, before its call and output.
    const second = model.requests[1].body.input;
    const kinds = second.map((i) => i.type);
    assert.deepEqual(kinds, ["message", "reasoning", "function_call", "function_call_output"]);
    assert.equal(second[1].encrypted_content, "ENC-ONE");
    assert.deepEqual(second[1].summary, [{ type: "summary_text", text: "**Reading** the notes\n\nthen patching" }]);
    assert.equal(second[1].id, undefined, "store:false keeps no item to point at");
    assert.equal(second[2].call_id, "call_read");
    assert.equal(second[3].call_id, "call_read");
    assert.match(second[3].output, /beta/);
    // The third carries both, and the patch as a custom call with its output.
    const third = model.requests[2].body.input;
    assert.deepEqual(
      third.filter((i) => i.type === "reasoning").map((i) => i.encrypted_content),
      ["ENC-ONE", "ENC-TWO"],
    );
    const call = third.find((i) => i.type === "custom_tool_call");
    assert.equal(call.input, PATCH);
    const output = third.find((i) => i.type === "custom_tool_call_output");
    assert.equal(output.call_id, "call_patch");
    assert.match(output.output, /M notes\.txt\nA src\/added\.txt\nD old\.txt/);

    // The three files, changed once, after one permission question showing every diff.
    assert.equal(fs.readFileSync(path.join(ws, "notes.txt"), "utf8"), "alpha\nBETA\ngamma\n");
    assert.equal(fs.readFileSync(path.join(ws, "src/added.txt"), "utf8"), "a new file\nof two lines\n");
    assert.equal(fs.existsSync(path.join(ws, "old.txt")), false);
    const perms = events.filter((e) => e.kind === "permission").map((e) => e.params.toolCall);
    assert.equal(perms.length, 1, "only the patch asks");
    assert.deepEqual(
      perms[0].content.map((d) => [d.type, path.relative(ws, d.path), d.newText]),
      [
        ["diff", "notes.txt", "alpha\nBETA\ngamma\n"],
        ["diff", "src/added.txt", "a new file\nof two lines\n"],
        ["diff", "old.txt", ""],
      ],
    );
    const patchCall = updates(events, "tool_call").find((u) => u.title?.startsWith("Patch"));
    assert.equal(patchCall.kind, "edit");
    assert.equal(patchCall.title, "Patch notes.txt, src/added.txt, old.txt");
    const ends = updates(events, "tool_call_update").filter((u) => u.status === "completed");
    assert.equal(ends.length, 2);
  });
});

// The API's own web search (`webSearch:`): offered as its tool, shown in the editor as a search
// with what it found, kept in the session file and shown again by session/load in a new process.
test("webSearch: the API's own search is offered, shown as a tool call, and replayed after a restart", { timeout: 60000 }, async (t) => {
  const model = await startResponsesModel(t, () => [
    { type: "web_search_call", query: "acp registry", sources: ["https://agentclientprotocol.com/", "https://zed.dev/acp"] },
    { type: "message", text: "The registry lists agents." },
  ]);
  const ws = workspace(t);
  const spec = writeAgentSpec(tempDir(t, "lousho-websearch-spec-"), {
    name: "searcher",
    model: "openai/gpt-5-codex",
    tools: ["read"],
    webSearch: { allowedDomains: ["agentclientprotocol.com", "zed.dev"] },
    providers: {
      openai: { api: "openai-responses", baseUrl: `http://127.0.0.1:${model.port}/v1`, apiKeyEnv: "OPENAI_API_KEY" },
    },
  });
  const env = { OPENAI_API_KEY: "sk-e2e" };
  let sid;
  const shown = (events) => {
    const ups = events.map((e) => e.update).filter((u) => u?.toolCallId === "web_0");
    return {
      start: ups.find((u) => u.sessionUpdate === "tool_call"),
      end: ups.filter((u) => u.sessionUpdate === "tool_call_update").at(-1),
    };
  };
  await withAgent(t, { spec, env }, async (c) => {
    sid = await c.newSession(ws);
    const { res, events } = await c.prompt(sid, "what is the acp registry?");
    assert.equal(res?.stopReason, "end_turn");
    // Offered beside the function tools, with the spec's domains.
    const tools = model.requests[0].body.tools;
    assert.deepEqual(tools.find((x) => x.type === "web_search"), {
      type: "web_search",
      filters: { allowed_domains: ["agentclientprotocol.com", "zed.dev"] },
    });
    assert.ok(tools.some((x) => x.name === "read"));
    // Shown as a search that needed no running by lousho (and no permission), then the answer.
    const { start, end } = shown(events);
    assert.equal(start.title, "Web search: acp registry");
    assert.equal(start.kind, "search");
    assert.deepEqual(start.rawInput, { query: "acp registry" });
    assert.equal(end.status, "completed");
    assert.match(end.content[0].content.text, /2 sources:\n- https:\/\/agentclientprotocol\.com\/\n- https:\/\/zed\.dev\/acp/);
    assert.equal(events.filter((e) => e.kind === "permission").length, 0);
    assert.equal(textOf(events, "agent_message_chunk"), "The registry lists agents.");
    assert.equal(model.requests.length, 1, "the model was asked once: nothing ran");
  });
  // A new process: session/load shows the search again, as it was.
  await withAgent(t, { spec, env }, async (c) => {
    const mark = c.events.length;
    await c.request(acp.methods.agent.session.load, { sessionId: sid, cwd: ws, mcpServers: [] });
    const { start, end } = shown(c.events.slice(mark));
    assert.equal(start?.title, "Web search: acp registry");
    assert.equal(end?.status, "completed");
    assert.match(end.content[0].content.text, /2 sources/);
  });
});

// The same provider against @copilotkit/aimock's Responses endpoint (its own event stream).
const mock = useAimock("providers.json");

test("openai-responses against aimock: reasoning as thoughts, a function call round trip", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  const spec = writeAgentSpec(tempDir(t, "lousho-responses-aimock-"), {
    name: "aimock-responses",
    model: "openai/gpt-5",
    thinking: "low",
    tools: ["read"],
    providers: {
      openai: { api: "openai-responses", baseUrl: `${mock.base}/v1`, apiKeyEnv: "OPENAI_API_KEY" },
    },
  });
  await withAgent(t, { spec, env: { OPENAI_API_KEY: "test" } }, async (c) => {
    const sid = await c.newSession(ws);
    const think = await c.prompt(sid, "think first");
    assert.equal(think.res?.stopReason, "end_turn");
    assert.equal(textOf(think.events, "agent_thought_chunk"), "User wants the answer. It is 42.");
    assert.equal(textOf(think.events, "agent_message_chunk"), "The answer is 42.");

    const sid2 = await c.newSession(ws);
    const read = await c.prompt(sid2, "please read notes");
    assert.equal(read.res?.stopReason, "end_turn");
    assert.equal(textOf(read.events, "agent_message_chunk"), "Let me read it.notes.txt lists alpha, beta and gamma.");
    const calls = (await mock.journal()).filter((e) => e.path === "/v1/responses");
    assert.ok(calls.length >= 3, "every request went to /v1/responses");
    // aimock's journal keeps each request converted to its chat form: the function call's
    // output came back paired with its call.
    const last = calls.at(-1).body.messages;
    const output = last.find((m) => m.role === "tool");
    assert.equal(output?.tool_call_id, "call_read_1");
    assert.match(output.content, /alpha/);
    assert.equal(last.find((m) => m.tool_calls)?.tool_calls[0].id, "call_read_1");
  });
});
