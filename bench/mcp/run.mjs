// MCP benchmark: what MCP servers add to session/new and to a tool call, through the built
// binary, against the same server driven directly from node. Not a test; run on demand:
//   LOUSHO_BIN=build/lousho node bench/mcp/run.mjs [rounds]
// Uses @modelcontextprotocol/server-everything from tests/e2e/node_modules.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { Rpc, median, p90 } from "./rpc.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const bin = path.resolve(process.env.LOUSHO_BIN || path.join(repo, "build/lousho"));
const everything = path.join(repo, "tests/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const rounds = Number(process.argv[2] || 15);
const calls = 200;



// A server started from node: spawn, initialize, initialized, tools/list.
async function directStart() {
  const t0 = performance.now();
  const s = new Rpc("node", [everything, "stdio"]);
  await s.call("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "0" } });
  s.send({ jsonrpc: "2.0", method: "notifications/initialized", params: {} });
  await s.call("tools/list", {});
  return { s, ms: performance.now() - t0 };
}

function writeSpec(dir, servers) {
  const lines = [
    "name: mcp-bench",
    "model: script/bench",
    "permissions:",
    "  - {tool: \"mcp__*\", action: allow}",
    "scripts:",
    "  bench:",
    "    - match: call",
    "      steps:",
    "        - toolCalls: [{name: mcp__s0__echo, arguments: {message: hi}}]",
    "        - text: done",
    "    - text: plain",
  ];
  if (servers) {
    lines.push("mcp_servers:");
    for (let i = 0; i < servers; i++) lines.push(`  s${i}: {command: node, args: ["${everything}", stdio]}`);
  }
  const p = path.join(dir, `spec-${servers}.yaml`);
  fs.writeFileSync(p, lines.join("\n") + "\n");
  return p;
}

async function promptTimes(spec, cwd, text, n) {
  const a = new Rpc(bin, ["acp", spec], { cwd });
  await a.call("initialize", { protocolVersion: 1, clientCapabilities: {} });
  const sid = (await a.call("session/new", { cwd, mcpServers: [] })).result.sessionId;
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await a.call("session/prompt", { sessionId: sid, prompt: [{ type: "text", text }] });
    if (!r.result) throw new Error(JSON.stringify(r));
    times.push(performance.now() - t0);
  }
  await a.close();
  return times;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lousho-mcp-bench-"));
const none = writeSpec(dir, 0);
const five = writeSpec(dir, 5);
const one = writeSpec(dir, 1);

// session/new: none vs five servers, and five servers started together straight from node,
// interleaved round by round so that a change in the machine's load hits both alike.
async function openAgent(spec) {
  const a = new Rpc(bin, ["acp", spec], { cwd: dir });
  await a.call("initialize", { protocolVersion: 1, clientCapabilities: {} });
  return a;
}
async function timeNew(a) {
  const t0 = performance.now();
  const r = await a.call("session/new", { cwd: dir, mcpServers: [] });
  const ms = performance.now() - t0;
  await a.call("session/close", { sessionId: r.result.sessionId });
  return ms;
}
const agentNone = await openAgent(none);
const agentFive = await openAgent(five);
const newNone = [];
const newFive = [];
const together = [];
const single = [];
for (let i = 0; i < rounds; i++) {
  newNone.push(await timeNew(agentNone));
  newFive.push(await timeNew(agentFive));
  const t0 = performance.now();
  const started = await Promise.all([0, 1, 2, 3, 4].map(() => directStart()));
  together.push(performance.now() - t0);
  await Promise.all(started.map((x) => x.s.close()));
  const x = await directStart();
  single.push(x.ms);
  await x.s.close();
}
await agentNone.close();
await agentFive.close();

// Per call: a prompt whose scripted model calls echo once, minus the same prompt without it,
// against echo called straight from node over stdio.
const withCall = await promptTimes(one, dir, "call", calls);
const without = await promptTimes(one, dir, "plain", calls);
const direct = await directStart();
const directCalls = [];
for (let i = 0; i < calls + 20; i++) {
  const t0 = performance.now();
  await direct.s.call("tools/call", { name: "echo", arguments: { message: "hi" } });
  if (i >= 20) directCalls.push(performance.now() - t0); // the first calls warm the JIT
}
await direct.s.close();
fs.rmSync(dir, { recursive: true, force: true });

const f = (x) => x.toFixed(2);
console.log(`| what | median | p90 |`);
console.log(`|---|---|---|`);
console.log(`| session/new, no MCP server (${rounds}) | ${f(median(newNone))} ms | ${f(p90(newNone))} ms |`);
console.log(`| session/new, 5 stdio servers (${rounds}) | ${f(median(newFive))} ms | ${f(p90(newFive))} ms |`);
console.log(`| 5 servers started together from node, until the last listed its tools (${rounds}) | ${f(median(together))} ms | ${f(p90(together))} ms |`);
console.log(`| one server alone from node: spawn → tools/list answered (${rounds}) | ${f(median(single))} ms | ${f(p90(single))} ms |`);
console.log(`| prompt with one echo call through lousho (${calls}) | ${f(median(withCall))} ms | ${f(p90(withCall))} ms |`);
console.log(`| same prompt, no call: the floor (${calls}) | ${f(median(without))} ms | ${f(p90(without))} ms |`);
console.log(`| echo tools/call straight from node (${calls}) | ${f(median(directCalls))} ms | ${f(p90(directCalls))} ms |`);
console.log("");
console.log(`session/new added by 5 servers (median): ${f(median(newFive) - median(newNone))} ms; ` +
  `the 5 started together from node: ${f(median(together))} ms`);
console.log(`one MCP call through lousho (median, prompt minus floor): ${f(median(withCall) - median(without))} ms; ` +
  `straight from node: ${f(median(directCalls))} ms`);
