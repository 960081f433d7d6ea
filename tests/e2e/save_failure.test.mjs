// A session whose file cannot be saved, through the built binary and the official ACP SDK: the
// editor is told once (an agent message; a `notice` too when the client declared
// `session.notices`), lousho retries with every entry, and once the way is clear it writes
// everything missed and says so once: a new process then loads the whole conversation. The
// failure is a file where the sessions folder should be, which stops root as well.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { spawn } from "node:child_process";
import * as acp from "@agentclientprotocol/sdk";
import { startAgent, finishAgent } from "./lib/agent-process.mjs";
import { withBareClient } from "./lib/sdk-client.mjs";
import { childEnv, loushoBin, tempDir, workspace } from "./lib/env.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";

const isSaveMessage = (u) =>
  u.sessionUpdate === "agent_message_chunk" && /this session|saving this session/i.test(u.content.text);

for (const notices of [false, true]) {
  test(`a failing save is told once and caught up (notices: ${notices})`, { timeout: 60000 }, async (t) => {
    const ws = workspace(t);
    const home = tempDir(t, "lousho-e2e-savefail-");
    const spec = writeAgentSpec(tempDir(t, "lousho-specs-"), { name: "saver", model: "script/echo" });
    const env = { LOUSHO_HOME: home };
    const sessions = path.join(home, "sessions");
    fs.writeFileSync(sessions, "a file where the sessions folder should be");

    const caps = notices ? { session: { notices: {} } } : {};
    let sessionId;
    const first = startAgent(t, { spec, env, cwd: ws });
    await withBareClient(first, caps, async (ctx, updates) => {
      ({ sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] }));
      const prompt = async (text) => {
        const mark = updates.length;
        const res = await ctx.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text }],
        });
        assert.equal(res.stopReason, "end_turn");
        return updates.slice(mark);
      };

      const one = await prompt("first words");
      const two = await prompt("second words");
      let told = [...one, ...two].filter(isSaveMessage);
      assert.equal(told.length, 1, `told once: ${JSON.stringify([...one, ...two])}`);
      const text = told[0].content.text;
      assert.match(text, /not being saved/);
      assert.ok(text.includes(sessions), `names the path: ${text}`);
      assert.match(text, /Not a directory/, "gives the OS error");
      assert.match(text, /lousho will retry/);
      assert.equal(
        [...one, ...two].filter((u) => u.sessionUpdate === "notice").length,
        notices ? 1 : 0,
        "a notice only for a client that declared session.notices",
      );
      if (notices) {
        const notice = one.find((u) => u.sessionUpdate === "notice");
        assert.equal(notice.severity, "warning");
        assert.match(notice.title, /not being saved/);
        assert.ok(notice.description.includes(sessions));
      }

      // The way is clear again: the next prompt's entry writes everything, told once.
      fs.rmSync(sessions);
      const three = await prompt("third words");
      const four = await prompt("fourth words");
      told = [...three, ...four].filter(isSaveMessage);
      assert.equal(told.length, 1, `told once that saving works again: ${JSON.stringify(three)}`);
      assert.match(told[0].content.text, /works again/);
      assert.ok(three.includes(told[0]), "at the first entry that could be saved");
      assert.equal(
        [...three, ...four].filter((u) => u.sessionUpdate === "notice").map((u) => u.severity).join(),
        notices ? "info" : "",
      );
    });
    await finishAgent(first);

    // A new process loads the whole conversation from the file.
    const second = startAgent(t, { spec, env, cwd: ws });
    await withBareClient(second, {}, async (ctx, updates) => {
      await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
      const said = updates
        .filter((u) => u.sessionUpdate === "user_message_chunk")
        .map((u) => u.content.text);
      assert.deepEqual(said, ["first words", "second words", "third words", "fourth words"]);
    });
    await finishAgent(second);
  });
}

// The RPC door: a fire-and-forget extension_ui_request notify, as pi-style hosts show it.
test("the RPC door tells a failing save once with a notify", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  const home = tempDir(t, "lousho-e2e-savefail-rpc-");
  const spec = writeAgentSpec(tempDir(t, "lousho-specs-"), { name: "saver", model: "script/echo" });
  const sessions = path.join(home, "sessions");
  fs.writeFileSync(sessions, "a file where the sessions folder should be");
  const child = spawn(loushoBin, ["--mode", "rpc", "--agent", spec], {
    cwd: ws,
    env: childEnv({ LOUSHO_HOME: home }),
    stdio: "pipe",
  });
  const exited = new Promise((r) => child.on("exit", (code) => r(code)));
  t.after(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"));
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const frames = [];
  const waiters = new Set();
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    const f = JSON.parse(line);
    frames.push(f);
    for (const w of [...waiters]) w(f);
  });
  const waitFor = (pred, what, from) =>
    new Promise((resolve, reject) => {
      const seen = frames.slice(from).find(pred);
      if (seen) return resolve(seen);
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr: ${stderr}`)), 20000);
      const w = (f) => {
        if (!pred(f)) return;
        clearTimeout(timer);
        waiters.delete(w);
        resolve(f);
      };
      waiters.add(w);
    });
  const prompt = async (id, message) => {
    const from = frames.length;
    child.stdin.write(JSON.stringify({ id, type: "prompt", message }) + "\n");
    await waitFor((f) => f.type === "agent_settled", `${id} settled`, from);
    return frames.slice(from);
  };
  await waitFor((f) => f.type === "ready", "ready", 0);
  const failing = [...(await prompt("p1", "first words")), ...(await prompt("p2", "second words"))];
  const notifies = (fs_) => fs_.filter((f) => f.type === "extension_ui_request" && f.method === "notify");
  let told = notifies(failing);
  assert.equal(told.length, 1, JSON.stringify(failing));
  assert.equal(told[0].notifyType, "warning");
  assert.ok(told[0].message.includes(sessions), told[0].message);
  assert.match(told[0].message, /lousho will retry/);
  fs.rmSync(sessions);
  const back = [...(await prompt("p3", "third words")), ...(await prompt("p4", "fourth words"))];
  told = notifies(back);
  assert.equal(told.length, 1, JSON.stringify(back));
  assert.equal(told[0].notifyType, "info");
  assert.match(told[0].message, /works again/);
  child.stdin.end();
  assert.equal(await exited, 0, stderr);
  const dir = fs.readdirSync(sessions);
  assert.equal(dir.length, 1);
  const files = fs.readdirSync(path.join(sessions, dir[0]));
  const lines = fs.readFileSync(path.join(sessions, dir[0], files[0]), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const said = lines.filter((l) => l.type === "message" && l.message.role === "user").map((l) => l.message.content[0].text);
  assert.deepEqual(said, ["first words", "second words", "third words", "fourth words"]);
});
