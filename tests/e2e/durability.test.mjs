// Every entry kind a session writes survives kill -9 and reopens through every door (issue 18).
// Process A writes each kind through a real session of the built binary (the ACP door, then the
// RPC door), every turn ends, the session file is copied (F0), the prompt NEXT goes out and its
// model request R_A is recorded, and A is killed with SIGKILL. F0 must be a byte prefix of what A
// left. Then copies of F0 are opened through each door (ACP session/load and session/resume; RPC
// --session and switch_session), NEXT is sent again, and its request body must equal R_A: the
// same messages, system prompt, tools, model and thinking level. Nothing may be repaired on the
// way (a clean file reloads clean). The model is a scripted OpenAI chat server in this test that
// records every request body.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { startAgent } from "./lib/agent-process.mjs";
import { withClient, acp } from "./lib/sdk-client.mjs";
import { tempDir, workspace } from "./lib/env.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { RpcHost } from "./lib/rpc-host.mjs";

const NEXT = "NEXT: what do you remember?";

const textOfContent = (content) =>
  typeof content === "string" ? content : (content ?? []).map((b) => b.text ?? "").join("");

// The scripted model. The last message decides the reply: a compaction's summary request, a
// stream rule's injection, a tool's result, or a directive in the user's text (CALL read, CALL
// todo, VIOLATE). NEXT is recorded and never answered: its process is killed mid-stream.
function startModel() {
  const requests = [];
  let calls = 0;
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const json = JSON.parse(body);
      requests.push(json);
      const last = json.messages.at(-1);
      const text = textOfContent(last.content);
      res.on("error", () => {});
      if (last.role === "user" && text === NEXT) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(": held\n\n"); // the process is killed before anything else arrives
        return;
      }
      const chunk = (delta, finish = null) =>
        `data: ${JSON.stringify({
          id: "c1",
          object: "chat.completion.chunk",
          model: json.model,
          choices: [{ index: 0, delta, finish_reason: finish }],
        })}\n\n`;
      const reply = (pieces) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(chunk({ role: "assistant", content: "" }));
        for (const p of pieces) res.write(chunk({ content: p }));
        res.write(chunk({}, "stop"));
        res.end("data: [DONE]\n\n");
      };
      const callTool = (name, args) => {
        calls += 1;
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(chunk({ role: "assistant", content: `Calling ${name}.` }));
        res.write(
          chunk({
            tool_calls: [
              { index: 0, id: `call_${name}_${calls}`, type: "function", function: { name, arguments: JSON.stringify(args) } },
            ],
          }),
        );
        res.write(chunk({}, "tool_calls"));
        res.end("data: [DONE]\n\n");
      };
      if (last.role === "user" && text.startsWith("<conversation>")) return reply(["SUMMARY: ", "kiwi was said."]);
      if (last.role === "tool") return reply([`The tool said ${text.length} characters.`]);
      if (last.role === "user" && text.includes("<system-interrupt")) return reply(["Here is ", "ALLOWED_TOKEN."]);
      if (text.includes("CALL read")) return callTool("read", { path: "notes.txt" });
      if (text.includes("CALL todo"))
        return callTool("todo", {
          todos: [
            { content: "write the test", status: "completed", priority: "high" },
            { content: "run it", status: "in_progress", priority: "medium" },
          ],
        });
      if (text.includes("VIOLATE")) return reply(["Sure: ", "FORBIDDEN_", "TOKEN", " and more"]);
      return reply([`Noted (${json.messages.length} messages): `, text.slice(0, 40)]);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, requests, port: server.address().port })),
  );
}

// The agent and its project: two models (the second a reasoning one, so the thinking level
// reaches the body), the tools whose entries we want, and a stream rule.
function setUp(t, model) {
  const ws = workspace(t);
  fs.mkdirSync(path.join(ws, ".lousho/rules"), { recursive: true });
  fs.writeFileSync(
    path.join(ws, ".lousho/rules/no-forbidden.md"),
    "---\ndescription: Never write the forbidden token\ncondition: \"FORBIDDEN_TOKEN\"\n---\n" +
      "Do not output the string FORBIDDEN_TOKEN. Use ALLOWED_TOKEN instead.\n",
  );
  const spec = writeAgentSpec(tempDir(t, "lousho-durable-spec-"), {
    name: "durable",
    model: "openai/gpt-4o-mini",
    models: ["openai/gpt-4o-mini", "openai/o4-mini"],
    instructions: "You are the durability test agent.",
    tools: ["read", "ls", "todo", "switch_mode"],
    providers: {
      openai: { api: "openai-chat", baseUrl: `http://127.0.0.1:${model.port}/v1`, apiKeyEnv: "OPENAI_API_KEY" },
    },
  });
  return { ws, spec, env: { OPENAI_API_KEY: "test" } };
}

const sessionsDir = (home, ws) => path.join(home, "sessions", `--${ws.slice(1).replace(/[/\\:]/g, "-")}--`);

// Waits for the model to receive NEXT (from request index `from` on); returns its body.
async function nextRequest(model, from) {
  for (let i = 0; i < 1000; i++) {
    const hit = model.requests.slice(from).find((r) => textOfContent(r.messages.at(-1).content) === NEXT);
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("NEXT never reached the model");
}

// The entry kinds of a session file, with the message roles and custom types spelled out.
function kindsOf(file) {
  const kinds = new Set();
  for (const line of fs.readFileSync(file, "utf8").trim().split("\n").slice(1)) {
    const e = JSON.parse(line);
    if (e.type === "message") kinds.add(`message:${e.message.role}${e.message.customType ? `:${e.message.customType}` : ""}`);
    else if (e.type === "custom") kinds.add(`custom:${e.customType}`);
    else kinds.add(e.type);
  }
  return kinds;
}

// Kills A once NEXT reached the model; checks that F0 is a byte prefix of what A left.
function checkPrefix(f0, file) {
  const left = fs.readFileSync(file);
  assert.ok(left.length >= f0.length, "the file did not shrink");
  assert.ok(left.subarray(0, f0.length).equals(f0), "F0 is a byte prefix of the file A left");
}

// Opens a copy of F0 through each door, sends NEXT, and compares its request with R_A.
// `config`: the ACP config options (mode, model, thinking level) the reopened session must have.
async function reopenEverywhere(t, { model, ws, spec, env, f0, name, sessionId, expected, config }) {
  const copyInto = (home) => {
    const dir = sessionsDir(home, ws);
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, name);
    fs.writeFileSync(file, f0);
    return file;
  };

  for (const method of ["load", "resume"]) {
    await t.test(`ACP session/${method}`, async (st) => {
      const home = tempDir(st, "lousho-durable-home-");
      copyInto(home);
      const agent = startAgent(st, { spec, env: { ...env, LOUSHO_HOME: home }, cwd: ws });
      const from = model.requests.length;
      let killed = false;
      await withClient(agent, async (c) => {
        const params = { sessionId, cwd: ws, mcpServers: [] };
        const opened = await c.request(acp.methods.agent.session[method], params);
        const values = Object.fromEntries(opened.configOptions.map((o) => [o.id, o.currentValue]));
        assert.deepEqual(values, config, "mode, model and thinking level are restored");
        const said = c.events
          .filter((e) => e.kind === "update" && e.update.sessionUpdate === "agent_message_chunk")
          .map((e) => e.update.content.text)
          .join("");
        assert.doesNotMatch(said, /repaired/, "a clean file reloads clean");
        c.prompt(sessionId, NEXT).catch(() => {});
        const got = await nextRequest(model, from);
        assert.deepEqual(got, expected, `the request after session/${method} is the one before the kill`);
        killed = true;
        await agent.kill();
      }).catch((e) => {
        if (!killed) throw e;
      });
      await agent.exited;
      assert.doesNotMatch(agent.stderr, /named a parent|repaired/);
      assert.equal(agent.wire.problems.length, 0, agent.wire.report());
    });
  }

  await t.test("RPC --session", async (st) => {
    const home = tempDir(st, "lousho-durable-home-");
    const file = copyInto(home);
    const host = new RpcHost(st, { spec, cwd: ws, env: { ...env, LOUSHO_HOME: home }, args: ["--session", file] });
    await host.waitFor((f) => f.type === "ready", "ready");
    const state = await host.command({ type: "get_state" });
    assert.equal(state.data.sessionId, sessionId, "the file's session is open");
    const from = model.requests.length;
    host.child.stdin.write(JSON.stringify({ id: "next", type: "prompt", message: NEXT }) + "\n");
    assert.deepEqual(await nextRequest(model, from), expected);
    assert.doesNotMatch(host.stderr, /named a parent|repaired/);
    await host.kill();
  });

  await t.test("RPC switch_session", async (st) => {
    const home = tempDir(st, "lousho-durable-home-");
    const file = copyInto(home);
    const host = new RpcHost(st, { spec, cwd: ws, env: { ...env, LOUSHO_HOME: home } });
    await host.waitFor((f) => f.type === "ready", "ready");
    await host.command({ type: "switch_session", sessionPath: file });
    const state = await host.command({ type: "get_state" });
    assert.equal(state.data.sessionId, sessionId, "the file's session is open");
    const from = model.requests.length;
    host.child.stdin.write(JSON.stringify({ id: "next", type: "prompt", message: NEXT }) + "\n");
    assert.deepEqual(await nextRequest(model, from), expected);
    assert.doesNotMatch(host.stderr, /named a parent|repaired/);
    await host.kill();
  });
}

test("entries written through the ACP door survive kill -9 and reopen through every door", { timeout: 60000 }, async (t) => {
  const model = await startModel();
  t.after(() => {
    model.server.closeAllConnections();
    model.server.close();
  });
  const { ws, spec, env } = setUp(t, model);
  const home = tempDir(t, "lousho-durable-home-");
  const a = startAgent(t, { spec, env: { ...env, LOUSHO_HOME: home }, cwd: ws });
  let sessionId, file, f0, expected;
  let killed = false;
  await withClient(a, async (c) => {
    sessionId = await c.newSession(ws);
    const ok = async (text) => {
      const { res, error } = await c.prompt(sessionId, text);
      assert.equal(error, undefined, `${text}: ${error?.message}`);
      assert.equal(res.stopReason, "end_turn", text);
    };
    const set = (configId, value) =>
      c.request(acp.methods.agent.session.setConfigOption, { sessionId, configId, value });
    await ok("remember kiwi"); // user, assistant; session_info (the first prompt names it)
    await ok("CALL read the notes"); // a tool call and its result
    await ok("CALL todo now"); // lousho.plan and lousho.todo_phases
    await set("model", "openai/o4-mini"); // model_change
    await set("thought_level", "high"); // thinking_level_change
    await ok("VIOLATE the rule"); // ttsr_injection and the rule's custom message
    await ok("/name Durable session"); // session_info
    await ok("/compact"); // compaction
    await ok("after the compaction");
    await set("mode", "plan"); // mode_change (plan mode also narrows the tools sent)
    file = path.join(sessionsDir(home, ws), fs.readdirSync(sessionsDir(home, ws))[0]);
    const kinds = kindsOf(file);
    for (const k of [
      "message:user",
      "message:assistant",
      "message:toolResult",
      "message:custom:ttsr-injection",
      "session_info",
      "model_change",
      "thinking_level_change",
      "mode_change",
      "custom:lousho.plan",
      "custom:lousho.todo_phases",
      "ttsr_injection",
      "compaction",
    ])
      assert.ok(kinds.has(k), `the file holds ${k}: ${[...kinds].join(", ")}`);
    f0 = fs.readFileSync(file);
    const from = model.requests.length;
    c.prompt(sessionId, NEXT).catch(() => {});
    expected = await nextRequest(model, from);
    killed = true;
    await a.kill();
  }).catch((e) => {
    if (!killed) throw e; // after the kill the connection's end is expected
  });
  await a.exited; // the connection may end before the exit is reported
  assert.equal(a.exitInfo.signal, "SIGKILL");
  assert.equal(a.wire.problems.length, 0, a.wire.report());
  checkPrefix(f0, file);
  // What R_A carries: the summary in place of the early turns, the rule's injection, the new
  // model and thinking level, plan mode's tools.
  assert.equal(expected.model, "o4-mini");
  assert.equal(expected.reasoning_effort, "high");
  assert.ok(expected.messages.some((m) => textOfContent(m.content).includes("SUMMARY: kiwi was said.")));
  assert.ok(expected.messages.some((m) => textOfContent(m.content).includes("<system-interrupt")));

  const config = { mode: "plan", model: "openai/o4-mini", thought_level: "high" };
  await reopenEverywhere(t, { model, ws, spec, env, f0, name: path.basename(file), sessionId, expected, config });
});

test("entries written through the RPC door survive kill -9 and reopen through every door", { timeout: 60000 }, async (t) => {
  const model = await startModel();
  t.after(() => {
    model.server.closeAllConnections();
    model.server.close();
  });
  const { ws, spec, env } = setUp(t, model);
  const home = tempDir(t, "lousho-durable-home-");
  const a = new RpcHost(t, { spec, cwd: ws, env: { ...env, LOUSHO_HOME: home } });
  await a.waitFor((f) => f.type === "ready", "ready");
  await a.prompt("remember kiwi");
  await a.command({ type: "set_session_name", name: "RPC durable" }); // session_info
  await a.command({ type: "set_model", provider: "openai", modelId: "o4-mini" }); // model_change
  await a.command({ type: "set_thinking_level", level: "medium" }); // thinking_level_change
  await a.prompt("CALL read the notes"); // tool call and result
  await a.command({ type: "bash", command: "echo durable-bash" }); // a bash execution
  await a.prompt("VIOLATE the rule"); // ttsr_injection
  await a.command({
    type: "set_todos",
    phases: [{ name: "Work", tasks: [{ content: "finish the work", status: "in_progress" }] }],
  }); // lousho.todo_phases
  await a.prompt("keep going"); // open todos: todo-reminder messages
  await a.command({ type: "compact" }); // compaction
  await a.prompt("after the compaction");
  await a.command({ type: "bash", command: "echo last-bash" }); // a bash execution, then NEXT
  const state = await a.command({ type: "get_state" });
  const file = state.data.sessionFile;
  const sessionId = state.data.sessionId;
  assert.ok(file && fs.existsSync(file), `a session file: ${file}`);
  const kinds = kindsOf(file);
  for (const k of [
    "message:user",
    "message:assistant",
    "message:toolResult",
    "message:custom:ttsr-injection",
    "message:custom:bashExecution",
    "message:custom:todo-reminder",
    "session_info",
    "model_change",
    "thinking_level_change",
    "custom:lousho.todo_phases",
    "ttsr_injection",
    "compaction",
  ])
    assert.ok(kinds.has(k), `the file holds ${k}: ${[...kinds].join(", ")}`);
  const f0 = fs.readFileSync(file);
  const from = model.requests.length;
  a.child.stdin.write(JSON.stringify({ id: "next", type: "prompt", message: NEXT }) + "\n");
  const expected = await nextRequest(model, from);
  assert.equal((await a.kill()).signal, "SIGKILL");
  checkPrefix(f0, file);
  assert.equal(expected.model, "o4-mini");
  assert.equal(expected.reasoning_effort, "medium");
  assert.ok(expected.messages.some((m) => textOfContent(m.content).includes("last-bash")), "the last bash output is sent");

  const config = { mode: "default", model: "openai/o4-mini", thought_level: "medium" };
  await reopenEverywhere(t, { model, ws, spec, env, f0, name: path.basename(file), sessionId, expected, config });
});
