// MCP prompts, resources and structured output end to end: @modelcontextprotocol/server-everything
// over stdio (the spec's) and streamable HTTP (the editor's), driven over ACP by the official SDK
// and over RPC, with a scripted loopback model. Its prompts are slash commands, the model lists
// and reads its resources through mcp_resource, links in tool results reach the editor as
// resource_link content, an editor's link to a server's resource is read into the prompt, and
// structured results come back as JSON. A second process loading the session shows the same.
import test, { after } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { withAgent, acp, sleep } from "./lib/sdk-client.mjs";
import { e2eDir, tempDir, workspace } from "./lib/env.mjs";
import { startCommandModel, textOfContent } from "./lib/chat-model.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { freePort, startServerProcess } from "./lib/server-process.mjs";
import { RpcHost } from "./lib/rpc-host.mjs";

const everything = path.join(e2eDir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const servers = [];
after(() => Promise.all(servers.map((s) => s.stop())));

async function httpEverything() {
  const port = await freePort();
  const server = await startServerProcess(process.execPath, [everything, "streamableHttp"], {
    env: { PORT: String(port) },
    ready: new RegExp(`(listening|running) on port ${port}$`),
    stream: "stderr",
  });
  servers.push(server);
  return `http://127.0.0.1:${port}/mcp`;
}

function setUp(t, model) {
  const home = tempDir(t, "lousho-mcp-content-home-");
  const spec = writeAgentSpec(tempDir(t, "lousho-mcp-content-spec-"), {
    name: "mcp-content",
    model: "openai/gpt-4o-mini",
    instructions: "You are a test agent.",
    tools: ["read"],
    maxSteps: 4,
    mcp: { startTimeoutMs: 15000 },
    mcp_servers: { everything: { command: "node", args: [everything, "stdio"] } },
    providers: {
      openai: { api: "openai-chat", baseUrl: `http://127.0.0.1:${model.port}/v1`, apiKeyEnv: "OPENAI_API_KEY" },
    },
  });
  return { spec, env: { OPENAI_API_KEY: "test", LOUSHO_HOME: home, HOME: home } };
}

const userTexts = (body) => body.messages.filter((m) => m.role === "user").map((m) => textOfContent(m.content));
const toolResult = (body) => textOfContent(body.messages.at(-1).content);
const completed = (events) => events.find((e) => e.update?.sessionUpdate === "tool_call_update" && e.update.status === "completed")?.update;

test("ACP: prompts as commands, resources for the model and the editor, structured output, reload", { timeout: 120000 }, async (t) => {
  const model = await startCommandModel(t);
  const { spec, env } = setUp(t, model);
  const ws = workspace(t);
  const web = await httpEverything();
  let sid;
  await withAgent(t, { spec, env, cwd: ws }, async (c) => {
    sid = await c.newSession(ws, [{ name: "web", type: "http", url: web, headers: [] }]);

    await t.test("prompts are listed as /mcp:<server>:<prompt> with their arguments as the hint", async () => {
      // Sent just after the answer to session/new.
      const commands = () => c.events.find((e) => e.sessionId === sid && e.update?.sessionUpdate === "available_commands_update");
      for (let i = 0; i < 400 && !commands(); i++) await sleep(25);
      const update = commands().update;
      const byName = Object.fromEntries(update.availableCommands.map((x) => [x.name, x]));
      for (const server of ["everything", "web"]) {
        assert.ok(byName[`mcp:${server}:simple-prompt`], Object.keys(byName).join(","));
        assert.deepEqual(byName[`mcp:${server}:args-prompt`].input, { hint: "city [state]" });
        assert.equal(byName[`mcp:${server}:args-prompt`].description, "A prompt with two arguments, one required and one optional");
      }
      assert.equal(byName["mcp:everything:simple-prompt"].input, undefined, "no arguments: no input");
    });

    await t.test("a prompt with named and positional arguments becomes the user's turn (stdio)", async () => {
      const r = await c.prompt(sid, "/mcp:everything:args-prompt state=Texas Austin");
      assert.equal(r.res?.stopReason, "end_turn", r.error?.message);
      assert.deepEqual(userTexts(model.requests.at(-1)).at(-1), "What's weather in Austin, Texas?");
    });

    await t.test("a prompt with an embedded resource (HTTP)", async () => {
      const r = await c.prompt(sid, "/mcp:web:resource-prompt Text 2");
      assert.equal(r.res?.stopReason, "end_turn", r.error?.message);
      const user = model.requests.at(-1).messages.at(-1);
      const text = textOfContent(user.content);
      assert.match(text, /This prompt includes the Text resource with id: 2/);
      assert.match(text, /Contents of demo:\/\/resource\/dynamic\/text\/2:/);
    });

    await t.test("a prompt missing its required argument: the error reaches the user, the session goes on", async () => {
      const r = await c.prompt(sid, "/mcp:everything:args-prompt");
      assert.equal(r.res?.stopReason, "end_turn", r.error?.message);
      assert.match(userTexts(model.requests.at(-1)).at(-1), /needs city \(Name of the city\); usage: \/mcp:everything:args-prompt city \[state\]/);
    });

    await t.test("the model lists the resources and reads one", async () => {
      let r = await c.prompt(sid, "LIST RESOURCES");
      assert.equal(r.res?.stopReason, "end_turn", r.error?.message);
      const listed = toolResult(model.requests.at(-1));
      // The editor's servers first, then the spec's.
      assert.match(listed, /^MCP server 'web':\n[^]*\nMCP server 'everything':\n/);
      assert.ok(listed.includes("\n- demo://resource/static/document/architecture.md (architecture.md, text/markdown)"), listed.slice(0, 500));
      assert.match(listed, /Resource templates \(read a URI that fits one\):\n(- .*\n)*- demo:\/\/resource\/dynamic\/text\/\{resourceId\}/);
      assert.equal(r.events.find((e) => e.update?.sessionUpdate === "tool_call").update.title, "List MCP resources");
      assert.ok(r.events.some((e) => e.kind === "permission"), "asked first, as MCP tools are");

      r = await c.prompt(sid, "READ demo://resource/dynamic/text/3");
      assert.equal(r.res?.stopReason, "end_turn", r.error?.message);
      assert.match(toolResult(model.requests.at(-1)), /^Contents of demo:\/\/resource\/dynamic\/text\/3:\n/);
      const shown = completed(r.events).content.find((x) => x.content?.type === "resource");
      assert.equal(shown?.content.resource.uri, "demo://resource/dynamic/text/3", JSON.stringify(completed(r.events).content));
    });

    await t.test("resource links in a tool result reach the editor as resource_link content", async () => {
      const r = await c.prompt(sid, 'CALL mcp__everything__get-resource-links {"count": 2}');
      assert.equal(r.res?.stopReason, "end_turn", r.error?.message);
      const links = completed(r.events).content.filter((x) => x.content?.type === "resource_link").map((x) => x.content);
      assert.equal(links.length, 2, JSON.stringify(completed(r.events).content));
      assert.match(links[0].uri, /^demo:\/\/resource\/dynamic\/(text|blob)\/1$/);
      assert.ok(links[0].name);
      assert.match(toolResult(model.requests.at(-1)), /\]\(demo:\/\/resource\/dynamic\/(text|blob)\/2\)/, "the model gets them as text");
    });

    await t.test("structured output: JSON for the model, indented for the user", async () => {
      const r = await c.prompt(sid, 'CALL mcp__web__get-structured-content {"location": "Chicago"}');
      assert.equal(r.res?.stopReason, "end_turn", r.error?.message);
      const expected = { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 };
      assert.deepEqual(JSON.parse(toolResult(model.requests.at(-1))), expected);
      const text = completed(r.events).content.find((x) => x.content?.type === "text").content.text;
      assert.deepEqual(JSON.parse(text), expected);
      assert.match(text, /^\{\n  "conditions" : "Light rain \/ drizzle",\n/);
      assert.doesNotMatch(text, /output schema/, "it fits its schema");
    });

    await t.test("an editor's link to a server's resource is read into the prompt", async () => {
      const uri = "demo://resource/static/document/features.md";
      const res = await c.request(acp.methods.agent.session.prompt, {
        sessionId: sid,
        prompt: [
          { type: "text", text: "summarize this" },
          { type: "resource_link", uri, name: "features.md" },
          { type: "resource_link", uri: "https://example.com/elsewhere", name: "elsewhere" },
        ],
      });
      assert.equal(res.stopReason, "end_turn");
      const text = textOfContent(model.requests.at(-1).messages.at(-1).content);
      assert.match(text, /\[features.md\]\(demo:\/\/resource\/static\/document\/features.md\)/);
      assert.match(text, /Contents of demo:\/\/resource\/static\/document\/features.md:\n/);
      assert.match(text, /\[elsewhere\]\(https:\/\/example.com\/elsewhere\)$/, "a link to no server's resource stays a link");
    });
  });

  await t.test("a new process loading the session shows the expanded prompts and the results", async () => {
    await withAgent(t, { spec, env, cwd: ws }, async (c) => {
      await c.request(acp.methods.agent.session.load, { sessionId: sid, cwd: ws, mcpServers: [] });
      const replay = c.events.filter((e) => e.sessionId === sid).map((e) => e.update);
      const users = replay.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text ?? "");
      assert.ok(users.includes("What's weather in Austin, Texas?"), users.join(" | "));
      assert.ok(users.some((u) => /Contents of demo:\/\/resource\/static\/document\/features.md/.test(u)), "the read link");
      const structured = replay.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
      assert.ok(
        structured.some((u) => (u.content ?? []).some((x) => x.content?.type === "resource_link")),
        "the links come back as resource_link content",
      );
      assert.ok(structured.some((u) => (u.content ?? []).some((x) => /^\{\n  "conditions"/.test(x.content?.text ?? ""))));
    });
  });
});

test("RPC: get_commands lists the prompts, and one runs as a command", { timeout: 60000 }, async (t) => {
  const model = await startCommandModel(t);
  const { spec, env } = setUp(t, model);
  const host = new RpcHost(t, { spec, cwd: workspace(t), env });
  const listed = await host.command({ type: "get_commands" });
  const args = listed.data.commands.find((x) => x.name === "mcp:everything:args-prompt");
  assert.ok(args, JSON.stringify(listed.data.commands));
  assert.equal(args.source, "prompt");
  const available = await host.command({ type: "get_available_commands" });
  assert.deepEqual(available.data.commands.find((x) => x.name === "mcp:everything:args-prompt").input, { hint: "city [state]" });
  await host.prompt("/mcp:everything:args-prompt Lyon");
  assert.equal(userTexts(model.requests.at(-1)).at(-1), "What's weather in Lyon?");
  await host.prompt("/mcp:everything:simple-prompt");
  assert.equal(userTexts(model.requests.at(-1)).at(-1), "This is a simple prompt without arguments.");
  await host.finish();
});
