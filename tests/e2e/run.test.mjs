// `lousho run` as a CI job runs it (issue 26): the built binary against a loopback OpenAI-chat
// model. --json with a tool call, every line checked against docs/run.schema.json (ajv); each
// exit code (0 answered, 1 error, 2 usage, 3 refused, 4 limit, 130 cancelled by SIGINT); and
// --continue across two runs.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { spawn } from "node:child_process";
import Ajv from "ajv";
import { tempDir, workspace, loushoBin, childEnv, repoRoot, assertBinary } from "./lib/env.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { startChatModel, sseChunk, textOfContent } from "./lib/chat-model.mjs";

const schema = JSON.parse(fs.readFileSync(path.join(repoRoot, "docs/run.schema.json"), "utf8"));
const validateLine = new Ajv({ allErrors: true, strict: false }).compile(schema);

const toolCall = (id, name, args) => [
  [{ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: JSON.stringify(args) } }] }],
  [{}, "tool_calls"],
];
const say = (text) => [[{ role: "assistant", content: text }], [{}, "stop"]];

// The model: the first request of a prompt asks for `call` (when given), the next answers.
function modelFor(t, call) {
  return startChatModel(t, (body) => {
    const last = body.messages.at(-1);
    if (call && last.role === "user") return toolCall("call_1", call.name, call.args);
    return say(last.role === "tool" ? "Done: " + textOfContent(last.content).slice(0, 20) : "Hello.");
  });
}

function specFor(t, port, extra = {}) {
  return writeAgentSpec(tempDir(t, "lousho-run-spec-"), {
    name: "run-e2e",
    model: "openai/gpt-4o-mini",
    instructions: "You are a test agent.",
    tools: ["read", "write"],
    providers: {
      openai: { api: "openai-chat", baseUrl: `http://127.0.0.1:${port}/v1`, apiKeyEnv: "OPENAI_API_KEY" },
    },
    ...extra,
  });
}

// Runs `lousho run ARGS` in `cwd`; resolves to {code, signal, stdout, stderr, lines}.
// `onStdout(text, child)` sees stdout as it grows.
function run(t, args, { cwd, env = { OPENAI_API_KEY: "test" }, input = "", onStdout } = {}) {
  assertBinary();
  const child = spawn(loushoBin, ["run", ...args], { cwd, env: childEnv(env), stdio: "pipe" });
  t.after(() => child.exitCode === null && child.kill("SIGKILL"));
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
    onStdout?.(stdout, child);
  });
  child.stderr.on("data", (d) => (stderr += d));
  child.stdin.end(input);
  return new Promise((resolve) =>
    child.on("close", (code, signal) => {
      const lines = stdout.split("\n").filter((l) => l.length > 0);
      resolve({ code, signal, stdout, stderr, lines });
    }),
  );
}

// Every line parses and fits the documented shape; start first, result last.
function checkJsonLines(r) {
  const objects = r.lines.map((l) => JSON.parse(l));
  for (const o of objects) assert.ok(validateLine(o), `${JSON.stringify(o)}: ${JSON.stringify(validateLine.errors)}`);
  assert.equal(objects[0].type, "start");
  assert.equal(objects[0].version, 1);
  assert.equal(objects.at(-1).type, "result");
  assert.equal(objects.filter((o) => o.type === "start" || o.type === "result").length, 2);
  return objects;
}

test("--json with a tool call: every line has the documented shape", { timeout: 60000 }, async (t) => {
  const model = await modelFor(t, { name: "read", args: { path: "notes.txt" } });
  const ws = workspace(t);
  const r = await run(t, [specFor(t, model.port), "--json", "--no-session", "read the notes"], { cwd: ws });
  assert.equal(r.code, 0, r.stderr);
  const objects = checkJsonLines(r);
  const types = objects.map((o) => o.type);
  for (const type of ["agent_start", "turn_start", "message_update", "tool_execution_start", "tool_execution_end", "agent_end"])
    assert.ok(types.includes(type), `${type} missing from ${types}`);
  const end = objects.find((o) => o.type === "tool_execution_end");
  assert.equal(end.toolName, "read");
  assert.equal(end.isError, false);
  const result = objects.at(-1);
  assert.equal(result.exitCode, 0);
  assert.equal(result.stopReason, "end_turn");
  assert.match(result.answer, /^Done: /);
  assert.equal(result.sessionFile, null);
  assert.equal(model.requests.length, 2);
});

test("the answer on stdout, the tool call on stderr", { timeout: 60000 }, async (t) => {
  const model = await modelFor(t, { name: "read", args: { path: "notes.txt" } });
  const ws = workspace(t);
  // The prompt on stdin, the spec as the one argument.
  const r = await run(t, [specFor(t, model.port), "--no-session"], { cwd: ws, input: "read the notes\n" });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Done: /);
  assert.match(r.stderr, /✓ .*notes\.txt/);
  assert.equal(textOfContent(model.requests[0].messages.at(-1).content).trim(), "read the notes");
});

test("exit codes", { timeout: 90000 }, async (t) => {
  const write = { name: "write", args: { path: "out.txt", content: "x\n" } };
  const model = await modelFor(t, write);
  const ws = workspace(t);
  const spec = specFor(t, model.port);

  await t.test("3: a call that would ask is refused, and reported", async () => {
    const r = await run(t, [spec, "--json", "--no-session", "write it"], { cwd: ws });
    assert.equal(r.code, 3, r.stderr);
    const objects = checkJsonLines(r);
    const refused = objects.find((o) => o.type === "permission_refused");
    assert.equal(refused.toolName, "write");
    assert.equal(refused.suggestion, "--allow 'write:out.txt'");
    assert.equal(objects.at(-1).refused, 1);
    assert.match(r.stderr, /refused: .*--allow 'write:out.txt'/);
    assert.ok(!fs.existsSync(path.join(ws, "out.txt")));
  });

  await t.test("0: --allow lets it run", async () => {
    const r = await run(t, [spec, "--no-session", "--allow", "write:*.txt", "write it"], { cwd: ws });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(fs.readFileSync(path.join(ws, "out.txt"), "utf8"), "x\n");
  });

  await t.test("2: usage", async () => {
    const none = await run(t, [spec, "--no-session"], { cwd: ws, input: "" });
    assert.equal(none.code, 2, none.stderr);
    assert.match(none.stderr, /no prompt/);
    const bad = await run(t, ["--no-such-flag", "hi"], { cwd: ws });
    assert.equal(bad.code, 2, bad.stderr);
    const both = await run(t, [spec, "--no-session", "--continue", "hi"], { cwd: ws });
    assert.equal(both.code, 2, both.stderr);
    const pattern = await run(t, [spec, "--no-session", "--allow", ":x", "hi"], { cwd: ws });
    assert.equal(pattern.code, 2, pattern.stderr);
  });

  await t.test("1: no key for the model", async () => {
    const r = await run(t, [spec, "--json", "--no-session", "hi"], { cwd: ws, env: {} });
    assert.equal(r.code, 1, r.stderr);
    const objects = r.lines.map((l) => JSON.parse(l));
    for (const o of objects) assert.ok(validateLine(o), JSON.stringify(validateLine.errors));
    assert.equal(objects.at(-1).stopReason, "error");
    assert.match(objects.at(-1).error, /OPENAI_API_KEY/);
  });

  await t.test("4: max_turn_requests", async () => {
    const limited = specFor(t, model.port, { maxSteps: 1 });
    const r = await run(t, [limited, "--json", "--no-session", "--yes", "write it"], { cwd: ws });
    assert.equal(r.code, 4, r.stderr);
    assert.equal(checkJsonLines(r).at(-1).stopReason, "max_turn_requests");
  });
});

test("130: SIGINT cancels the turn through the engine", { timeout: 60000 }, async (t) => {
  // A model that starts its reply and never ends it.
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(sseChunk("gpt-4o-mini", { role: "assistant", content: "Thinking about it" }));
    });
  });
  t.after(() => server.closeAllConnections() || server.close());
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const ws = workspace(t);
  let signalled = false;
  const r = await run(t, [specFor(t, server.address().port), "--json", "--no-session", "hi"], {
    cwd: ws,
    // Once the reply streams, the turn runs: Ctrl-C.
    onStdout: (text, child) => {
      if (!signalled && text.includes('"message_update"')) {
        signalled = true;
        child.kill("SIGINT");
      }
    },
  });
  assert.ok(signalled);
  assert.equal(r.code, 130, r.stderr);
  const result = checkJsonLines(r).at(-1);
  assert.equal(result.stopReason, "cancelled");
  assert.match(r.stderr, /cancelling/);
});

test("--continue carries the conversation across two runs", { timeout: 60000 }, async (t) => {
  const model = await modelFor(t, null);
  const ws = workspace(t);
  const spec = specFor(t, model.port);
  const first = await run(t, [spec, "--json", "remember the word PAPAYA"], { cwd: ws });
  assert.equal(first.code, 0, first.stderr);
  const start1 = JSON.parse(first.lines[0]);
  assert.ok(start1.sessionFile, "the first run saves its session");
  const second = await run(t, [spec, "--json", "--continue", "which word?"], { cwd: ws });
  assert.equal(second.code, 0, second.stderr);
  const start2 = checkJsonLines(second)[0];
  assert.equal(start2.sessionId, start1.sessionId);
  assert.equal(start2.sessionFile, start1.sessionFile);
  const seen = model.requests[1].messages.map((m) => textOfContent(m.content)).join("\n");
  assert.match(seen, /PAPAYA/);
  // --session ID names the same one.
  const third = await run(t, [spec, "--json", "--session", start1.sessionId, "again"], { cwd: ws });
  assert.equal(third.code, 0, third.stderr);
  assert.equal(JSON.parse(third.lines[0]).sessionFile, start1.sessionFile);
});
