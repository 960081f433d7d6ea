// The RPC door's auto-retry controls against a real HTTP model server (aimock): a retried 429
// shows auto_retry_start / auto_retry_end; set_auto_retry false makes the first failure final;
// abort_retry ends a long wait at once with "Retry cancelled". Driven as a host would, over
// `lousho --mode rpc` JSON lines.
import test from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import readline from "node:readline";
import { loushoBin, childEnv, tempDir, workspace } from "./lib/env.mjs";
import { useAimock } from "./lib/aimock.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";

const mock = useAimock("rpc-retry.json");

// A minimal host: sends commands, records every frame, waits for frames by predicate.
class RpcHost {
  constructor(spec, cwd) {
    this.frames = [];
    this.waiters = new Set();
    this.stderr = "";
    this.child = spawn(loushoBin, ["--mode", "rpc", "--agent", spec], { cwd, env: childEnv(), stdio: "pipe" });
    this.child.stderr.on("data", (d) => (this.stderr += d));
    this.exited = new Promise((r) => this.child.on("exit", (code) => r(code)));
    readline.createInterface({ input: this.child.stdout }).on("line", (line) => {
      const f = JSON.parse(line);
      this.frames.push(f);
      for (const w of [...this.waiters]) w(f);
    });
  }
  send(cmd) {
    this.child.stdin.write(JSON.stringify(cmd) + "\n");
  }
  waitFor(pred, what, from = 0) {
    const seen = this.frames.slice(from).find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr: ${this.stderr}`)), 20000);
      const w = (f) => {
        if (!pred(f)) return;
        clearTimeout(timer);
        this.waiters.delete(w);
        resolve(f);
      };
      this.waiters.add(w);
    });
  }
  // Runs one prompt to agent_settled; returns the frames of that run.
  async prompt(id, message, onFrame) {
    const from = this.frames.length;
    const w = onFrame ? (f) => onFrame(f) : null;
    if (w) this.waiters.add(w);
    this.send({ id, type: "prompt", message });
    await this.waitFor((f) => f.type === "agent_settled", `${id} settled`, from);
    if (w) this.waiters.delete(w);
    return this.frames.slice(from);
  }
  async close() {
    this.child.stdin.end();
    return this.exited;
  }
  async kill() {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }
}

test("auto-retry over the RPC door: retried, switched off, aborted", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  const spec = writeAgentSpec(tempDir(t, "lousho-rpc-retry-"), {
    name: "rpc-retry",
    model: "mock/mock-model",
    tools: ["read"],
    providers: { mock: mock.openaiProvider({ maxRetries: 2, retryBaseMs: 50 }) },
  });
  const host = new RpcHost(spec, ws);
  t.after(() => host.kill());
  await host.waitFor((f) => f.type === "ready", "ready");

  await t.test("a 429 is retried and announced", async () => {
    const frames = await host.prompt("p1", "retry then succeed");
    const start = frames.find((f) => f.type === "auto_retry_start");
    assert.ok(start, "auto_retry_start");
    assert.equal(start.attempt, 1);
    assert.equal(start.maxAttempts, 2);
    assert.match(start.errorMessage, /Rate limit exceeded/);
    const end = frames.find((f) => f.type === "auto_retry_end");
    assert.deepEqual({ success: end.success, attempt: end.attempt }, { success: true, attempt: 1 });
    const last = frames.filter((f) => f.type === "message_end").at(-1);
    assert.equal(last.message.content[0].text, "Made it after the retry.");
  });

  await t.test("set_auto_retry false: the first failure is final", async () => {
    host.send({ id: "r1", type: "set_auto_retry", enabled: false });
    const ack = await host.waitFor((f) => f.id === "r1", "set_auto_retry response");
    assert.equal(ack.success, true);
    const frames = await host.prompt("p2", "no retry wanted");
    assert.equal(frames.filter((f) => f.type === "auto_retry_start").length, 0);
    const last = frames.filter((f) => f.type === "message_end").at(-1);
    assert.equal(last.message.stopReason, "error");
    assert.match(last.message.errorMessage, /Rate limit exceeded/);
    host.send({ id: "r2", type: "set_auto_retry", enabled: true });
    await host.waitFor((f) => f.id === "r2", "set_auto_retry response");
  });

  await t.test("abort_retry ends a 30 s wait at once", async () => {
    const frames = await host.prompt("p3", "retry forever", (f) => {
      if (f.type === "auto_retry_start") host.send({ id: "ar", type: "abort_retry" });
    });
    const start = frames.find((f) => f.type === "auto_retry_start");
    assert.equal(start.delayMs, 30000);
    const end = frames.find((f) => f.type === "auto_retry_end");
    assert.deepEqual(end, { type: "auto_retry_end", success: false, attempt: 1, finalError: "Retry cancelled" });
    const last = frames.filter((f) => f.type === "message_end").at(-1);
    assert.equal(last.message.stopReason, "error");
    const settled = frames.find((f) => f.type === "agent_settled");
    assert.equal(settled.aborted, false);
    assert.equal((await host.waitFor((f) => f.id === "ar", "abort_retry response")).success, true);
  });

  assert.equal(await host.close(), 0, host.stderr);
});
