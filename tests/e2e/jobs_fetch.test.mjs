// Background jobs, saved outputs and the fetch tool (issue 22), end to end over ACP with the
// official SDK client and a scripted OpenAI chat model in this test. The model starts
// `python3 -m http.server` as a background job, a later prompt fetches http://127.0.0.1:<port>/
// and gets the listing of the working folder as Markdown; the server's process is gone after
// session/close, and (in a second agent) after a SIGKILL of lousho. A 200,000-line build log is
// cut for the model, which greps the saved file the cut names and finds the first error.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { withClient, acp } from "./lib/sdk-client.mjs";
import { startAgent, finishAgent } from "./lib/agent-process.mjs";
import { tempDir, workspace } from "./lib/env.mjs";
import { startChatModel, textOfContent } from "./lib/chat-model.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";

const call = (id, name, args) => [
  [{ role: "assistant", content: "" }],
  [{ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: JSON.stringify(args) } }] }],
  [{}, "tool_calls"],
];
const say = (text) => [[{ role: "assistant", content: "" }], [{ content: text }], [{}, "stop"]];

// The scripted model: "SERVE <port>", "FETCH <port>" and "BUILD" start a tool call; a tool
// result is answered (a cut build log with a grep of its saved file first).
function startModel(t) {
  let n = 0;
  return startChatModel(t, (json) => {
    const last = json.messages.at(-1);
    const text = textOfContent(last.content);
    n += 1;
    if (last.role === "tool") {
      const saved = /saved in (\S+)/.exec(text);
      if (saved && !text.includes("error:")) return call(`call_${n}`, "grep", { pattern: "error:", path: saved[1] });
      return say(`TOOL SAID: ${text.slice(0, 200)}`);
    }
    const serve = /^SERVE (\d+)/.exec(text);
    if (serve)
      return call(`call_${n}`, "bash", { command: `exec python3 -m http.server ${serve[1]} --bind 127.0.0.1`, background: true });
    const get = /^FETCH (\d+)/.exec(text);
    if (get) return call(`call_${n}`, "fetch", { url: `http://127.0.0.1:${get[1]}/` });
    if (text.startsWith("BUILD"))
      return call(`call_${n}`, "bash", {
        command: "python3 -c \"import sys\nfor i in range(1, 200001):\n  print('src/a.c:9: error: first' if i == 123457 else 'cc -c f%d.c' % i)\"",
      });
    return say("Noted.");
  });
}

function setUp(t, model) {
  const ws = workspace(t);
  fs.writeFileSync(path.join(ws, "hello-e2e.txt"), "hi\n");
  const spec = writeAgentSpec(tempDir(t, "lousho-jobs-spec-"), {
    name: "jobs",
    model: "openai/gpt-4o-mini",
    instructions: "You are the jobs test agent.",
    tools: ["read", "grep", "bash", "fetch"],
    permissions: { "*": "allow" },
    providers: {
      openai: { api: "openai-chat", baseUrl: `http://127.0.0.1:${model.port}/v1`, apiKeyEnv: "OPENAI_API_KEY" },
    },
  });
  return { ws, spec, env: { OPENAI_API_KEY: "test" } };
}

// A port nothing listens on now.
const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

// Polls `check` every 20 ms for at most `ms` (a bound, not a timing assertion).
async function eventually(check, ms = 10000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

const accepts = (port) =>
  new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1", () => {
      s.end();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });

// The pid of the http.server serving `port`, from /proc.
function serverPid(port) {
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    let cmd = "";
    try {
      cmd = fs.readFileSync(`/proc/${d}/cmdline`, "utf8");
    } catch {
      continue;
    }
    if (cmd.includes("http.server") && cmd.split("\0").includes(String(port))) return Number(d);
  }
  return undefined;
}

// Gone: no such process, or a zombie waiting for its parent.
function gone(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] === "Z";
  } catch {
    return true;
  }
}

const toolResult = (events) =>
  events
    .filter((e) => e.kind === "update" && e.update.sessionUpdate === "tool_call_update" && e.update.status === "completed")
    .map((e) => JSON.stringify(e.update.content ?? []))
    .join("\n");

test("a background http.server answers a later fetch and is gone after session/close", { timeout: 60000 }, async (t) => {
  const model = await startModel(t);
  const { ws, spec, env } = setUp(t, model);
  const port = await freePort();
  const agent = startAgent(t, { spec, env, cwd: ws });
  let pid;
  await withClient(agent, async (c) => {
    const sid = await c.newSession(ws);
    const started = await c.prompt(sid, `SERVE ${port}`);
    assert.equal(started.res?.stopReason, "end_turn", started.error?.message);
    assert.match(toolResult(started.events), /Started background job job1/);
    assert.ok(await eventually(() => accepts(port)), "the server listens");
    pid = serverPid(port);
    assert.ok(pid, "the server's process is found");

    const fetched = await c.prompt(sid, `FETCH ${port}`);
    assert.equal(fetched.res?.stopReason, "end_turn", fetched.error?.message);
    const request = model.requests.at(-1);
    const result = textOfContent(request.messages.at(-1).content);
    assert.match(result, /hello-e2e\.txt/, "the directory listing, as Markdown");
    assert.match(result, /\[hello-e2e\.txt\]\(hello-e2e\.txt\)/);
    // The second prompt's request told the model of the running job.
    const note = JSON.stringify(model.requests.find((r) => JSON.stringify(r).includes("Background jobs of this session")));
    assert.match(note ?? "", /job1/, "the running job is in the model's context");

    await c.request(acp.methods.agent.session.close, { sessionId: sid });
    assert.ok(await eventually(() => gone(pid)), `the server (pid ${pid}) ended with the session`);
  });
  await finishAgent(agent);
});

test("a background job is gone after lousho is killed with SIGKILL", { timeout: 60000 }, async (t) => {
  const model = await startModel(t);
  const { ws, spec, env } = setUp(t, model);
  const port = await freePort();
  const agent = startAgent(t, { spec, env, cwd: ws });
  let pid;
  await withClient(agent, async (c) => {
    const sid = await c.newSession(ws);
    const started = await c.prompt(sid, `SERVE ${port}`);
    assert.equal(started.res?.stopReason, "end_turn", started.error?.message);
    assert.ok(await eventually(() => accepts(port)), "the server listens");
    pid = serverPid(port);
    assert.ok(pid);
    agent.child.kill("SIGKILL");
    await agent.exited;
  }).catch(() => {}); // the connection ends with the agent
  assert.ok(await eventually(() => gone(pid)), `the server (pid ${pid}) ended with lousho`);
});

test("a 200,000-line build log keeps its first error reachable through the saved output", { timeout: 120000 }, async (t) => {
  const model = await startModel(t);
  const { ws, spec, env } = setUp(t, model);
  const agent = startAgent(t, { spec, env, cwd: ws });
  await withClient(agent, async (c) => {
    const sid = await c.newSession(ws);
    const built = await c.prompt(sid, "BUILD");
    assert.equal(built.res?.stopReason, "end_turn", built.error?.message);
    const bashResult = textOfContent(model.requests[1].messages.at(-1).content);
    assert.match(bashResult, /^cc -c f1\.c\n/, "the head is kept");
    assert.match(bashResult, /cc -c f200000\.c/, "the tail is kept");
    assert.doesNotMatch(bashResult, /error: first/, "the error is not in the cut view");
    const saved = /saved in (\S+)/.exec(bashResult)[1];
    assert.ok(saved.includes(".outputs"), saved);
    const grepResult = textOfContent(model.requests[2].messages.at(-1).content);
    assert.match(grepResult, /src\/a\.c:9: error: first/, "grep of the saved file finds the first error");
    assert.equal(fs.readFileSync(saved, "utf8").split("\n").length, 200001, "the whole log is saved");
  });
  await finishAgent(agent);
});
