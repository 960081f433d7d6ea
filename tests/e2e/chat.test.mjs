// `lousho chat` in a real terminal (issue 26): the built binary in a detached tmux session of
// 80x24 against a loopback OpenAI-chat model. Keys are sent with `tmux send-keys`, the screen is
// read with `tmux capture-pane`, and every wait polls that text until a deadline. Checked: a
// prompt with a streamed Markdown answer, a tool call whose permission prompt is answered with a
// key, Tab completion, the agent's question (ask) answered by number, Ctrl-C cancelling a slow
// stream, two Ctrl-C leaving, and a new process going on with the saved session (--continue,
// the input history, multi-line input, /resume); and plain lines when stdout is not a terminal.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { execFileSync, spawn } from "node:child_process";
import { tempDir, workspace, loushoBin, childEnv, assertBinary } from "./lib/env.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { sseChunk, textOfContent } from "./lib/chat-model.mjs";
import { pieces } from "./lib/sse-model.mjs";

const MODEL = "gpt-4o-mini";
const ANSWER =
  "# Greeting\n\nHello **there**, here is a *list*:\n\n- alpha\n- beta\n\n```\ncode line\n```\n\nThat is all.";

// The model: "hello" gets Markdown in small pieces; "write" a write call, then "Wrote it.";
// "slow" a reply that starts and never ends; "again" says how many user messages it was sent.
async function startModel(t) {
  const requests = [];
  const open = new Set();
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const json = JSON.parse(body);
      requests.push(json);
      res.writeHead(200, { "content-type": "text/event-stream" });
      const last = json.messages.at(-1);
      const said = textOfContent(last.content);
      const send = (delta, finish = null) => res.write(sseChunk(MODEL, delta, finish));
      if (last.role === "tool") {
        send({ role: "assistant", content: said.includes("blue") ? "You picked blue." : "Wrote it." });
      } else if (said.includes("ask me")) {
        const args = JSON.stringify({ question: "Which colour?", options: ["red", "blue"] });
        send({ tool_calls: [{ index: 0, id: "call_2", type: "function", function: { name: "ask", arguments: args } }] });
        send({}, "tool_calls");
        return res.end("data: [DONE]\n\n");
      } else if (said.includes("write")) {
        const args = JSON.stringify({ path: "out.txt", content: "from chat\n" });
        send({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "write", arguments: args } }] });
        send({}, "tool_calls");
        return res.end("data: [DONE]\n\n");
      } else if (said.includes("slow")) {
        open.add(res);
        return send({ role: "assistant", content: "Starting slowly" });
      } else if (said.includes("again")) {
        const users = json.messages.filter((m) => m.role === "user").length;
        send({ role: "assistant", content: `I was sent ${users} user messages.` });
      } else {
        for (const p of pieces(ANSWER, 5)) send({ content: p });
      }
      send({}, "stop");
      res.end("data: [DONE]\n\n");
    });
  });
  t.after(() => {
    for (const r of open) r.destroy();
    server.closeAllConnections();
    server.close();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: server.address().port, requests };
}

// A tmux server of the test's own (its socket, no user config), one window of 80x24.
function startTmux(t) {
  const socket = `lousho-chat-${process.pid}-${Date.now()}`;
  const tmux = (...args) => execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
  t.after(() => {
    try {
      tmux("kill-server");
    } catch {}
  });
  return tmux;
}

// Starts `lousho chat ARGS` in session `name` (kept when it exits).
function startChat(tmux, name, args, { cwd, env }) {
  const vars = Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)}`);
  // A shell around it says how it ended, on the screen.
  const command = `cd ${shellQuote(cwd)} && env ${vars.join(" ")} ${shellQuote(loushoBin)} chat ${args.map(shellQuote).join(" ")}; echo "lousho exited: $?"`;
  tmux("new-session", "-d", "-s", name, "-x", "80", "-y", "24", command);
  tmux("set-option", "-t", name, "remain-on-exit", "on");
}
const shellQuote = (s) => `'${String(s).replaceAll("'", "'\\''")}'`;

function newServer(tmux) {
  // The server starts with the first session; options for later ones.
  tmux("new-session", "-d", "-s", "keep", "-x", "80", "-y", "24", "cat");
  tmux("set-option", "-g", "default-terminal", "screen-256color");
  tmux("set-option", "-g", "history-limit", "5000");
}

const screen = (tmux, name) => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", name);

// Polls the pane until `check(text)` holds, up to `ms`.
async function waitFor(tmux, name, check, what, ms = 20000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const text = screen(tmux, name);
    if (check(text)) return text;
    if (Date.now() > deadline) {
      const pane = tmux("list-panes", "-t", name, "-F", "#{pane_dead} #{pane_dead_status} #{pane_pid}").trim();
      assert.fail(`timed out waiting for ${what} (pane: ${pane}); the screen:\n${text}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
const has = (s) => (text) => text.includes(s);
// The prompt is up: its last row is the prompt alone (libedit draws it once the terminal is in
// its editing mode, so keys sent now are read as keys).
const lastRow = (text) => text.trimEnd().split("\n").at(-1);
const atPrompt = (tmux, name) => waitFor(tmux, name, (s) => lastRow(s).trim() === "›", "the prompt");
const count = (text, s) => text.split(s).length - 1;

const type = (tmux, name, text) => {
  tmux("send-keys", "-t", name, "-l", text);
  tmux("send-keys", "-t", name, "Enter");
};

test("lousho chat in tmux: Markdown, a permission prompt, Ctrl-C, and the session resumed", { timeout: 120000 }, async (t) => {
  assertBinary();
  execFileSync("tmux", ["-V"]); // setup installs tmux: its absence fails the test
  const model = await startModel(t);
  const ws = workspace(t);
  const home = tempDir(t, "lousho-chat-home-");
  const spec = writeAgentSpec(tempDir(t, "lousho-chat-spec-"), {
    name: "chat-e2e",
    model: `openai/${MODEL}`,
    instructions: "You are a test agent.",
    tools: ["read", "write", "ask"],
    providers: { openai: { api: "openai-chat", baseUrl: `http://127.0.0.1:${model.port}/v1`, apiKeyEnv: "OPENAI_API_KEY" } },
  });
  const base = childEnv({ OPENAI_API_KEY: "test", HOME: home });
  const env = { OPENAI_API_KEY: "test", HOME: home, LOUSHO_HOME: base.LOUSHO_HOME, LOUSHO_TEST_MODE: "1", XDG_STATE_HOME: "" };
  const tmux = startTmux(t);
  newServer(tmux);

  startChat(tmux, "one", [spec], { cwd: ws, env });
  await waitFor(tmux, "one", has("lousho chat · chat-e2e"), "the banner");
  await atPrompt(tmux, "one");

  // A prompt: the answer's Markdown rendered (heading text, bullets, code gutter, no markers).
  type(tmux, "one", "hello");
  let text = await waitFor(tmux, "one", has("That is all."), "the streamed answer");
  assert.match(text, /^Greeting$/m);
  assert.match(text, /^Hello there, here is a list:$/m);
  assert.match(text, /^• alpha$/m);
  assert.match(text, /^• beta$/m);
  assert.match(text, /^│ code line$/m);
  assert.ok(!text.includes("**") && !text.includes("```"), text);
  assert.equal(count(text, "Hello there"), 1, "the streamed block is drawn once");

  // Tab completes a slash command.
  await atPrompt(tmux, "one");
  tmux("send-keys", "-t", "one", "-l", "/thin");
  tmux("send-keys", "-t", "one", "Tab");
  await waitFor(tmux, "one", (s) => /› \/thinking $/m.test(s) || s.includes("› /thinking"), "the completed command");
  tmux("send-keys", "-t", "one", "C-u");
  await atPrompt(tmux, "one");

  // A tool call that asks: answered with the key y.
  type(tmux, "one", "write the file");
  await waitFor(tmux, "one", has("y allow once"), "the permission prompt");
  assert.ok(!fs.existsSync(path.join(ws, "out.txt")), "nothing written before the answer");
  tmux("send-keys", "-t", "one", "y");
  text = await waitFor(tmux, "one", has("Wrote it."), "the turn after the call");
  assert.match(text, /allowed once/);
  assert.match(text, /✓ .*out\.txt/);
  assert.match(text, /\+ from chat/);  // the diff
  assert.equal(fs.readFileSync(path.join(ws, "out.txt"), "utf8"), "from chat\n");

  // The agent's question (the ask tool): a choice picked by its number.
  await atPrompt(tmux, "one");
  type(tmux, "one", "ask me");
  await waitFor(tmux, "one", (s) => s.includes("Which colour?") && /^ {2}2\. blue$/m.test(s), "the question");
  type(tmux, "one", "2");
  await waitFor(tmux, "one", has("You picked blue."), "the answer given to the model");

  // Ctrl-C during a slow stream cancels the turn; the prompt comes back.
  await atPrompt(tmux, "one");
  type(tmux, "one", "slow please");
  await waitFor(tmux, "one", has("Starting slowly"), "the slow stream");
  tmux("send-keys", "-t", "one", "C-c");
  text = await waitFor(tmux, "one", has("(cancelled)"), "the cancelled turn");
  assert.match(text, /cancelling the turn/);
  // Two Ctrl-C at an empty prompt leave.
  await atPrompt(tmux, "one");
  tmux("send-keys", "-t", "one", "C-c");
  await waitFor(tmux, "one", has("Ctrl-C again to leave"), "the first Ctrl-C at the prompt");
  tmux("send-keys", "-t", "one", "C-c");
  await waitFor(tmux, "one", has("lousho exited: 0"), "lousho chat to exit with 0");

  // The inputs were saved in the user's history file.
  const history = fs.readFileSync(path.join(home, ".local/state/lousho/history"), "utf8");
  assert.match(history, /slow/);

  // A new process: --continue shows where the session stands; Up recalls the last input.
  startChat(tmux, "two", [spec, "--continue"], { cwd: ws, env });
  text = await waitFor(tmux, "two", has("resumed ("), "the continued session");
  assert.match(text, /last asked: slow please/);
  await atPrompt(tmux, "two");
  tmux("send-keys", "-t", "two", "Up");
  await waitFor(tmux, "two", (s) => /› slow please\s*$/m.test(s), "the input history");
  tmux("send-keys", "-t", "two", "C-u");
  // Multi-line input: a line ending in \ goes on.
  await atPrompt(tmux, "two");
  type(tmux, "two", "first line\\");
  await waitFor(tmux, "two", (s) => lastRow(s).trim() === "…", "the continuation prompt");
  type(tmux, "two", "again");
  await waitFor(tmux, "two", has("I was sent 5 user messages."), "the model given the whole history");
  const asked = model.requests.at(-1).messages.at(-1);
  assert.equal(textOfContent(asked.content), "first line\nagain");

  // /resume lists the saved sessions and opens the one picked.
  await atPrompt(tmux, "two");
  type(tmux, "two", "/resume");
  await waitFor(tmux, "two", has("Resume which session?"), "the session list");
  type(tmux, "two", "1");
  text = await waitFor(tmux, "two", (s) => count(s, "resumed (") >= 2, "the picked session");
  assert.match(text.slice(text.lastIndexOf("resumed (")), /last asked: first line\nagain/);
  await atPrompt(tmux, "two");
  tmux("send-keys", "-t", "two", "C-d");
  await waitFor(tmux, "two", has("lousho exited: 0"), "Ctrl-D to leave with 0");
});

test("lousho chat with stdout not a terminal: plain lines, no escapes", { timeout: 60000 }, async (t) => {
  assertBinary();
  const model = await startModel(t);
  const ws = workspace(t);
  const spec = writeAgentSpec(tempDir(t, "lousho-chat-spec-"), {
    name: "chat-plain",
    model: `openai/${MODEL}`,
    instructions: "You are a test agent.",
    tools: ["read"],
    providers: { openai: { api: "openai-chat", baseUrl: `http://127.0.0.1:${model.port}/v1`, apiKeyEnv: "OPENAI_API_KEY" } },
  });
  // Asynchronously: the model answers from this process.
  const child = spawn(loushoBin, ["chat", spec, "--no-session"], {
    cwd: ws,
    env: childEnv({ OPENAI_API_KEY: "test", HOME: tempDir(t, "lousho-chat-home-"), TERM: "xterm-256color" }),
    stdio: "pipe",
  });
  t.after(() => child.exitCode === null && child.kill("SIGKILL"));
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stdin.end("hello\n");
  const code = await new Promise((resolve) => child.on("close", resolve));
  assert.equal(code, 0);
  assert.ok(!out.includes("\x1b"), JSON.stringify(out));
  assert.match(out, /^Greeting$/m);
  assert.match(out, /^- alpha$/m);
  assert.match(out, /^ {4}code line$/m);
  assert.match(out, /^That is all\.$/m);
});
