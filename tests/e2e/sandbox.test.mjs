// The kernel sandbox end to end (docs/reliability.md, "The command sandbox"): a loopback model
// has `bash` run what the test names, under an allow-everything rule, through the real binary and
// the official SDK. In workspace-write no hostile form writes outside the roots while builds,
// npm and git work inside; network off stops a command's connection to loopback while the model
// (lousho's own connection) goes on; "sandbox": "off" asks, and a rejection is what the model
// sees.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { withAgent } from "./lib/sdk-client.mjs";
import { spawnSync } from "node:child_process";
import { loushoBin, tempDir } from "./lib/env.mjs";
import { startChatModel, textOfContent } from "./lib/chat-model.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";

// "RUN <command>" calls bash with it; "OUTSIDE <command>" with "sandbox": "off"; a tool result
// is answered "seen".
function startModel(t) {
  let calls = 0;
  return startChatModel(t, (json) => {
    const last = json.messages.at(-1);
    const text = textOfContent(last.content);
    const m = last.role === "user" && /^(RUN|OUTSIDE) ([\s\S]*)$/.exec(text);
    if (!m) return [[{ role: "assistant", content: "" }], [{ content: "seen" }], [{}, "stop"]];
    calls += 1;
    const args = { command: m[2] };
    if (m[1] === "OUTSIDE") args.sandbox = "off";
    const call = { index: 0, id: `call_${calls}`, type: "function", function: { name: "bash", arguments: JSON.stringify(args) } };
    return [[{ role: "assistant", content: "" }], [{ tool_calls: [call] }], [{}, "tool_calls"]];
  });
}

// The workspace, a folder outside every root, a private home and temporary folder, the spec.
function setUp(t, model, sandbox, permissions = [{ tool: "*", pattern: "*", action: "allow" }]) {
  const ws = tempDir(t, "lousho-sbx-ws-");
  const outside = tempDir(t, "lousho-sbx-out-");
  const home = tempDir(t, "lousho-sbx-home-");
  const tmp = tempDir(t, "lousho-sbx-tmp-");
  fs.mkdirSync(path.join(home, ".npm"));
  fs.writeFileSync(path.join(outside, "existing"), "original");
  const spec = writeAgentSpec(tempDir(t, "lousho-sbx-spec-"), {
    name: "sandboxed",
    model: "openai/gpt-4o-mini",
    tools: ["bash"],
    permissions,
    sandbox,
    providers: {
      openai: { api: "openai-chat", baseUrl: `http://127.0.0.1:${model.port}/v1`, apiKeyEnv: "OPENAI_API_KEY" },
    },
  });
  const env = { OPENAI_API_KEY: "test", HOME: home, TMPDIR: tmp, PATH: `/usr/local/bin:/usr/bin:/bin` };
  return { ws, outside, home, spec, env };
}

// What the model got back for the last tool call.
const lastToolResult = (model) => {
  const body = model.requests.at(-1);
  return textOfContent(body.messages.filter((m) => m.role === "tool").at(-1)?.content);
};

test("workspace-write: no hostile form writes outside the roots", { timeout: 120000 }, async (t) => {
  const model = await startModel(t);
  const { ws, outside, spec, env } = setUp(t, model, "workspace-write");
  const O = outside;
  const corpus = [
    `echo pwned > ${O}/redirect`,
    `printf -v cmd 'touch %s/printf_v' ${O}; eval "$cmd"`,
    `python3 -c "open('${O}/python','w').write('x')"`,
    `awk 'BEGIN{system("touch ${O}/awk")}'`,
    `printf '#!/bin/sh\\ntouch ${O}/script\\n' > s.sh && chmod +x s.sh && ./s.sh`,
    `(touch ${O}/background) & wait`,
    `( setsid sh -c 'touch ${O}/daemon; echo tried > ${ws}/daemon.done' & ); while [ ! -e ${ws}/daemon.done ]; do sleep 0.01; done`,
    `echo more >> ${O}/existing`,
    `mv s.sh ${O}/moved`,
  ];
  const seen = [];
  await withAgent(t, { spec, env }, async (c) => {
    const sid = await c.newSession(ws);
    for (const cmd of corpus) {
      const r = await c.prompt(sid, `RUN ${cmd}`);
      assert.equal(r.res?.stopReason, "end_turn", cmd);
      seen.push(lastToolResult(model));
    }
  });
  assert.deepEqual(fs.readdirSync(outside), ["existing"], "nothing new outside the roots");
  assert.equal(fs.readFileSync(path.join(outside, "existing"), "utf8"), "original");
  assert.ok(fs.existsSync(path.join(ws, "daemon.done")), "the daemon ran (inside it could write)");
  assert.match(seen[0], /\[sandbox\][^\n]*refused access to [^ ]*\/redirect /, "the model is told what was refused");
});

test("workspace-write: cmake/make, npm install of a local tarball and git commit work inside", { timeout: 180000 }, async (t) => {
  const model = await startModel(t);
  const { ws, spec, env } = setUp(t, model, "workspace-write");
  const steps = [
    [
      "mkdir -p proj && cd proj && printf 'cmake_minimum_required(VERSION 3.10)\\nproject(p C)\\nadd_executable(p main.c)\\n' > CMakeLists.txt && " +
        "printf 'int main(void){return 0;}\\n' > main.c && cmake -S . -B build >/dev/null && make -C build >/dev/null && ./build/p && echo CMAKE_OK",
      "CMAKE_OK",
    ],
    [
      `mkdir -p pkg app && cd pkg && printf '{"name":"localpkg","version":"1.0.0"}' > package.json && npm pack --silent >/dev/null && ` +
        `cd ../app && printf '{"name":"app","version":"1.0.0"}' > package.json && ` +
        `npm install --no-audit --no-fund --offline ../pkg/localpkg-1.0.0.tgz >/dev/null 2>&1 && test -f node_modules/localpkg/package.json && echo NPM_OK`,
      "NPM_OK",
    ],
    [
      "git init -q repo && cd repo && echo hi > f && git add f && git -c user.email=e@x -c user.name=e commit -qm init && git log --oneline | wc -l && echo GIT_OK",
      "GIT_OK",
    ],
  ];
  await withAgent(t, { spec, env }, async (c) => {
    const sid = await c.newSession(ws);
    for (const [cmd, mark] of steps) {
      await c.prompt(sid, `RUN ${cmd}`);
      assert.match(lastToolResult(model), new RegExp(mark), `${cmd}\n${lastToolResult(model)}`);
    }
  });
});

// A loopback server for the command to reach: "pong" to anything.
function startPong(t) {
  const server = http.createServer((req, res) => res.end("pong"));
  t.after(() => server.close());
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));
}

test("network off: a command cannot reach loopback while the model keeps working", { timeout: 60000 }, async (t) => {
  const model = await startModel(t);
  const port = await startPong(t);
  const { ws, spec, env } = setUp(t, model, { mode: "workspace-write", network: "off" });
  const url = `http://127.0.0.1:${port}/`;
  await withAgent(t, { spec, env }, async (c) => {
    const sid = await c.newSession(ws);
    const before = model.requests.length;
    const r = await c.prompt(sid, `RUN curl -sS --max-time 5 ${url} && echo REACHED`);
    assert.equal(r.res?.stopReason, "end_turn");
    assert.equal(model.requests.length - before, 2, "the model answered the call and its result");
    const result = lastToolResult(model);
    assert.doesNotMatch(result, /pong|REACHED/);
    assert.match(result, /\[sandbox\][\s\S]*network/);
  });
  // Without the sandbox the same command does reach the server.
  const open = setUp(t, model, "off");
  await withAgent(t, { spec: open.spec, env: open.env }, async (c) => {
    const sid = await c.newSession(open.ws);
    await c.prompt(sid, `RUN curl -sS --max-time 5 ${url} && echo REACHED`);
    assert.match(lastToolResult(model), /pong[\s\S]*REACHED/);
  });
});

test('"sandbox": "off" asks, and a rejection is what the model sees', { timeout: 60000 }, async (t) => {
  const model = await startModel(t);
  const { ws, outside, spec, env } = setUp(t, model, "workspace-write");
  await withAgent(
    t,
    { spec, env },
    async (c) => {
      const sid = await c.newSession(ws);
      const r = await c.prompt(sid, `OUTSIDE touch ${outside}/escaped`);
      const asked = r.events.filter((e) => e.kind === "permission");
      assert.equal(asked.length, 1, "asked even under an allow-everything rule");
      assert.match(asked[0].params.toolCall.title, /^Run outside the sandbox: touch /);
      assert.match(lastToolResult(model), /rejected/);
    },
    { permission: "reject_once" },
  );
  assert.ok(!fs.existsSync(path.join(outside, "escaped")));
  // Allowed once, it runs outside.
  const again = setUp(t, model, "workspace-write");
  await withAgent(
    t,
    { spec: again.spec, env: again.env },
    async (c) => {
      const sid = await c.newSession(again.ws);
      await c.prompt(sid, `OUTSIDE touch ${again.outside}/escaped`);
    },
    { permission: "allow_once" },
  );
  assert.ok(fs.existsSync(path.join(again.outside, "escaped")));
});

test("lousho sandbox-exec (the editor terminal's launcher) confines what it runs", { timeout: 60000 }, async (t) => {
  const ws = tempDir(t, "lousho-sbx-ws-");
  const outside = tempDir(t, "lousho-sbx-out-");
  const run = (args) => spawnSync(loushoBin, ["sandbox-exec", ...args], { encoding: "utf8" });
  const r = run(["--mode", "workspace-write", "--write", ws, "--", "/bin/sh", "-c", `touch ${ws}/in; touch ${outside}/out; echo ran`]);
  assert.equal(r.stdout, "ran\n", r.stderr);
  assert.ok(fs.existsSync(path.join(ws, "in")));
  assert.ok(!fs.existsSync(path.join(outside, "out")));
  const missing = run(["--mode", "workspace-write", "--"]);
  assert.equal(missing.status, 126);
  assert.match(missing.stderr, /no command/);
});

test("--print-agent says what the sandbox is; --sandbox overrides the spec", { timeout: 30000 }, async (t) => {
  const spec = writeAgentSpec(tempDir(t, "lousho-sbx-spec-"), { name: "s", model: "script/echo", sandbox: { network: "off" } });
  const print = (extra) => spawnSync(loushoBin, ["acp", spec, "--print-agent", ...extra], { encoding: "utf8" });
  const dflt = print([]);
  assert.equal(dflt.status, 0, dflt.stderr);
  assert.match(dflt.stdout, /^sandbox: workspace-write, network off \(Landlock ABI \d+\)/m);
  assert.match(print(["--sandbox", "read-only,network=on"]).stdout, /^sandbox: read-only, network on/m);
  assert.match(print(["--sandbox", "off"]).stdout, /^sandbox: off$/m);
  const bad = print(["--sandbox", "strict"]);
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /--sandbox: expected workspace-write, read-only or off/);
});

// A kernel without Landlock (tests/helpers/no_landlock.cpp makes every landlock_* call fail
// with ENOSYS, as such a kernel does, for lousho and all it starts).
const noLandlock = path.join(path.dirname(loushoBin), "lousho_no_landlock");
const withoutLandlock = (spec) => ({ command: noLandlock, argv: [loushoBin, "acp", spec] });
const sandboxSaid = (events) =>
  events
    .filter((e) => e.kind === "update")
    .map((e) => JSON.stringify(e.update))
    .filter((u) => /kernel sandbox/.test(u));

test("no Landlock: said once per session and by --print-agent; commands run unconfined", { timeout: 60000 }, async (t) => {
  assert.ok(fs.existsSync(noLandlock), `${noLandlock} is built with the tests`);
  const model = await startModel(t);
  const { ws, outside, spec, env } = setUp(t, model, "workspace-write");
  const print = spawnSync(noLandlock, [loushoBin, "acp", spec, "--print-agent"], { encoding: "utf8", env: { ...process.env, ...env } });
  assert.equal(print.status, 0, print.stderr);
  assert.match(print.stdout, /^sandbox: unavailable \(this kernel offers no Landlock.*\); commands run unconfined$/m);
  await withAgent(t, { spec, env, ...withoutLandlock(spec) }, async (c) => {
    const sid = await c.newSession(ws);
    const first = await c.prompt(sid, `RUN echo one > ${outside}/unconfined`);
    assert.equal(first.res?.stopReason, "end_turn");
    const second = await c.prompt(sid, "RUN echo two");
    assert.equal(second.res?.stopReason, "end_turn");
    const told = sandboxSaid(first.events);
    assert.equal(told.length, 1, "the editor is told at the first command");
    assert.match(told[0], /Commands run without a kernel sandbox: this kernel offers no Landlock/);
    assert.deepEqual(sandboxSaid(second.events), [], "and only once");
  });
  assert.equal(fs.readFileSync(path.join(outside, "unconfined"), "utf8"), "one\n", "the fallback is off, as said");
});

test("no Landlock with sandbox_required: commands are refused, saying why", { timeout: 60000 }, async (t) => {
  const model = await startModel(t);
  const { ws, outside, spec, env } = setUp(t, model, { mode: "workspace-write", required: true });
  const print = spawnSync(noLandlock, [loushoBin, "acp", spec, "--print-agent"], { encoding: "utf8", env: { ...process.env, ...env } });
  assert.match(print.stdout, /^sandbox: unavailable \(.*\); sandbox required: commands are refused$/m);
  await withAgent(t, { spec, env, ...withoutLandlock(spec) }, async (c) => {
    const sid = await c.newSession(ws);
    const r = await c.prompt(sid, `RUN echo one > ${outside}/refused`);
    assert.equal(r.res?.stopReason, "end_turn");
    assert.match(sandboxSaid(r.events)[0] ?? "", /required by this agent but unavailable/);
  });
  assert.match(lastToolResult(model), /no Landlock/, "the model is told why the command did not run");
  assert.equal(fs.existsSync(path.join(outside, "refused")), false);
});
