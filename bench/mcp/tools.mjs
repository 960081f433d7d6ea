// MCP tool-list benchmark: how long session/new takes when the editor's one MCP server lists
// 1k, 10k or 20k tools (each with a 200-byte description and a small schema), against the same
// server listing none (the server's own start), and the binary's peak memory. Not a test; run
// on demand:
//   LOUSHO_BIN=build/lousho node bench/mcp/tools.mjs [rounds] [counts...]
// Each count runs in a fresh lousho process (so its peak RSS is its own); rounds interleave.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { Rpc, median } from "./rpc.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const bin = path.resolve(process.env.LOUSHO_BIN || path.join(repo, "build/lousho"));
const rounds = Number(process.argv[2] || 3);
const counts = process.argv.length > 3 ? process.argv.slice(3).map(Number) : [0, 1000, 10000, 20000];

// The server: answers initialize and tools/list (one page of TOOLS_N tools) over stdio.
const server = `
const n = Number(process.env.TOOLS_N || 0);
let buf = "";
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
process.stdin.on("data", (d) => {
  buf += d;
  let nl;
  while ((nl = buf.indexOf("\\n")) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    if (m.method === "initialize") {
      send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion,
        capabilities: { tools: {} }, serverInfo: { name: "many", version: "1" } } });
    } else if (m.method === "tools/list") {
      const tools = [];
      for (let i = 0; i < n; i++)
        tools.push({ name: "tool_" + i, description: "d".repeat(200),
                     inputSchema: { type: "object", properties: { q: { type: "string" } } } });
      send({ jsonrpc: "2.0", id: m.id, result: { tools } });
    } else if (m.id !== undefined && m.method) {
      send({ jsonrpc: "2.0", id: m.id, result: {} });
    }
  }
});
process.stdin.on("end", () => process.exit(0));
`;


const peakKb = (pid) => {
  const line = fs.readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmHWM"));
  return Number(line.split(/\s+/)[1]);
};

// CPU time (user + system) the process has used so far, in ms: what the machine's load does not
// stretch, unlike the wall time.
const cpuMs = (pid) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;  // utime, stime in 1/100 s
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lousho-mcp-tools-bench-"));
const serverPath = path.join(dir, "server.js");
fs.writeFileSync(serverPath, server);
const spec = path.join(dir, "spec.yaml");
// A start timeout far above what is measured, so a slow start shows as time, not as a failure.
fs.writeFileSync(spec, ["name: mcp-tools-bench", "model: script/m", "mcp:", "  startTimeoutMs: 120000",
  "scripts:", "  m:", "    - text: plain", ""].join("\n"));

const times = new Map(counts.map((n) => [n, []]));
const peaks = new Map(counts.map((n) => [n, 0]));
const cpu = new Map(counts.map((n) => [n, []]));
for (let r = 0; r < rounds; r++) {
  for (const n of counts) {
    const a = new Rpc(bin, ["acp", spec, "--no-session"], { cwd: dir });
    await a.call("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const mcpServers = [{ name: "many", command: process.execPath, args: [serverPath],
                          env: [{ name: "TOOLS_N", value: String(n) }] }];
    const cpu0 = cpuMs(a.child.pid);
    const t0 = performance.now();
    // The commands are the last thing a session announces, after any note of a failed server.
    const announced = a.waitNote((m) => m.params?.update?.sessionUpdate === "available_commands_update");
    const res = await a.call("session/new", { cwd: dir, mcpServers });
    cpu.get(n).push(cpuMs(a.child.pid) - cpu0);
    times.get(n).push(performance.now() - t0);
    if (!res.result) throw new Error(JSON.stringify(res));
    await announced;
    const failed = a.notes.filter((m) => m.params?.update?.sessionUpdate === "agent_message_chunk");
    if (failed.length) throw new Error(`${n} tools: ${JSON.stringify(failed)}`);
    peaks.set(n, Math.max(peaks.get(n), peakKb(a.child.pid)));
    await a.close();
  }
}
fs.rmSync(dir, { recursive: true, force: true });

console.log(`| tools listed by the server | session/new (median of ${rounds}) | minus the 0-tool start | lousho CPU in session/new | peak RSS |`);
console.log("|---|---|---|---|---|");
const base = times.has(0) ? median(times.get(0)) : 0;
for (const n of counts) {
  const m = median(times.get(n));
  console.log(`| ${n} | ${m.toFixed(1)} ms | ${(m - base).toFixed(1)} ms | ${median(cpu.get(n)).toFixed(0)} ms | ` +
    `${(peaks.get(n) / 1024).toFixed(1)} MB |`);
}
