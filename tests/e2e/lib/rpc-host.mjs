// A minimal xcsh RPC host for the e2e tests: `lousho --mode rpc --agent <spec>` as a child,
// commands written as JSON lines, every frame it writes recorded in order.
import assert from "node:assert/strict";
import readline from "node:readline";
import { spawn } from "node:child_process";
import { loushoBin, childEnv } from "./env.mjs";

export class RpcHost {
  constructor(t, { spec, cwd, env, args = [] }) {
    this.frames = [];
    this.waiters = new Set();
    this.stderr = "";
    this.child = spawn(loushoBin, ["--mode", "rpc", "--agent", spec, ...args], { cwd, env: childEnv(env), stdio: "pipe" });
    this.child.stderr.on("data", (d) => (this.stderr += d));
    this.child.stdin.on("error", () => {});
    this.exited = new Promise((r) => this.child.on("exit", (code, signal) => r({ code, signal })));
    readline.createInterface({ input: this.child.stdout }).on("line", (line) => {
      const f = JSON.parse(line);
      this.frames.push(f);
      for (const w of [...this.waiters]) w(f);
    });
    this.n = 0;
    t.after(() => this.kill());
  }
  // The first frame from index `from` on that `pred` accepts (20 s at most).
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
  // Sends a command and resolves with its (successful) response.
  async command(cmd) {
    const id = `c${++this.n}`;
    const from = this.frames.length;
    this.child.stdin.write(JSON.stringify({ id, ...cmd }) + "\n");
    const res = await this.waitFor((f) => f.type === "response" && f.id === id, `${cmd.type} response`, from);
    assert.equal(res.success, true, `${cmd.type}: ${res.error}`);
    return res;
  }
  // One prompt, run until the agent has settled; resolves with its agent_end frame.
  async prompt(message) {
    const from = this.frames.length;
    await this.command({ type: "prompt", message });
    const end = await this.waitFor((f) => f.type === "agent_end", `agent_end after ${message}`, from);
    await this.waitFor((f) => f.type === "agent_settled", `settled after ${message}`, from);
    return end;
  }
  // Ends input and expects a clean exit.
  async finish() {
    this.child.stdin.end();
    const exit = await this.exited;
    assert.equal(exit.code, 0, `rpc exit; stderr: ${this.stderr}`);
  }
  async kill() {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    return this.exited;
  }
}
