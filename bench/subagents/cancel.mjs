// Subagent cancel benchmark: how long after session/cancel a prompt whose two `task` children each
// run a long command answers `cancelled`, through the built binary and the official ACP SDK
// client, against a loopback OpenAI-chat model. Each round is a new session whose prompt starts
// both children; once both commands are seen running (as processes), the client cancels and
// times the prompt's answer (by then both children have ended and their commands are gone; the
// e2e test tests/e2e/subagents.test.mjs checks that). Not a test; run on demand:
//   LOUSHO_BIN=build/lousho node bench/subagents/cancel.mjs [rounds=20]
// Prints the load average before and after, and the median, p90 and worst time in ms.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";

import { withAgent } from "../../tests/e2e/lib/sdk-client.mjs";
import { tempDir } from "../../tests/e2e/lib/env.mjs";
import { startChatModel, textOfContent } from "../../tests/e2e/lib/chat-model.mjs";
import { writeAgentSpec } from "../../tests/e2e/lib/agent-spec.mjs";

const rounds = Number(process.argv[2] || 20);
const SLEEP = "sleep 41.3";

const cleanups = [];
const t = { after: (fn) => cleanups.push(fn) };

const call = (id, args) => ({ id, type: "function", function: { name: "task", arguments: JSON.stringify(args) } });
const calls = (list) => [
  [{ role: "assistant", content: "" }],
  [{ tool_calls: list.map((c, index) => ({ ...c, index })) }],
  [{}, "tool_calls"],
];
function reply(body) {
  const parent = textOfContent(body.messages[0]?.content).includes("You are parent.");
  if (parent)
    return calls([
      call("task_1", { agent: "alpha", prompt: "sleep", description: "one" }),
      call("task_2", { agent: "alpha", prompt: "sleep", description: "two" }),
    ]);
  return calls([{ id: "c_sleep", type: "function", function: { name: "bash", arguments: JSON.stringify({ command: SLEEP }) } }]);
}

function sleeps() {
  try {
    return execFileSync("pgrep", ["-f", SLEEP], { encoding: "utf8" }).trim().split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
}
async function until(cond, boundMs = 30000) {
  const end = performance.now() + boundMs;
  while (!cond()) {
    if (performance.now() > end) throw new Error("the children's commands did not start");
    await new Promise((r) => setTimeout(r, 5));
  }
}

const model = await startChatModel(t, reply);
const cwd = tempDir(t, "lousho-bench-sub-");
const home = tempDir(t, "lousho-bench-sub-home-");
const spec = writeAgentSpec(tempDir(t, "lousho-bench-sub-spec-"), {
  name: "cancel-bench",
  model: "openai/gpt-4o-mini",
  instructions: "You are parent.",
  tools: ["bash", "task"],
  permissions: [{ tool: "bash", action: "allow" }],
  agents: { alpha: { description: "Runs", instructions: "You are alpha.", tools: ["bash"] } },
  providers: {
    openai: { api: "openai-chat", baseUrl: `http://127.0.0.1:${model.port}/v1`, apiKeyEnv: "OPENAI_API_KEY" },
  },
});
const loadBefore = os.loadavg()[0];
const times = [];
try {
  await withAgent(t, { spec, env: { OPENAI_API_KEY: "test", LOUSHO_HOME: home }, cwd }, async (c) => {
    for (let i = 0; i < rounds; i++) {
      const sid = await c.newSession(cwd);
      const answered = c.prompt(sid, "slow");
      await until(() => sleeps() >= 2);
      const at = performance.now();
      c.cancel(sid);
      const res = await answered;
      times.push(performance.now() - at);
      if (res.res?.stopReason !== "cancelled") throw new Error(`round ${i}: ${JSON.stringify(res.res ?? res.error)}`);
      await until(() => sleeps() === 0, 5000);
    }
  });
} finally {
  for (const fn of cleanups.reverse()) await fn();
}
const sorted = [...times].sort((a, b) => a - b);
const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
console.log(`load average before ${loadBefore.toFixed(2)}, after ${os.loadavg()[0].toFixed(2)}; ${os.cpus().length} cores`);
console.log(`cancel -> prompt answered (two children, each in a command), ${rounds} rounds:`);
console.log(`  median ${at(0.5).toFixed(1)} ms, p90 ${at(0.9).toFixed(1)} ms, worst ${sorted.at(-1).toFixed(1)} ms`);
fs.writeSync(1, "");
