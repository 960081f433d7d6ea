// A server whose prompts and resources change while the session runs (fixtures/mcp-list-changing.mjs,
// the official TypeScript SDK over stdio): its notifications/prompts/list_changed makes lousho
// list the prompts again, and the editor gets available_commands_update with the new command,
// which then runs; the RPC door's get_commands shows it too. Its resource list is kept between
// the model's listings (the server promised to say when it changes) and listed again after
// notifications/resources/list_changed.
import test from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { withAgent } from "./lib/sdk-client.mjs";
import { e2eDir, tempDir, workspace } from "./lib/env.mjs";
import { startCommandModel, textOfContent } from "./lib/chat-model.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { RpcHost } from "./lib/rpc-host.mjs";

const fixture = path.join(e2eDir, "fixtures/mcp-list-changing.mjs");

function setUp(t, model) {
  const home = tempDir(t, "lousho-mcp-lc-home-");
  const spec = writeAgentSpec(tempDir(t, "lousho-mcp-lc-spec-"), {
    name: "mcp-list-changed",
    model: "openai/gpt-4o-mini",
    instructions: "You are a test agent.",
    tools: ["read"],
    maxSteps: 4,
    permissions: [{ tool: "*", pattern: "*", action: "allow" }],
    mcp: { startTimeoutMs: 60000 },
    mcp_servers: { lc: { command: process.execPath, args: [fixture] } },
    providers: {
      openai: { api: "openai-chat", baseUrl: `http://127.0.0.1:${model.port}/v1`, apiKeyEnv: "OPENAI_API_KEY" },
    },
  });
  return { spec, env: { OPENAI_API_KEY: "test", LOUSHO_HOME: home, HOME: home } };
}

const toolResult = (body) => textOfContent(body.messages.at(-1).content);
const userTexts = (body) => body.messages.filter((m) => m.role === "user").map((m) => textOfContent(m.content));

test("ACP: a new prompt becomes a command (available_commands_update again), new resources are listed", { timeout: 120000 }, async (t) => {
  const model = await startCommandModel(t);
  const { spec, env } = setUp(t, model);
  const ws = workspace(t);
  await withAgent(t, { spec, env, cwd: ws }, async (c) => {
    const sid = await c.newSession(ws);
    const commandsWith = (name) => (e) =>
      e.sessionId === sid && e.update.sessionUpdate === "available_commands_update" && e.update.availableCommands.some((x) => x.name === name);
    const first = await c.waitFor(commandsWith("mcp:lc:first"), "command list with mcp:lc:first");
    assert.ok(!first.update.availableCommands.some((x) => x.name === "mcp:lc:second"));

    let r = await c.prompt(sid, 'CALL mcp__lc__add_prompt {"name":"second"}');
    assert.equal(r.res?.stopReason, "end_turn", r.error?.message);
    assert.equal(toolResult(model.requests.at(-1)), "added prompt second");
    const again = await c.waitFor(commandsWith("mcp:lc:second"), "available_commands_update with mcp:lc:second");
    const byName = Object.fromEntries(again.update.availableCommands.map((x) => [x.name, x]));
    assert.equal(byName["mcp:lc:second"].description, "The second prompt");
    assert.ok(byName["mcp:lc:first"], "the other prompts stay");
    r = await c.prompt(sid, "/mcp:lc:second");
    assert.equal(r.res?.stopReason, "end_turn", r.error?.message);
    assert.equal(userTexts(model.requests.at(-1)).at(-1), "Prompt second speaking.");

    // Resources: listed once and kept, listed again after the server said they changed.
    for (let i = 0; i < 2; i++) {
      r = await c.prompt(sid, "LIST RESOURCES");
      assert.equal(r.res?.stopReason, "end_turn", r.error?.message);
      const listed = toolResult(model.requests.at(-1));
      assert.match(listed, /memo:\/\/first/);
      assert.doesNotMatch(listed, /memo:\/\/second/);
    }
    r = await c.prompt(sid, "CALL mcp__lc__list_count {}");
    assert.equal(toolResult(model.requests.at(-1)), "resources/list answered 1 time(s)");
    r = await c.prompt(sid, 'CALL mcp__lc__add_resource {"name":"second"}');
    assert.equal(toolResult(model.requests.at(-1)), "added resource second");
    r = await c.prompt(sid, "LIST RESOURCES");
    assert.match(toolResult(model.requests.at(-1)), /memo:\/\/first[^]*memo:\/\/second|memo:\/\/second[^]*memo:\/\/first/);
    r = await c.prompt(sid, "CALL mcp__lc__list_count {}");
    assert.equal(toolResult(model.requests.at(-1)), "resources/list answered 2 time(s)");
  });
});

test("RPC: get_commands shows a prompt the server added", { timeout: 60000 }, async (t) => {
  const model = await startCommandModel(t);
  const { spec, env } = setUp(t, model);
  const host = new RpcHost(t, { spec, cwd: workspace(t), env });
  const names = async () => (await host.command({ type: "get_commands" })).data.commands.map((x) => x.name);
  assert.ok((await names()).includes("mcp:lc:first"));
  assert.ok(!(await names()).includes("mcp:lc:third"));
  await host.prompt('CALL mcp__lc__add_prompt {"name":"third"}');
  // The prompts are listed again on a thread of their own: asked until they are (bounded).
  let listed = [];
  for (let i = 0; i < 200 && !listed.includes("mcp:lc:third"); i++) listed = await names();
  assert.ok(listed.includes("mcp:lc:third"), listed.join(","));
  await host.prompt("/mcp:lc:third");
  assert.equal(userTexts(model.requests.at(-1)).at(-1), "Prompt third speaking.");
  await host.finish();
});
