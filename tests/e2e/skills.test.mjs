// Skills and slash commands from files (issue 20), end to end through both doors. A repository
// laid out for Claude Code (and Codex, pi) — `.claude/commands`, `.lousho/commands`,
// `.claude/skills/<name>/SKILL.md`, a broken skill, a command named like a built-in — and a
// private HOME with a user skill. The model is a scripted OpenAI chat server in this test that
// records every request body. Checked: the ACP `available_commands_update` (official SDK client)
// and RPC `get_commands` list the file commands; "/hello world" reaches the model expanded; the
// `skill` tool lists the skills in its description, the same in every request of a session, and
// the model's call returns the skill's body and its files, through ACP and RPC; `lousho skills
// list` shows what was found and what was skipped and why.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { withAgent } from "./lib/sdk-client.mjs";
import { tempDir, loushoBin, childEnv } from "./lib/env.mjs";
import { startChatModel, textOfContent } from "./lib/chat-model.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { RpcHost } from "./lib/rpc-host.mjs";

// The scripted model: "USE SKILL <name>" calls the skill tool; a tool result is answered with
// its length; anything else is acknowledged.
function startModel(t) {
  let calls = 0;
  return startChatModel(t, (json) => {
    const last = json.messages.at(-1);
    const text = textOfContent(last.content);
    const skill = last.role === "user" && /^USE SKILL (\S+)/.exec(text);
    if (!skill)
      return [
        [{ role: "assistant", content: "" }],
        [{ content: last.role === "tool" ? `Read ${text.length} characters.` : "Noted." }],
        [{}, "stop"],
      ];
    calls += 1;
    const args = JSON.stringify({ name: skill[1] });
    const call = { index: 0, id: `call_skill_${calls}`, type: "function", function: { name: "skill", arguments: args } };
    return [[{ role: "assistant", content: "" }], [{ tool_calls: [call] }], [{}, "tool_calls"]];
  });
}

const write = (file, text) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};

// A repository prepared for Claude Code, a private home, and the agent spec.
function setUp(t, model) {
  const repo = tempDir(t, "lousho-skills-repo-");
  const home = tempDir(t, "lousho-skills-home-");
  fs.mkdirSync(path.join(repo, ".git"));
  fs.mkdirSync(path.join(repo, "sub"));
  write(
    path.join(repo, ".claude/commands/hello.md"),
    "---\ndescription: Greet someone\nargument-hint: [name]\n---\nSay hello to $1 ($ARGUMENTS), warmly.\n",
  );
  write(path.join(repo, ".lousho/commands/ship.md"), "# Ship the release\nShip version $1 now.\n");
  write(path.join(repo, ".claude/commands/compact.md"), "A command the built-in shadows.\n");
  write(
    path.join(repo, ".claude/skills/pdf/SKILL.md"),
    "---\nname: pdf\ndescription: Fill PDF forms\n---\nPDF_SKILL_BODY: run scripts/fill.py on the form.\n",
  );
  write(path.join(repo, ".claude/skills/pdf/scripts/fill.py"), "print('filled')\n");
  write(path.join(repo, ".claude/skills/broken/SKILL.md"), "---\nname: broken\ndescription: [unclosed\n---\nbody\n");
  write(path.join(home, ".claude/skills/notes/SKILL.md"), "---\nname: notes\ndescription: Keep notes\n---\nNOTES_BODY\n");
  const spec = writeAgentSpec(tempDir(t, "lousho-skills-spec-"), {
    name: "skills",
    model: "openai/gpt-4o-mini",
    instructions: "You are the skills test agent.",
    tools: ["read"],
    providers: {
      openai: { api: "openai-chat", baseUrl: `http://127.0.0.1:${model.port}/v1`, apiKeyEnv: "OPENAI_API_KEY" },
    },
  });
  return { repo, cwd: path.join(repo, "sub"), home, spec, env: { OPENAI_API_KEY: "test", HOME: home } };
}

const lastUser = (body) => textOfContent(body.messages.filter((m) => m.role === "user").at(-1)?.content);
const skillTool = (body) => (body.tools ?? []).find((x) => x.function?.name === "skill")?.function;

// What every door must show of the skill tool and its call.
function checkSkillRequests(requests, from) {
  const mine = requests.slice(from);
  assert.equal(mine.length, 2, "the call, then the answer to its result");
  const tool = skillTool(mine[0]);
  assert.ok(tool, "the skill tool is offered");
  assert.match(tool.description, /- pdf: Fill PDF forms/);
  assert.match(tool.description, /- notes: Keep notes/, "the user's skill");
  assert.doesNotMatch(tool.description, /broken/, "a skill with bad front matter is skipped");
  assert.deepEqual(skillTool(mine[1]), tool, "the same tool description in every request");
  const result = mine[1].messages.at(-1);
  assert.equal(result.role, "tool");
  const text = textOfContent(result.content);
  assert.match(text, /PDF_SKILL_BODY: run scripts\/fill.py/);
  assert.match(text, /- scripts\/fill.py/, "the skill's files are listed");
  assert.doesNotMatch(text, /description: Fill/, "no front matter in the body");
}

test("ACP: file commands in available_commands_update, expanded prompts, the skill tool", { timeout: 60000 }, async (t) => {
  const model = await startModel(t);
  const { cwd, spec, env } = setUp(t, model);
  await withAgent(t, { spec, env, cwd }, async (c) => {
    const sid = await c.newSession(cwd);
    const hello = await c.prompt(sid, "/hello world");
    assert.equal(hello.error, undefined, hello.error?.message);
    assert.equal(hello.res.stopReason, "end_turn");
    // Sent after session/new's answer, before any prompt's updates.
    const update = c.events.find((e) => e.update?.sessionUpdate === "available_commands_update").update;
    const names = update.availableCommands.map((x) => x.name);
    // Built-ins, then the files: .lousho before .claude.
    assert.deepEqual(names, ["compact", "model", "name", "export", "rewind", "ship", "hello"]);
    const cmd = update.availableCommands.find((x) => x.name === "hello");
    assert.equal(cmd.description, "Greet someone");
    assert.deepEqual(cmd.input, { hint: "[name]" });
    assert.equal(update.availableCommands.find((x) => x.name === "ship").description, "Ship the release");
    assert.equal(model.requests.length, 1);
    assert.equal(lastUser(model.requests[0]), "Say hello to world (world), warmly.");

    const from = model.requests.length;
    const used = await c.prompt(sid, "USE SKILL pdf");
    assert.equal(used.res?.stopReason, "end_turn", used.error?.message);
    const call = used.events.find((e) => e.update?.sessionUpdate === "tool_call");
    assert.equal(call.update.title, "Skill pdf");
    assert.equal(call.update.kind, "read");
    assert.ok(used.events.some((e) => e.update?.toolCallId === call.update.toolCallId && e.update.status === "completed"));
    assert.equal(used.events.filter((e) => e.kind === "permission").length, 0, "reading a skill asks nothing");
    checkSkillRequests(model.requests, from);
  });
});

test("RPC: get_commands lists the file commands, /hello is expanded, the skill tool works", { timeout: 60000 }, async (t) => {
  const model = await startModel(t);
  const { cwd, spec, env } = setUp(t, model);
  const host = new RpcHost(t, { spec, cwd, env });
  const listed = await host.command({ type: "get_commands" });
  const hello = listed.data.commands.find((x) => x.name === "hello");
  assert.equal(hello?.description, "Greet someone");
  assert.ok(listed.data.commands.some((x) => x.name === "ship"));
  assert.ok(!listed.data.commands.some((x) => x.name === "compact"), "the built-in shadows the file");
  await host.prompt("/hello there friend");
  assert.equal(lastUser(model.requests.at(-1)), "Say hello to there (there friend), warmly.");
  const from = model.requests.length;
  await host.prompt("USE SKILL pdf");
  checkSkillRequests(model.requests, from);
  await host.finish();
});

test("lousho skills list: what was found, where, and what was skipped and why", { timeout: 30000 }, async (t) => {
  const { cwd, spec, home, repo } = setUp(t, { port: 9 });
  const out = JSON.parse(
    execFileSync(loushoBin, ["skills", "list", spec, "--cwd", cwd, "--json"], { env: childEnv({ HOME: home }) }).toString(),
  );
  assert.deepEqual(out.skills.map((s) => [s.name, s.origin]), [["pdf", "project"], ["notes", "user"]]);
  assert.equal(out.skills[0].path, path.join(repo, ".claude/skills/pdf/SKILL.md"));
  assert.deepEqual(out.commands.map((c) => c.name), ["ship", "hello"]);
  assert.equal(out.skipped.length, 1);
  assert.equal(out.skipped[0].path, path.join(repo, ".claude/skills/broken/SKILL.md"));
  assert.match(out.skipped[0].why, /not valid YAML/);
  assert.ok(out.notices.some((n) => /\/compact .* is shadowed by the built-in command/.test(n)), out.notices.join("\n"));
  const text = execFileSync(loushoBin, ["skills", "list", "--cwd", cwd], { env: childEnv({ HOME: home }) }).toString();
  assert.match(text, /^2 skill\(s\)$/m);
  assert.match(text, /skipped .*broken\/SKILL.md: the front matter is not valid YAML/);
});
