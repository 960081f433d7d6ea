// Rewind with the files, end to end: a scripted agent makes three file edits and a bash change
// in a git repository; the ACP door (official SDK client) rewinds after a kill -9 and a
// session/load, through `_lousho/rewind`, asking before it overwrites a file edited outside the
// agent; the RPC door rewinds with `/rewind` and puts the text back with set_editor_text.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { startAgent } from "./lib/agent-process.mjs";
import { withClient } from "./lib/sdk-client.mjs";
import { tempDir } from "./lib/env.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { RpcHost } from "./lib/rpc-host.mjs";

const git = (cwd, ...args) => execFileSync("git", ["-C", cwd, ...args], { encoding: "utf8" });

// A repository with a.txt, b.txt, c.txt and d.txt committed, and an ignored scratch file.
function makeRepo(t) {
  const repo = tempDir(t, "lousho-e2e-rewind-repo-");
  git(repo, "init", "-q");
  git(repo, "config", "user.email", "e2e@example.com");
  git(repo, "config", "user.name", "e2e");
  for (const f of ["a", "b", "c", "d"]) fs.writeFileSync(path.join(repo, `${f}.txt`), `${f}0\n`);
  fs.writeFileSync(path.join(repo, ".gitignore"), "*.log\n");
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "init");
  return repo;
}

const snapshot = (repo) =>
  Object.fromEntries(
    fs
      .readdirSync(repo)
      .filter((f) => f !== ".git")
      .sort()
      .map((f) => [f, fs.readFileSync(path.join(repo, f), "utf8")]),
  );

// Three edits (write, edit, a new file) and one bash command that changes, removes and adds.
function rewindSpec(t, extra = {}) {
  return writeAgentSpec(tempDir(t, "lousho-e2e-rewind-spec-"), {
    ...extra,
    name: "rewinder",
    model: "script/rw",
    tools: ["read", "write", "edit", "bash"],
    permissions: [{ tool: "*", pattern: "*", action: "allow" }],
    scripts: {
      rw: [
        {
          match: "change",
          steps: [
            { toolCalls: [{ name: "write", arguments: { path: "a.txt", content: "A1\n" } }] },
            { toolCalls: [{ name: "edit", arguments: { path: "b.txt", oldText: "b0", newText: "B1" } }] },
            { toolCalls: [{ name: "write", arguments: { path: "new.txt", content: "N1\n" } }] },
            {
              toolCalls: [
                { name: "bash", arguments: { command: "echo C1 > c.txt && rm d.txt && echo U > untracked.txt" } },
              ],
            },
            { text: "done" },
          ],
        },
        { text: "ok" },
      ],
    },
  });
}

const changed = { "a.txt": "A1\n", "b.txt": "B1\n", "c.txt": "C1\n", "new.txt": "N1\n", "untracked.txt": "U\n" };

// The session file's user message entries: text -> id.
function userEntryIds(home) {
  const ids = {};
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith(".jsonl") && !p.includes(".checkpoints"))
        for (const line of fs.readFileSync(p, "utf8").split("\n")) {
          if (!line) continue;
          const entry = JSON.parse(line);
          if (entry.type === "message" && entry.message?.role === "user") {
            const c = entry.message.content;
            ids[typeof c === "string" ? c : c.map((b) => b.text ?? "").join("")] = entry.id;
          }
        }
    }
  };
  walk(home);
  return ids;
}

test("ACP: _lousho/rewind after kill -9 and session/load gives the files back", { timeout: 90000 }, async (t) => {
  const repo = makeRepo(t);
  const home = tempDir(t, "lousho-e2e-rewind-home-");
  const spec = rewindSpec(t);
  const env = { LOUSHO_HOME: home };
  const before = snapshot(repo);
  const indexBefore = fs.readFileSync(path.join(repo, ".git/index"));
  const refsBefore = git(repo, "show-ref");

  const first = startAgent(t, { spec, env, cwd: repo });
  let sessionId;
  await withClient(first, async (c) => {
    assert.equal(c.init.agentCapabilities._meta?.["lousho/rewind"], true);
    sessionId = await c.newSession(repo);
    assert.equal((await c.prompt(sessionId, "hello")).res?.stopReason, "end_turn");
    const run = await c.prompt(sessionId, "change the files");
    assert.equal(run.res?.stopReason, "end_turn", run.error?.message);
  });
  for (const [f, text] of Object.entries(changed)) assert.equal(fs.readFileSync(path.join(repo, f), "utf8"), text, f);
  assert.equal(fs.existsSync(path.join(repo, "d.txt")), false);
  first.child.kill("SIGKILL");
  await first.exited;

  // Someone edits b.txt after the agent: the rewind asks first (the client allows).
  fs.writeFileSync(path.join(repo, "b.txt"), "edited by hand\n");
  fs.writeFileSync(path.join(repo, "scratch.log"), "ignored\n");
  const messageId = userEntryIds(home)["change the files"];
  assert.ok(messageId, "the user message's entry id");

  const second = startAgent(t, { spec, env, cwd: repo });
  await withClient(second, async (c) => {
    await c.request("session/load", { sessionId, cwd: repo, mcpServers: [] });
    const bad = await c.request("_lousho/rewind", { sessionId, messageId: "nope" }).catch((e) => e);
    assert.equal(bad.code, -32602);
    const res = await c.request("_lousho/rewind", { sessionId, messageId });
    assert.equal(res.text, "change the files");
    assert.deepEqual(res.kept, []);
    assert.equal(res.restored.length, 6, JSON.stringify(res));
    const asked = c.events.filter((e) => e.kind === "permission" && e.params.toolCall?.toolCallId === "rewind");
    assert.equal(asked.length, 1);
    assert.match(JSON.stringify(asked[0].params), /b\.txt/);
  });
  const after = snapshot(repo);
  delete after["scratch.log"];  // ignored by git: not the agent's, left alone
  assert.deepEqual(after, before);
  assert.equal(fs.readFileSync(path.join(repo, "scratch.log"), "utf8"), "ignored\n");
  assert.deepEqual(fs.readFileSync(path.join(repo, ".git/index")), indexBefore);
  assert.equal(git(repo, "show-ref"), refsBefore);
  assert.equal(git(repo, "stash", "list"), "");
  await second.child.kill("SIGKILL");
});

test("RPC: /rewind restores the files and puts the message back in the editor", { timeout: 90000 }, async (t) => {
  const repo = makeRepo(t);
  const home = tempDir(t, "lousho-e2e-rewind-home-");
  const before = snapshot(repo);
  const host = new RpcHost(t, { spec: rewindSpec(t), cwd: repo, env: { LOUSHO_HOME: home } });
  await host.waitFor((f) => f.type === "ready", "ready");
  await host.prompt("hello");
  await host.prompt("change the files");
  for (const [f, text] of Object.entries(changed)) assert.equal(fs.readFileSync(path.join(repo, f), "utf8"), text, f);
  const from = host.frames.length;
  await host.prompt("/rewind");
  const prefill = await host.waitFor(
    (f) => f.type === "extension_ui_request" && f.method === "set_editor_text",
    "set_editor_text",
    from,
  );
  assert.equal(prefill.text, "change the files");
  assert.deepEqual(snapshot(repo), before);
  // The session goes on from before that message: the next /rewind goes before "hello".
  const branch = await host.command({ type: "get_branch_messages" });
  assert.deepEqual(
    branch.data.messages.map((m) => m.text),
    ["hello"],
  );
  await host.finish();
});

test("RPC: branch with restoreFiles restores the files; without it they stay", { timeout: 90000 }, async (t) => {
  const repo = makeRepo(t);
  const home = tempDir(t, "lousho-e2e-rewind-home-");
  const before = snapshot(repo);
  const host = new RpcHost(t, { spec: rewindSpec(t), cwd: repo, env: { LOUSHO_HOME: home } });
  await host.waitFor((f) => f.type === "ready", "ready");
  await host.prompt("hello");
  await host.prompt("change the files");
  const messages = (await host.command({ type: "get_branch_messages" })).data.messages;
  const target = messages.find((m) => m.text === "change the files");
  const plain = await host.command({ type: "branch", entryId: target.entryId });
  assert.equal(plain.data.text, "change the files");
  assert.equal(plain.data.restoredFiles, undefined);
  assert.equal(fs.readFileSync(path.join(repo, "a.txt"), "utf8"), "A1\n");
  // Back to the first session (its file), then the same branch with the files.
  await host.command({ type: "switch_session", sessionPath: userSessionFile(home, target.entryId) });
  const res = await host.command({ type: "fork", entryId: target.entryId, restoreFiles: true });
  assert.equal(res.data.text, "change the files");
  assert.equal(res.data.restoredFiles.length, 6, JSON.stringify(res.data));
  assert.deepEqual(snapshot(repo), before);
  await host.finish();
});

test("RPC: what hooks change is rewound with the prompt that ran them", { timeout: 90000 }, async (t) => {
  const repo = makeRepo(t);
  const home = tempDir(t, "lousho-e2e-rewind-home-");
  const before = snapshot(repo);
  // The rewinder, plus a prompt hook that adds a line to prompts.txt (a file git does not know
  // yet) and a hook after each write that adds a line to a.txt.
  const withHooks = rewindSpec(t, {
    hooks: {
      UserPromptSubmit: [{ hooks: [{ type: "command", command: "cat >/dev/null; echo P >> prompts.txt" }] }],
      PostToolUse: [{ matcher: "write", hooks: [{ type: "command", command: "cat >/dev/null; echo H >> a.txt" }] }],
    },
  });
  const host = new RpcHost(t, { spec: withHooks, cwd: repo, env: { LOUSHO_HOME: home } });
  await host.waitFor((f) => f.type === "ready", "ready");
  await host.prompt("hello");
  assert.equal(fs.readFileSync(path.join(repo, "prompts.txt"), "utf8"), "P\n");
  await host.prompt("change the files");
  assert.equal(fs.readFileSync(path.join(repo, "prompts.txt"), "utf8"), "P\nP\n");
  assert.equal(fs.readFileSync(path.join(repo, "a.txt"), "utf8"), "A1\nH\nH\n");
  await host.prompt("/rewind");
  // Back to before "change the files": what its hooks and tools did is undone, what the first
  // prompt's hook did stays.
  assert.deepEqual(snapshot(repo), { ...before, "prompts.txt": "P\n" });
  await host.finish();
});

// The session file holding entry `id`.
function userSessionFile(home, id) {
  let found;
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith(".jsonl") && !found) {
        const first = fs.readFileSync(p, "utf8").split("\n").filter(Boolean).slice(1);
        if (first.some((l) => JSON.parse(l).id === id && JSON.parse(l).type === "message")) found = p;
      }
    }
  };
  walk(home);
  return found;
}
