// MCP servers end to end: lousho connects to @modelcontextprotocol/server-everything (a server
// we did not write) over stdio, streamable HTTP and the legacy SSE transport, driven over ACP by
// the official SDK, with @copilotkit/aimock as the model that makes the tool calls. Every line
// the binary writes is validated against the ACP schema.
import test, { after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { withAgent, sleep } from "./lib/sdk-client.mjs";
import { e2eDir, tempDir, workspace } from "./lib/env.mjs";
import { useAimock } from "./lib/aimock.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { freePort, startServerProcess } from "./lib/server-process.mjs";

const everything = path.join(e2eDir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const tapScript = path.join(e2eDir, "fixtures/mcp-tap.mjs");
const mock = useAimock("mcp.json");
const servers = []; // HTTP-mode server-everything processes

after(() => Promise.all(servers.map((s) => s.stop())));

// The model requests whose messages mention `needle` (the user's prompt), in order.
async function requestsFor(needle) {
  return (await mock.journal()).filter((e) => e.path === "/v1/chat/completions" && JSON.stringify(e.body?.messages ?? []).includes(needle));
}

// server-everything over HTTP ("streamableHttp" or "sse"), ready once it says it listens.
async function httpEverything(mode) {
  const port = await freePort();
  const server = await startServerProcess(process.execPath, [everything, mode], {
    env: { PORT: String(port) },
    ready: new RegExp(`(listening|running) on port ${port}$`),
    stream: "stderr",
  });
  servers.push(server);
  return `http://127.0.0.1:${port}`;
}

// The tap log: the pids line(s), then every message both ways.
function readTap(file) {
  if (!fs.existsSync(file)) return { pids: [], toServer: [] };
  const rows = fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  return {
    pids: rows.filter((r) => r.pids).flatMap((r) => r.pids),
    toServer: rows.filter((r) => r.dir === ">").map((r) => JSON.parse(r.line)),
  };
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor(what, cond, ms = 10000) {
  const end = performance.now() + ms;
  while (!(await cond())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

const startTimeoutMs = 15000;

// The stdio server comes from the spec, with ${VAR} expansion; the others from the editor.
function writeSpec(dir) {
  return writeAgentSpec(dir, {
    name: "mcp-e2e",
    model: "openai/gpt-4o-mini",
    instructions: "You are a test agent.",
    tools: ["read"],
    maxSteps: 4,
    // Long enough for node to start server-everything on a loaded machine; the hanging server's
    // subtest waits it out.
    mcp: { startTimeoutMs: startTimeoutMs },
    mcp_servers: {
      everything: {
        command: "node",
        args: ["${MCP_TAP}", "node", "${MCP_EVERYTHING}", "stdio"],
        env: { TAP_LOG: "${MCP_TAP_LOG}" },
      },
    },
  });
}

const toolCalls = (events, id) => events.filter((e) => e.kind === "update" && e.update.toolCallId === id);

test("MCP servers over stdio, streamable HTTP and SSE", { timeout: 180000 }, async (t) => {
  const ws = workspace(t);
  const specDir = tempDir(t, "lousho-mcp-");
  const tapLog = path.join(specDir, "tap.jsonl");
  const hangPidFile = path.join(specDir, "hang.pid");
  const spec = writeSpec(specDir);
  const web = await httpEverything("streamableHttp");
  const legacy = await httpEverything("sse");
  const env = { ...mock.openaiEnv(), MCP_TAP: tapScript, MCP_EVERYTHING: everything, MCP_TAP_LOG: tapLog };
  await withAgent(t, { spec, cwd: ws, env }, async (c) => {
    assert.deepEqual(c.init.agentCapabilities.mcpCapabilities, { http: true, sse: true });
    const sid = await c.newSession(ws, [
      { name: "web", type: "http", url: `${web}/mcp`, headers: [{ name: "Authorization", value: "Bearer test-token" }] },
      { name: "legacy", type: "sse", url: `${legacy}/sse`, headers: [] },
    ]);

    await t.test("echo over stdio: the result reaches the model, the call asked first", async () => {
      const { res, error, events } = await c.prompt(sid, "mcp echo please");
      assert.equal(error, undefined, error?.message);
      assert.equal(res.stopReason, "end_turn");
      const call = toolCalls(events, "call_echo");
      assert.equal(call[0].update.sessionUpdate, "tool_call");
      assert.equal(call[0].update.title, 'everything: echo (message: "hello from the model")');
      assert.equal(call[0].update.kind, "read", "readOnlyHint -> read");
      const asked = events.find((e) => e.kind === "permission" && e.params.toolCall.toolCallId === "call_echo");
      assert.ok(asked, "an MCP tool without a rule is asked about");
      const done = call.find((e) => e.update.status === "completed");
      assert.ok(done, "completed");
      assert.match(JSON.stringify(done.update.content), /Echo: hello from the model/);
      const reqs = await requestsFor("mcp echo please");
      assert.equal(reqs.length, 2);
      const tools = reqs[0].body.tools.map((x) => x.function.name);
      assert.ok(tools.includes("mcp__everything__echo") && tools.includes("mcp__web__echo") && tools.includes("mcp__legacy__get-sum"), tools.join(","));
      assert.match(JSON.stringify(reqs[1].body.messages), /Echo: hello from the model/);
      assert.doesNotMatch(JSON.stringify(reqs[0].body.messages), /Echo: hello/);
    });

    await t.test("get-sum over stdio", async () => {
      const { res, error } = await c.prompt(sid, "mcp sum please");
      assert.equal(error, undefined, error?.message);
      assert.equal(res.stopReason, "end_turn");
      const reqs = await requestsFor("mcp sum please");
      assert.equal(reqs.length, 2);
      assert.match(JSON.stringify(reqs[1].body.messages), /The sum of 19 and 23 is 42/);
    });

    await t.test("the tiny image comes back as image content, and goes to the model", async () => {
      const { res, error, events } = await c.prompt(sid, "mcp image please");
      assert.equal(error, undefined, error?.message);
      assert.equal(res.stopReason, "end_turn");
      const done = toolCalls(events, "call_image").find((e) => e.update.status === "completed");
      const image = done.update.content.find((x) => x.content?.type === "image");
      assert.ok(image, JSON.stringify(done.update.content).slice(0, 300));
      assert.equal(image.content.mimeType, "image/png");
      assert.ok(image.content.data.startsWith("iVBORw0KGgo"), "PNG data");
      const reqs = await requestsFor("mcp image please");
      assert.match(JSON.stringify(reqs[1].body.messages), /data:image\/png;base64,iVBORw0KGgo/);
    });

    await t.test("a long-running operation streams progress as tool_call_update", async () => {
      const { res, error, events } = await c.prompt(sid, "mcp progress please");
      assert.equal(error, undefined, error?.message);
      assert.equal(res.stopReason, "end_turn");
      const progress = toolCalls(events, "call_progress").filter(
        (e) => e.update.sessionUpdate === "tool_call_update" && e.update.status === "in_progress" && e.update.content,
      );
      assert.deepEqual(progress.map((e) => e.update.content[0].content.text), ["1/4", "2/4", "3/4", "4/4"]);
      const updates = toolCalls(events, "call_progress").map((e) => e.update.status);
      assert.equal(updates.at(-1), "completed", "progress precedes the result");
    });

    await t.test("session/cancel during a call: cancelled at once, the server told", async () => {
      const { res, error, events } = await c.prompt(sid, "mcp cancel please", {
        cancelOn: (e) => e.update.toolCallId === "call_cancel" && e.update.content?.[0]?.content?.text === "1/60",
      });
      assert.equal(error, undefined, error?.message);
      assert.equal(res.stopReason, "cancelled");
      const last = toolCalls(events, "call_cancel").at(-1);
      assert.equal(last.update.status, "failed");
      const reqs = await requestsFor("mcp cancel please");
      assert.equal(reqs.length, 1, "the model is not asked again");
      // The tools/call request and the notification naming it, as the server received them.
      await waitFor("notifications/cancelled at the server", () => {
        const { toServer } = readTap(tapLog);
        const call = toServer.find((m) => m.method === "tools/call" && m.params?.name === "trigger-long-running-operation" && m.params?.arguments?.steps === 60);
        return call && toServer.some((m) => m.method === "notifications/cancelled" && m.params?.requestId === call.id);
      });
    });

    await t.test("echo and get-sum over streamable HTTP, with the configured header", async () => {
      let r = await c.prompt(sid, "http echo please");
      assert.equal(r.error, undefined, r.error?.message);
      assert.match(JSON.stringify((await requestsFor("http echo please"))[1].body.messages), /Echo: hello over http/);
      r = await c.prompt(sid, "http sum please");
      assert.equal(r.error, undefined, r.error?.message);
      assert.match(JSON.stringify((await requestsFor("http sum please"))[1].body.messages), /The sum of 100 and 11 is 111/);
    });

    await t.test("echo over the legacy SSE transport", async () => {
      const r = await c.prompt(sid, "sse echo please");
      assert.equal(r.error, undefined, r.error?.message);
      assert.match(JSON.stringify((await requestsFor("sse echo please"))[1].body.messages), /Echo: hello over sse/);
    });

    await t.test("a missing command and a server that hangs at start do not break session/new", async () => {
      const mark = c.events.length;
      const sid2 = await c.newSession(ws, [
        { name: "ghost", command: "/nonexistent/mcp-server", args: [], env: [] },
        {
          name: "hang",
          command: "node",
          args: ["-e", `require("fs").writeFileSync(${JSON.stringify(hangPidFile)}, String(process.pid)); setInterval(() => {}, 1000)`],
          env: [],
        },
      ]);
      // The notes follow the answer to session/new.
      const notes = () =>
        c.events.slice(mark).filter((e) => e.sessionId === sid2 && e.update.sessionUpdate === "agent_message_chunk").map((e) => e.update.content.text).join("");
      await waitFor("both notes", () => (notes().match(/is not available/g) ?? []).length === 2, 2 * startTimeoutMs);
      assert.match(notes(), /MCP server 'ghost' is not available: cannot run \/nonexistent\/mcp-server/);
      // The start budget ends, or (on a busy machine, where starting the process took some of it)
      // the initialize request's share of it, whichever is seen first: both say the same.
      assert.match(
        notes(),
        new RegExp(`MCP server 'hang' is not available: did not (start within ${startTimeoutMs}|answer initialize within \\d+) ms`),
      );
      // The spec's server works in this session: its own process.
      const { res, error } = await c.prompt(sid2, "mcp sum please");
      assert.equal(error, undefined, error?.message);
      assert.equal(res.stopReason, "end_turn");
      assert.ok(!alive(Number(fs.readFileSync(hangPidFile, "utf8"))), "the hanging server was stopped");
    });
  });
  const { pids } = readTap(tapLog);
  assert.equal(pids.length, 4, "two sessions, each with its own tap and server-everything");
  for (const pid of pids) assert.ok(!alive(pid), `process ${pid} outlived the agent`);
});
