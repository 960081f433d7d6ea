// What the MCP benches share: newline-delimited JSON-RPC over a child's stdio, and the figures.
import { spawn } from "node:child_process";

export class Rpc {
  constructor(cmd, args, opts = {}) {
    this.child = spawn(cmd, args, { stdio: ["pipe", "pipe", "ignore"], ...opts });
    this.next = 1;
    this.pending = new Map();
    this.notes = []; // every notification, in order
    this.onNote = () => {};
    this.waiters = [];
    let buf = "";
    this.child.stdout.on("data", (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim()) this.take(JSON.parse(line));
      }
    });
  }
  take(m) {
    if (m.id !== undefined && this.pending.has(m.id) && !m.method) {
      this.pending.get(m.id)(m);
      this.pending.delete(m.id);
    } else if (m.method && m.id !== undefined) {
      // A request to us (permission): allow.
      this.send({ jsonrpc: "2.0", id: m.id, result: { outcome: { outcome: "selected", optionId: "allow_once" } } });
    } else {
      this.notes.push(m);
      this.onNote(m);
      this.waiters = this.waiters.filter((w) => !w(m));
    }
  }
  // Resolves with the first notification from now on for which `pred` holds.
  waitNote(pred) {
    return new Promise((resolve) => {
      this.waiters.push((m) => (pred(m) ? (resolve(m), true) : false));
    });
  }
  send(m) {
    this.child.stdin.write(JSON.stringify(m) + "\n");
  }
  call(method, params) {
    const id = this.next++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }
  close() {
    this.child.stdin.end();
    return new Promise((r) => this.child.on("exit", r));
  }
}

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)];
