// Spawns `lousho acp <spec>` with a wire tap on both pipes: every raw line is recorded in a
// WireLog (and every agent line validated against the ACP schema as it arrives).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { Transform, Readable, Writable } from "node:stream";
import { AcpValidator, WireLog, lineSplitter } from "./acp-validator.mjs";
import { loushoBin, schemaPath, demoSpec, childEnv, assertBinary } from "./env.mjs";

let sharedValidator;
export function validator() {
  sharedValidator ??= new AcpValidator(schemaPath);
  return sharedValidator;
}

function tap(onLine) {
  const split = lineSplitter(onLine);
  return new Transform({
    transform(chunk, _enc, cb) {
      split.push(chunk);
      cb(null, chunk);
    },
    flush(cb) {
      split.end();
      cb();
    },
  });
}

export class AgentProcess {
  // spec null: `lousho acp` with no spec (the lookup order). rawEnv: exactly this environment.
  // `command` / `argv` spawn another ACP agent instead (e.g. pi-acp driving `lousho --mode rpc`).
  constructor({ spec = demoSpec, args = [], env = {}, rawEnv, cwd, command, argv } = {}) {
    assertBinary();
    this.wire = new WireLog(validator());
    this.listeners = new Set();
    this.stderr = "";
    this.child = spawn(
      command ?? loushoBin,
      argv ?? (spec === null ? ["acp", ...args] : ["acp", spec, ...args]),
      {
      stdio: ["pipe", "pipe", "pipe"],
      env: rawEnv ?? childEnv(env),
      cwd,
    });
    this.spawnedAt = performance.now();
    this.exited = new Promise((resolve) => {
      this.child.on("exit", (code, signal) => {
        this.exitInfo = { code, signal, t: performance.now() };
        resolve(this.exitInfo);
      });
    });
    // Resolves once stdout has been read to its end (all lines are in the wire log).
    this.stdoutDone = new Promise((resolve) => this.child.stdout.on("end", resolve));
    this.child.stderr.on("data", (d) => {
      this.stderr += d.toString();
    });
    this.child.stdin.on("error", () => {}); // EPIPE after exit is not our concern here
    this.toAgent = tap((line) => this.wire.clientLine(line));
    this.toAgent.pipe(this.child.stdin);
    this.fromAgent = this.child.stdout.pipe(
      tap((line) => {
        const entry = this.wire.agentLine(line);
        for (const l of [...this.listeners]) l(entry);
      }),
    );
  }

  // A web stream pair for the SDK's ndJsonStream (write side first).
  sdkStream(acp) {
    return acp.ndJsonStream(Writable.toWeb(this.toAgent), Readable.toWeb(this.fromAgent));
  }

  // Raw-mode: write one line (an object is serialised).
  send(msg) {
    this.toAgent.write((typeof msg === "string" ? msg : JSON.stringify(msg)) + "\n");
  }

  closeStdin() {
    this.toAgent.end();
  }

  // Waits for the first agent message (already seen or future) matching pred.
  waitFor(pred, timeoutMs = 5000, what = "message") {
    const seen = this.wire.entries.find((e) => e.dir === "out" && e.msg && pred(e.msg));
    if (seen) return Promise.resolve(seen.msg);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(l);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; stderr:\n${this.stderr}`));
      }, timeoutMs);
      const l = (entry) => {
        if (entry.msg && pred(entry.msg)) {
          clearTimeout(timer);
          this.listeners.delete(l);
          resolve(entry.msg);
        }
      };
      this.listeners.add(l);
    });
  }

  nextId() {
    this.idCounter = (this.idCounter ?? 100) + 1;
    return this.idCounter;
  }

  // Raw-mode request: sends and resolves with the whole response message.
  request(method, params, id = this.nextId(), timeoutMs = 5000) {
    this.send({ jsonrpc: "2.0", id, method, params });
    return this.waitFor(
      (m) => !Object.hasOwn(m, "method") && JSON.stringify(m.id) === JSON.stringify(id),
      timeoutMs,
      `the response to ${method} (id ${JSON.stringify(id)})`,
    );
  }

  async kill() {
    if (!this.exitInfo) this.child.kill("SIGKILL");
    await this.exited;
  }
}

// An AgentProcess that is killed (SIGKILL, awaited) when test `t` ends, passed or failed.
export function startAgent(t, options) {
  const agent = new AgentProcess(options);
  t.after(() => agent.kill());
  return agent;
}

// The clean end of a run: stdin closed, exit code 0, stdout read to its end, and no line of the
// wire broke the ACP schema. Returns the exit info.
export async function finishAgent(agent) {
  agent.closeStdin();
  const exit = await agent.exited;
  await agent.stdoutDone;
  assert.equal(exit.code, 0, `exit code; stderr:\n${agent.stderr}`);
  assert.equal(agent.wire.problems.length, 0, agent.wire.report());
  return exit;
}

export const INIT_PARAMS = {
  protocolVersion: 1,
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  clientInfo: { name: "lousho-e2e", version: "0.0.0" },
};
