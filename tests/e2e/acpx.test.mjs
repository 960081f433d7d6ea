// acpx (an independent headless ACP client) against the binary.
import test from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { e2eDir, loushoBin, demoSpec, tempDir, workspace, childEnv, assertBinary } from "./lib/env.mjs";
import { validator } from "./lib/agent-process.mjs";

const run = promisify(execFile);
const GREETING = "Hello! I am the offline demo agent. Ask me to read notes.txt, make a plan, or run a command.";
const q = (s) => `'${s.replace(/'/g, "'\\''")}'`;

async function acpx(t, args) {
  assertBinary();
  const ws = workspace(t);
  const home = tempDir(t, "lousho-acpx-home-");
  const agentCmd = `${q(loushoBin)} acp ${q(demoSpec)}`;
  try {
    const r = await run(
      "npx",
      ["--no-install", "acpx", "--agent", agentCmd, "--cwd", ws, "--approve-all", ...args],
      {
        cwd: e2eDir,
        env: childEnv({ HOME: home, NPM_CONFIG_UPDATE_NOTIFIER: "false", NO_COLOR: "1" }),
        timeout: 30000,
        maxBuffer: 16 << 20,
      },
    );
    return { code: 0, ...r, ws };
  } catch (e) {
    return { code: e.code, stdout: e.stdout, stderr: e.stderr, ws };
  }
}

test("acpx exec (quiet) prints the greeting and exits 0", { timeout: 40000 }, async (t) => {
  const r = await acpx(t, ["--format", "quiet", "exec", "hello"]);
  assert.equal(r.code, 0, `acpx exit code; stderr:\n${r.stderr}`);
  assert.equal(r.stdout.trim(), GREETING);
});

test("acpx exec (json): bash goes through the client's terminal; agent frames are schema-valid", { timeout: 40000 }, async (t) => {
  const r = await acpx(t, ["--format", "json", "exec", "run"]);
  assert.equal(r.code, 0, `acpx exit code; stderr:\n${r.stderr}`);
  const frames = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const v = validator();
  // Frames of both directions are interleaved; the ones with an agent->client method are the
  // agent's. Validate those by method.
  const agentCalls = frames.filter(
    (f) => f.method && (v.agentRequestParams[f.method] || v.agentNotificationParams[f.method]),
  );
  assert.ok(agentCalls.length > 5);
  for (const f of agentCalls) {
    const def = Object.hasOwn(f, "id") ? v.agentRequestParams[f.method] : v.agentNotificationParams[f.method];
    assert.equal(v.checkDef(def, f.params), null, JSON.stringify(f));
  }
  const methods = agentCalls.map((f) => f.method).filter((m) => m !== "session/update");
  assert.deepEqual(methods, [
    "session/request_permission",
    "terminal/create",
    "terminal/wait_for_exit",
    "terminal/output",
    "terminal/release",
  ]);
  const create = agentCalls.find((f) => f.method === "terminal/create");
  assert.match(JSON.stringify([create.params.command, create.params.args]), /echo hello from bash/);
  assert.equal(create.params.cwd, r.ws);
  const last = frames.at(-1);
  assert.equal(last.result.stopReason, "end_turn");
  // The prompt's tokens (PromptResponse.usage, unstable): what it read and wrote adds up.
  const u = last.result.usage;
  assert.ok(u.inputTokens > 0 && u.outputTokens > 0, JSON.stringify(u));
  assert.equal(u.totalTokens, u.inputTokens + u.outputTokens);
  const done = agentCalls.filter((f) => f.params.update?.status === "completed");
  assert.equal(done.length, 1);
  assert.equal(done[0].params.update.content?.[0]?.type, "terminal");
});
