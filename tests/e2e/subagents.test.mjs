// Subagents (issue 22), end to end with the official ACP SDK client and a loopback OpenAI-chat
// model. The parent model calls `task` twice in one message; each child (told apart by its
// instructions) reads a file through the editor and one runs a command the editor is asked
// about, naming the subagent; both children show as the task calls' content while they run
// (with `_meta["lousho/subagent"]`), and the parent's next request holds both answers. A second
// prompt starts two children that run `sleep`, and the cancel ends both: the task calls are
// failed and the sleeps gone before the prompt's answer. Then a new process loads the session:
// the replay shows both tasks with their answers, and each child's history is in a file of its
// own beside the parent's.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { withAgent, acp } from "./lib/sdk-client.mjs";
import { tempDir } from "./lib/env.mjs";
import { startChatModel, textOfContent } from "./lib/chat-model.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";

const SLEEP = "sleep 31.7";

const toolCall = (id, name, args) => ({
  index: 0,
  id,
  type: "function",
  function: { name, arguments: JSON.stringify(args) },
});
const calls = (...list) => [
  [{ role: "assistant", content: "" }],
  [{ tool_calls: list.map((c, index) => ({ ...c, index })) }],
  [{}, "tool_calls"],
];
// A read's result without its line number ("1\tapple" -> "apple").
const lineText = (s) => s.split("\t").at(-1).trim();
const say = (text) => [[{ role: "assistant", content: "" }], [{ content: text }], [{}, "stop"]];

// Who is asking: the system prompt holds the agent's instructions.
const whoAsks = (body) => /You are (\w+)\./.exec(textOfContent(body.messages[0]?.content))?.[1];
// The tool results since the last user message (this prompt's).
const toolResults = (body) => {
  const from = body.messages.findLastIndex((m) => m.role === "user");
  return body.messages.slice(from + 1).filter((m) => m.role === "tool").map((m) => textOfContent(m.content));
};

function reply(body) {
  const who = whoAsks(body);
  const results = toolResults(body);
  const user = textOfContent(body.messages.findLast((m) => m.role === "user")?.content);
  if (who === "parent") {
    if (results.length > 0) return say(`Both answered: ${results.join(" + ")}`);
    if (user === "slow")
      return calls(
        toolCall("task_s1", "task", { agent: "alpha", prompt: "sleep one", description: "sleeper one" }),
        toolCall("task_s2", "task", { agent: "beta", prompt: "sleep two", description: "sleeper two" }),
      );
    return calls(
      toolCall("task_a", "task", { agent: "alpha", prompt: "read a.txt", description: "read a" }),
      toolCall("task_b", "task", { agent: "beta", prompt: "read b.txt, then run a command", description: "read b" }),
    );
  }
  if (user.startsWith("sleep") && results.length) return say("slept");
  if (user.startsWith("sleep")) return calls(toolCall("c_sleep", "bash", { command: SLEEP }));
  if (who === "alpha") {
    if (results.length === 0) return calls(toolCall("c_read", "read", { path: "a.txt" }));
    return say(`ALPHA saw ${lineText(results[0])}`);
  }
  // beta: read, then a command (asked about), then the answer.
  if (results.length === 0) return calls(toolCall("c_read", "read", { path: "b.txt" }));
  if (results.length === 1) return calls(toolCall("c_bash", "bash", { command: "echo from-beta" }));
  return say(`BETA saw ${lineText(results[0])} and ${results[1].trim()}`);
}

function setUp(t, model) {
  const cwd = tempDir(t, "lousho-sub-ws-");
  const home = tempDir(t, "lousho-sub-home-");
  fs.writeFileSync(path.join(cwd, "a.txt"), "apple\n");
  fs.writeFileSync(path.join(cwd, "b.txt"), "banana\n");
  const spec = writeAgentSpec(tempDir(t, "lousho-sub-spec-"), {
    name: "subagents",
    model: "openai/gpt-4o-mini",
    instructions: "You are parent.",
    tools: ["read", "bash", "task"],
    agents: {
      alpha: { description: "Reads files", instructions: "You are alpha.", tools: ["read", "bash"] },
      beta: { description: "Reads and runs", instructions: "You are beta.", tools: ["read", "bash"] },
    },
    providers: {
      openai: { api: "openai-chat", baseUrl: `http://127.0.0.1:${model.port}/v1`, apiKeyEnv: "OPENAI_API_KEY" },
    },
  });
  return { cwd, home, spec, env: { OPENAI_API_KEY: "test", LOUSHO_HOME: home } };
}

const updatesOf = (events, id) => events.filter((e) => e.kind === "update" && e.update.toolCallId === id);
const contentText = (u) => (u.content ?? []).map((c) => c.content?.text ?? "").join("");

// Waits for `cond` (a look at the processes), bounded: the test fails rather than hangs.
async function until(cond, boundMs = 30000) {
  const end = performance.now() + boundMs;
  while (!cond()) {
    assert.ok(performance.now() < end, "the children's commands did not start");
    await new Promise((r) => setTimeout(r, 10));
  }
}

function sleepsRunning() {
  try {
    return execFileSync("pgrep", ["-f", SLEEP], { encoding: "utf8" }).trim();
  } catch {
    return ""; // pgrep exits 1 when nothing matches
  }
}

test("subagents: two tasks side by side, visible, asked about, cancelled, reloaded", { timeout: 120000 }, async (t) => {
  const model = await startChatModel(t, reply);
  const { cwd, home, spec, env } = setUp(t, model);
  let sessionId;
  await withAgent(t, { spec, env, cwd }, async (c) => {
    sessionId = await c.newSession(cwd);
    const run = await c.prompt(sessionId, "go");
    assert.equal(run.error, undefined, run.error?.message);
    assert.equal(run.res.stopReason, "end_turn");

    // Both task calls, titled after their agents, show their child's steps while they run.
    for (const [id, agent, file] of [["task_a", "alpha", "a.txt"], ["task_b", "beta", "b.txt"]]) {
      const ups = updatesOf(run.events, id);
      assert.equal(ups[0].update.sessionUpdate, "tool_call");
      assert.equal(ups[0].update.title, `Task (${agent}): read ${agent[0]}`);
      const live = ups.filter((e) => e.update._meta?.["lousho/subagent"]);
      assert.ok(live.length >= 2, `${id}: the child's steps are shown`);
      assert.equal(live[0].update._meta["lousho/subagent"].agent, agent);
      assert.ok(live.some((e) => contentText(e.update).includes(`✓ Read ${file}`)), `${id}: its read is summarised`);
      const last = ups.at(-1).update;
      assert.equal(last.status, "completed");
      assert.match(contentText(last), agent === "alpha" ? /ALPHA saw apple/ : /BETA saw banana and from-beta/);
    }
    // The two ran side by side: the second child started before the first finished.
    const firstDone = run.events.findIndex((e) => e.update?.toolCallId === "task_a" && e.update.status === "completed");
    const secondStep = run.events.findIndex((e) => e.update?.toolCallId === "task_b" && e.update._meta);
    assert.ok(secondStep >= 0 && secondStep < firstDone, "beta's first step came before alpha's end");

    // The child's command was asked about in the parent's session, naming the subagent.
    const asked = run.events.filter((e) => e.kind === "permission");
    assert.equal(asked.length, 1);
    assert.equal(asked[0].params.sessionId, sessionId);
    assert.match(asked[0].params.toolCall.title, /^beta: /);
    assert.deepEqual(asked[0].params.toolCall._meta["lousho/subagent"], { agent: "beta", parentToolCallId: "task_b" });

    // The parent's model got both answers, and said so.
    const last = model.requests.filter((b) => whoAsks(b) === "parent").at(-1);
    assert.deepEqual(toolResults(last), ["ALPHA saw apple", "BETA saw banana and from-beta"]);
    const said = run.events
      .filter((e) => e.update?.sessionUpdate === "agent_message_chunk")
      .map((e) => e.update.content.text)
      .join("");
    assert.equal(said, "Both answered: ALPHA saw apple + BETA saw banana and from-beta");

    // Cancel while both children run `sleep`: both end before the prompt answers.
    // Cancel while both children run `sleep` (seen as processes): both end before the prompt
    // answers.
    const answered = c.prompt(sessionId, "slow");
    await until(() => sleepsRunning().split("\n").filter(Boolean).length >= 2);
    const cancelledAt = performance.now();
    c.cancel(sessionId);
    const slow = await answered;
    const afterCancelMs = performance.now() - cancelledAt;
    assert.equal(slow.error, undefined, slow.error?.message);
    assert.equal(slow.res.stopReason, "cancelled");
    for (const id of ["task_s1", "task_s2"]) {
      const ups = updatesOf(slow.events, id);
      assert.equal(ups.at(-1).update.status, "failed", `${id} ended before the prompt's answer`);
    }
    assert.equal(sleepsRunning(), "", "no child's command outlives the cancel");
    console.log(`subagents: cancel to the prompt's answer: ${afterCancelMs.toFixed(1)} ms`);
  });

  // A new process: session/load replays both tasks with their answers.
  await withAgent(t, { spec, env, cwd }, async (c) => {
    const mark = c.events.length;
    await c.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
    const replay = c.events.slice(mark).map((e) => e.update);
    for (const [id, answer] of [["task_a", "ALPHA saw apple"], ["task_b", "BETA saw banana and from-beta"]]) {
      const shown = replay.filter((u) => u?.toolCallId === id);
      assert.ok(shown.length > 0, `${id} is replayed`);
      assert.ok(shown.some((u) => contentText(u).includes(answer)), `${id}: its answer is replayed`);
    }
  });

  // Each child's history is saved beside the parent's file, naming it as its parent.
  const parentFile = execFileSync("find", [home, "-name", `*_${sessionId}.jsonl`], { encoding: "utf8" }).trim();
  assert.ok(parentFile, "the parent's file");
  const tasks = parentFile.replace(/\.jsonl$/, ".tasks");
  // (Beside them, the folders of whole outputs their commands saved.)
  const children = fs.readdirSync(tasks).filter((f) => f.endsWith(".jsonl")).sort();
  assert.equal(children.length, 4, children.join(", "));
  const child = fs.readFileSync(path.join(tasks, `${sessionId}-task_b.jsonl`), "utf8").trim().split("\n");
  const header = JSON.parse(child[0]);
  assert.equal(header.parentSession, parentFile);
  assert.ok(child.some((l) => l.includes("BETA saw banana")));
});
