#!/usr/bin/env node
// A small ACP client (official SDK) that runs a scripted session against lousho and prints it
// the way an editor's agent panel would show it. Usage: demo-client.mjs <lousho> <agent spec>
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { mkdtempSync, copyFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL, fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../tests/e2e/package.json"));
const acp = await import(pathToFileURL(require.resolve("@agentclientprotocol/sdk")).href);

const [bin, spec] = process.argv.slice(2);
if (!bin || !spec) {
  console.error("usage: demo-client.mjs <lousho binary> <agent spec>");
  process.exit(2);
}
const workspace = mkdtempSync(path.join(tmpdir(), "lousho-demo-"));
copyFileSync(path.join(spec, "notes.txt"), path.join(workspace, "notes.txt"));

const child = spawn(bin, ["acp", spec], { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

let line = "";  // the streamed text being printed
const flush = () => { if (line) { process.stdout.write("\n"); line = ""; } };
const show = (prefix, text) => {
  if (line !== prefix) { flush(); process.stdout.write(prefix); line = prefix; }
  process.stdout.write(text);
};

const app = acp
  .client({ name: "lousho-demo" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    const u = params.update;
    switch (u.sessionUpdate) {
      case "agent_thought_chunk": show("  (thinking) ", u.content.text); break;
      case "agent_message_chunk": show("  agent: ", u.content.text); break;
      case "tool_call": flush(); console.log(`  [tool] ${u.title} (${u.kind}, ${u.status})`); break;
      case "tool_call_update":
        if (u.status) { flush(); console.log(`  [tool] ${u.toolCallId} -> ${u.status}`); }
        break;
      case "plan":
        flush();
        console.log("  [plan]");
        for (const e of u.entries) console.log(`    - [${e.status}] ${e.content} (${e.priority})`);
        break;
      case "available_commands_update":
        flush();
        console.log(`  [commands] ${u.availableCommands.map((c) => "/" + c.name).join(" ")}`);
        break;
      case "usage_update":
        flush();
        console.log(`  [context] ${u.used} of ${u.size} tokens, cost so far ${u.cost?.amount ?? 0} ${u.cost?.currency ?? ""}`);
        break;
      default: flush(); console.log(`  [${u.sessionUpdate}]`);
    }
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    flush();
    console.log(`  [permission] "${params.toolCall.title}"? -> allow once`);
    return { outcome: { outcome: "selected", optionId: params.options.find((o) => o.kind === "allow_once").optionId } };
  });

const prompts = [
  ["hello", 0],
  ["please read notes.txt", 0],
  ["make a plan", 0],
  ["run a command", 0],
  ["tell me something slow", 900],
];
try {
  await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {}, clientInfo: { name: "lousho-demo", version: "1" },
    });
    console.log(`initialize -> ${init.agentInfo.name} ${init.agentInfo.version} (protocol ${init.protocolVersion})`);
    const s = await ctx.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] });
    console.log(`session/new -> ${s.sessionId} in ${workspace}`);
    for (const [text, cancelAfter] of prompts) {
      flush();
      console.log(`\n> ${text}`);
      const timer = cancelAfter ? setTimeout(() => { flush(); console.log("  [you] cancel"); ctx.notify(acp.methods.agent.session.cancel, { sessionId: s.sessionId }); }, cancelAfter) : null;
      const r = await ctx.request(acp.methods.agent.session.prompt, { sessionId: s.sessionId, prompt: [{ type: "text", text }] });
      if (timer) clearTimeout(timer);
      flush();
      console.log(`  => stopReason: ${r.stopReason}`);
    }
  });
} finally {
  child.stdin.end();
  await new Promise((r) => child.on("exit", r));
  rmSync(workspace, { recursive: true, force: true });
}
