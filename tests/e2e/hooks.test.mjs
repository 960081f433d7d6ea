// Hooks end to end: a repository prepared for Claude Code (.claude/settings.json with a
// PreToolUse deny hook and a UserPromptSubmit context hook) plus a SessionStart hook in the
// agent spec, driven over ACP by the official SDK against aimock; what the hooks said is checked
// in the model requests aimock recorded.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { withAgent, textOf } from "./lib/sdk-client.mjs";
import { tempDir, workspace } from "./lib/env.mjs";
import { useAimock } from "./lib/aimock.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";

const mock = useAimock("hooks.json");

const userTexts = (body) =>
  (body?.messages ?? [])
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : (m.content ?? []).map((b) => b.text ?? "").join("")));

const lastUser = (body) => userTexts(body).at(-1) ?? "";

function prepareRepo(ws) {
  fs.mkdirSync(path.join(ws, ".claude"), { recursive: true });
  const settings = {
    permissions: { allow: [] },
    hooks: {
      PreToolUse: [
        {
          matcher: "Bash",
          hooks: [{ type: "command", command: "cat > pre-input.json; echo 'touching files is not allowed here' >&2; exit 2" }],
        },
      ],
      UserPromptSubmit: [
        {
          hooks: [
            {
              type: "command",
              command: `echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ticket: HOOK-42"}}'`,
            },
          ],
        },
      ],
    },
  };
  fs.writeFileSync(path.join(ws, ".claude", "settings.json"), JSON.stringify(settings, null, 2));
}

test("hooks from the spec and from .claude/settings.json reach the model", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  prepareRepo(ws);
  const spec = writeAgentSpec(tempDir(t, "lousho-specs-"), {
    name: "hooked",
    model: "openai/gpt-4o-mini",
    tools: ["read", "bash"],
    maxSteps: 4,
    providers: { openai: { api: "openai-chat", baseUrl: `${mock.base}/v1`, apiKeyEnv: "OPENAI_API_KEY" } },
    hooks: {
      timeout: 20,
      SessionStart: [{ matcher: "startup", hooks: [{ type: "command", command: "echo \"started in $(basename \"$LOUSHO_PROJECT_DIR\")\"" }] }],
    },
  });
  await withAgent(t, { spec, env: mock.openaiEnv(), cwd: ws }, async (c) => {
    const sid = await c.newSession(ws);
    const { res, error, events } = await c.prompt(sid, "hooked run");
    assert.equal(error, undefined, error?.message);
    assert.equal(res.stopReason, "end_turn");
    assert.ok(!fs.existsSync(path.join(ws, "should-not-exist.txt")), "the denied command did not run");
    assert.ok(!events.some((e) => e.kind === "permission"), "a denied call is never asked for");
    const hookInput = JSON.parse(fs.readFileSync(path.join(ws, "pre-input.json"), "utf8"));
    assert.equal(hookInput.hook_event_name, "PreToolUse");
    assert.equal(hookInput.tool_name, "bash");
    assert.equal(hookInput.tool_input.command, "touch should-not-exist.txt");
    assert.equal(hookInput.session_id, sid);

    const reqs = (await mock.journal()).filter((e) => lastUser(e.body) === "hooked run");
    assert.equal(reqs.length, 2, "the call, then the answer after the tool result");
    const first = userTexts(reqs[0].body);
    assert.ok(first.some((u) => u.includes(`started in ${path.basename(ws)}`)), "SessionStart context");
    assert.ok(first.some((u) => u.includes("ticket: HOOK-42")), "UserPromptSubmit context");
    const tool = reqs[1].body.messages.find((m) => m.role === "tool");
    assert.ok(tool, "a tool result was sent");
    const toolText = typeof tool.content === "string" ? tool.content : JSON.stringify(tool.content);
    assert.match(toolText, /A hook denied this tool call: touching files is not allowed here/);
    assert.equal(textOf(events, "agent_message_chunk").includes("The hook stopped it."), true);
  });
});

test("a hook that fails is told once and the prompt goes on", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  fs.mkdirSync(path.join(ws, ".lousho"), { recursive: true });
  fs.writeFileSync(
    path.join(ws, ".lousho", "hooks.json"),
    JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: "echo '{broken'" }] }] } }),
  );
  const spec = writeAgentSpec(tempDir(t, "lousho-specs-"), {
    name: "hooked-bad",
    model: "openai/gpt-4o-mini",
    tools: ["read"],
    providers: { openai: { api: "openai-chat", baseUrl: `${mock.base}/v1`, apiKeyEnv: "OPENAI_API_KEY" } },
  });
  await withAgent(t, { spec, env: mock.openaiEnv(), cwd: ws }, async (c) => {
    const sid = await c.newSession(ws);
    const one = await c.prompt(sid, "plain question");
    assert.equal(one.error, undefined, one.error?.message);
    assert.equal(one.res.stopReason, "end_turn");
    const shown = textOf(one.events, "agent_message_chunk");
    assert.match(shown, /The UserPromptSubmit hook `echo '\{broken'` \(from \.lousho\/hooks\.json\) failed: it printed invalid JSON/);
    assert.match(shown, /A plain answer\./);
    const two = await c.prompt(sid, "plain question");
    assert.equal(two.res.stopReason, "end_turn");
    assert.doesNotMatch(textOf(two.events, "agent_message_chunk"), /failed/, "told once");
  });
});
