// Project context (issue 20): a real repository layout (git init in a temp dir; AGENTS.md,
// CLAUDE.md and GEMINI.md in the working folder, its parent and a subfolder; the user's files in
// a temp HOME; an `@` import; a Cursor rule with alwaysApply) served by the built binary over ACP
// with the official SDK client. A loopback OpenAI-chat model records every request: the system
// prompt must hold the files general first, the rule and the git state, and stay byte for byte
// the same between turns. The editor's `systemPrompt` (append and override) and its error case;
// `lousho context` names the files read.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { startAgent, finishAgent } from "./lib/agent-process.mjs";
import { withClient, acp } from "./lib/sdk-client.mjs";
import { tempDir, loushoBin, childEnv } from "./lib/env.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { startChatModel } from "./lib/chat-model.mjs";

// The model: answers every request with a short text and keeps the request bodies.
const startModel = () =>
  startChatModel(null, () => [[{ role: "assistant", content: "Understood." }], [{}, "stop"]]);

const write = (file, text) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};

function git(repo, ...args) {
  const r = spawnSync("git", ["-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
}

// The layout: HOME with the user's files, a repository whose root holds AGENTS.md (importing
// docs/extra.md), the working folder app/ with all three names and a Cursor rule, app/sub/ with
// a file that must not be read, and a file above the repository that must not be read either.
function setUp(t, model) {
  const top = tempDir(t, "lousho-ctx-");
  const home = path.join(top, "home");
  write(path.join(home, ".claude/CLAUDE.md"), "HOME_CLAUDE_MARKER\n");
  write(path.join(home, ".lousho/AGENTS.md"), "HOME_LOUSHO_MARKER\n");
  write(path.join(top, "AGENTS.md"), "ABOVE_REPO_MARKER\n");
  const repo = path.join(top, "repo");
  write(path.join(repo, "AGENTS.md"), "ROOT_AGENTS_MARKER\nSee @docs/extra.md for more.\n");
  write(path.join(repo, "docs/extra.md"), "IMPORTED_EXTRA_MARKER");
  const cwd = path.join(repo, "app");
  write(path.join(cwd, "AGENTS.md"), "APP_AGENTS_MARKER\n");
  write(path.join(cwd, "CLAUDE.md"), "APP_CLAUDE_MARKER\n");
  write(path.join(cwd, "GEMINI.md"), "APP_GEMINI_MARKER\n");
  write(path.join(cwd, "sub/AGENTS.md"), "SUB_AGENTS_MARKER\n");
  write(path.join(cwd, ".cursor/rules/style.mdc"), "---\nalwaysApply: true\n---\nCURSOR_STYLE_MARKER\n");
  git(repo, "init", "-q", "-b", "featurebranch");
  git(repo, "add", "AGENTS.md");
  git(repo, "commit", "-q", "-m", "the first commit");
  write(path.join(repo, "AGENTS.md"), "ROOT_AGENTS_MARKER\nSee @docs/extra.md for more.\nchanged\n");
  const spec = writeAgentSpec(tempDir(t, "lousho-ctx-spec-"), {
    name: "context",
    model: "openai/gpt-4o-mini",
    instructions: "SPEC_INSTRUCTIONS_MARKER",
    tools: ["read", "ls"],
    providers: {
      openai: { api: "openai-chat", baseUrl: `http://127.0.0.1:${model.port}/v1`, apiKeyEnv: "OPENAI_API_KEY" },
    },
  });
  const env = { OPENAI_API_KEY: "test", HOME: home, XDG_CONFIG_HOME: path.join(home, ".config") };
  return { cwd, repo, spec, env };
}

const systemOf = (request) => request.messages.find((m) => m.role === "system")?.content ?? "";

function assertInOrder(text, markers) {
  let last = -1;
  for (const m of markers) {
    const at = text.indexOf(m);
    assert.ok(at >= 0, `${m} missing from the system prompt:\n${text}`);
    assert.ok(at > last, `${m} out of order in:\n${text}`);
    last = at;
  }
}

test("the system prompt holds the repository's context general first, the same every turn", async (t) => {
  const model = await startModel();
  t.after(() => model.server.close());
  const { cwd, spec, env } = setUp(t, model);
  const agent = startAgent(t, { spec, env });
  await withClient(agent, async (c) => {
    assert.deepEqual(c.init.agentCapabilities.sessionCapabilities.systemPrompt, { mode: { override: {} } });
    const { sessionId } = await c.request(acp.methods.agent.session.new, {
      cwd,
      mcpServers: [],
      systemPrompt: { mode: "append", content: [{ type: "text", text: "EDITOR_APPEND_MARKER" }] },
    });
    assert.equal((await c.prompt(sessionId, "first")).res.stopReason, "end_turn");
    assert.equal((await c.prompt(sessionId, "second")).res.stopReason, "end_turn");
    assert.equal(model.requests.length, 2);
    const system = systemOf(model.requests[0]);
    assertInOrder(system, [
      "SPEC_INSTRUCTIONS_MARKER",
      "EDITOR_APPEND_MARKER",
      "# Project context",
      "HOME_CLAUDE_MARKER",
      "HOME_LOUSHO_MARKER",
      `## ${path.join(cwd, "..", "AGENTS.md")}`,
      "ROOT_AGENTS_MARKER",
      "IMPORTED_EXTRA_MARKER",
      `## ${path.join(cwd, "AGENTS.md")}`,
      "APP_AGENTS_MARKER",
      "APP_CLAUDE_MARKER",
      "APP_GEMINI_MARKER",
      "CURSOR_STYLE_MARKER",
      "# Environment",
      `Working folder: ${cwd}`,
      "Git repository: yes",
      "Branch: featurebranch",
      " M AGENTS.md",
      "the first commit",
      `Working directory: ${cwd}`,
      "Tools available: read, ls",
    ]);
    assert.ok(!system.includes("SUB_AGENTS_MARKER"), "a subfolder's file was read");
    assert.ok(!system.includes("ABOVE_REPO_MARKER"), "a file above the repository was read");
    assert.ok(!system.includes("@docs/extra.md"), "the import was not expanded");
    // The prompt cache holds: not a byte differs between the turns.
    assert.equal(systemOf(model.requests[1]), system);
  });
  await finishAgent(agent);
});

test("systemPrompt override replaces the spec's instructions; a bad mode is -32602 and opens nothing", async (t) => {
  const model = await startModel();
  t.after(() => model.server.close());
  const { cwd, spec, env } = setUp(t, model);
  const agent = startAgent(t, { spec, env });
  await withClient(agent, async (c) => {
    const { sessionId } = await c.request(acp.methods.agent.session.new, {
      cwd,
      mcpServers: [],
      systemPrompt: { mode: "override", content: [{ type: "text", text: "EDITOR_OVERRIDE_MARKER" }] },
    });
    assert.equal(sessionId, "sess-1");
    await c.prompt(sessionId, "hello");
    const system = systemOf(model.requests[0]);
    assert.ok(system.startsWith("EDITOR_OVERRIDE_MARKER\n"), system);
    assert.ok(!system.includes("SPEC_INSTRUCTIONS_MARKER"), system);
    assertInOrder(system, ["ROOT_AGENTS_MARKER", "Branch: featurebranch", "Tools available: read, ls"]);

    for (const systemPrompt of [
      { mode: "sideways", content: [{ type: "text", text: "x" }] },
      { mode: "append", content: [{ type: "image", data: "AA==", mimeType: "image/png" }] },
      { mode: "append", content: [] },
      42,
    ]) {
      await assert.rejects(
        c.request(acp.methods.agent.session.new, { cwd, mcpServers: [], systemPrompt }),
        (e) => e.code === -32602 && /systemPrompt/.test(e.message),
      );
    }
    // The earlier draft's plain string is an append; no id was spent on the refused ones.
    const second = await c.request(acp.methods.agent.session.new, { cwd, mcpServers: [], systemPrompt: "PLAIN_DRAFT_MARKER" });
    assert.equal(second.sessionId, "sess-2");
    await c.prompt(second.sessionId, "hello");
    assertInOrder(systemOf(model.requests[1]), ["SPEC_INSTRUCTIONS_MARKER", "PLAIN_DRAFT_MARKER", "ROOT_AGENTS_MARKER"]);
  });
  await finishAgent(agent);
});

test("lousho context names each file, why it was read and its size", async (t) => {
  const model = await startModel();
  t.after(() => model.server.close());
  const { cwd, spec, env } = setUp(t, model);
  const r = spawnSync(loushoBin, ["context", "--cwd", cwd, spec], { encoding: "utf8", env: childEnv(env) });
  assert.equal(r.status, 0, r.stderr);
  const out = r.stdout;
  assert.match(out, new RegExp(`${path.join(cwd, "..", "AGENTS.md")}  \\(repository root\\): 56 B, 62 B with imports`));
  assert.match(out, new RegExp(`docs/extra.md  \\(import in .*\\): 21 B`));
  assert.match(out, new RegExp(`${path.join(cwd, "GEMINI.md")}  \\(working folder\\): 18 B`));
  assert.match(out, /\.claude\/CLAUDE\.md  \(user\): 19 B/);
  assert.match(out, /style {2}.*style\.mdc: 19 B/);
  assert.ok(!out.includes("sub/AGENTS.md"), out);
  const withText = spawnSync(loushoBin, ["context", "--cwd", cwd, "--text", spec], { encoding: "utf8", env: childEnv(env) });
  assert.ok(withText.stdout.includes("IMPORTED_EXTRA_MARKER"), withText.stdout);
  const printed = spawnSync(loushoBin, ["acp", spec, "--print-agent"], { encoding: "utf8", env: childEnv(env), cwd });
  assert.equal(printed.status, 0, printed.stderr);
  assert.match(printed.stdout, /Context files \(general first\):/);
  assert.ok(printed.stdout.includes(path.join(cwd, "CLAUDE.md")), printed.stdout);
});
