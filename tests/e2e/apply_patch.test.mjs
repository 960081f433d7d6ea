// apply_patch under the spec's permission rules, end to end: a codex model (the Responses mock
// written to the published event sequence) sends patches through the real binary, driven by the
// official ACP SDK. Each path of a patch is decided as `write` (a new file) or `edit` (a changed,
// deleted or moved file) would be: one denied path refuses the whole patch before anything is
// written, and the paths left to the user are asked about once, in one request listing them all.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { withAgent } from "./lib/sdk-client.mjs";
import { tempDir, workspace } from "./lib/env.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";
import { startResponsesModel } from "./lib/responses-model.mjs";

const patch = (...lines) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n");

// Three files, one of them under the denied folder.
const DENIED = patch(
  "*** Update File: notes.txt",
  "-alpha",
  "+ALPHA",
  "*** Add File: src/new.txt",
  "+new",
  "*** Delete File: secret/key.txt",
);

function codexSpec(t, port, permissions) {
  return writeAgentSpec(tempDir(t, "lousho-patch-spec-"), {
    name: "codex",
    model: "openai/gpt-5-codex",
    permissions,
    providers: {
      openai: { api: "openai-responses", baseUrl: `http://127.0.0.1:${port}/v1`, apiKeyEnv: "OPENAI_API_KEY" },
    },
  });
}

// The output the model got for each custom tool call (the last request carries them all).
const outputs = (model) =>
  model.requests.at(-1).body.input.filter((i) => i.type === "custom_tool_call_output").map((i) => i.output);

function seed(ws) {
  fs.writeFileSync(path.join(ws, "notes.txt"), "alpha\n");
  fs.mkdirSync(path.join(ws, "secret"));
  fs.writeFileSync(path.join(ws, "secret/key.txt"), "k\n");
}

test("apply_patch: a patch of three files with one denied path changes nothing, and the model is told why", { timeout: 60000 }, async (t) => {
  const model = await startResponsesModel(t, (body, n) =>
    n === 1
      ? [{ type: "custom_tool_call", name: "apply_patch", callId: "call_patch", input: DENIED }]
      : [{ type: "message", text: "Understood." }],
  );
  const ws = workspace(t);
  seed(ws);
  const spec = codexSpec(t, model.port, { edit: { "secret/**": "deny" }, "*": { "*": "allow" } });
  await withAgent(t, { spec, env: { OPENAI_API_KEY: "sk-e2e" } }, async (c) => {
    const sid = await c.newSession(ws);
    const { res, events } = await c.prompt(sid, "patch the three files");
    assert.equal(res?.stopReason, "end_turn");
    // Nothing on disk changed: the update, the new file and the deletion all stayed undone.
    assert.equal(fs.readFileSync(path.join(ws, "notes.txt"), "utf8"), "alpha\n");
    assert.equal(fs.existsSync(path.join(ws, "src/new.txt")), false);
    assert.equal(fs.readFileSync(path.join(ws, "secret/key.txt"), "utf8"), "k\n");
    // No one was asked; the model got the path and the rule.
    assert.equal(events.filter((e) => e.kind === "permission").length, 0);
    const [out] = outputs(model);
    assert.match(out, /secret\/key\.txt: denied by permission rule edit "secret\/\*\*"; nothing was changed/);
    const failed = events.map((e) => e.update).filter((u) => u?.sessionUpdate === "tool_call_update" && u.status === "failed");
    assert.equal(failed.length, 1);
  });
});

test("apply_patch: the paths left to the user are asked about once, and always-allow covers exactly those paths", { timeout: 60000 }, async (t) => {
  const first = patch(
    "*** Add File: docs/new.md",
    "+doc",
    "*** Update File: notes.txt",
    "*** Move to: archive/notes.txt",
    "@@",
    "-alpha",
    "+ALPHA",
  );
  // Again the same paths (new ones there now), then a path the answer did not name.
  const again = patch("*** Update File: archive/notes.txt", "-ALPHA", "+again");
  const other = patch("*** Add File: other.txt", "+x");
  const model = await startResponsesModel(t, (body, n) => {
    if (n === 1) return [{ type: "custom_tool_call", name: "apply_patch", callId: "call_1", input: first }];
    if (n === 2) return [{ type: "custom_tool_call", name: "apply_patch", callId: "call_2", input: again }];
    if (n === 3) return [{ type: "custom_tool_call", name: "apply_patch", callId: "call_3", input: other }];
    return [{ type: "message", text: "Done." }];
  });
  const ws = workspace(t);
  seed(ws);
  // docs/ is allowed for new files; the rest is left to the user.
  const spec = codexSpec(t, model.port, { write: { "docs/**": "allow" } });
  await withAgent(
    t,
    { spec, env: { OPENAI_API_KEY: "sk-e2e" } },
    async (c) => {
      const sid = await c.newSession(ws);
      const { res, events } = await c.prompt(sid, "move the notes");
      assert.equal(res?.stopReason, "end_turn");
      const perms = events.filter((e) => e.kind === "permission").map((e) => e.params.toolCall);
      // One request for the first patch, listing all of its paths and diffs; none for the same
      // paths again (the moved file is at archive/notes.txt, which the answer covered); one for
      // the patch naming a new path.
      assert.equal(perms.length, 2, JSON.stringify(perms.map((p) => p.title)));
      assert.deepEqual(
        perms[0].locations.map((l) => path.relative(ws, l.path)),
        ["docs/new.md", "notes.txt", "archive/notes.txt"],
      );
      assert.deepEqual(
        perms[0].content.map((d) => [d.type, path.relative(ws, d.path)]),
        [
          ["diff", "docs/new.md"],
          ["diff", "notes.txt"],
          ["diff", "archive/notes.txt"],
        ],
      );
      assert.deepEqual(perms[1].locations.map((l) => path.relative(ws, l.path)), ["other.txt"]);
      assert.equal(fs.readFileSync(path.join(ws, "docs/new.md"), "utf8"), "doc\n");
      assert.equal(fs.existsSync(path.join(ws, "notes.txt")), false);
      assert.equal(fs.readFileSync(path.join(ws, "archive/notes.txt"), "utf8"), "again\n");
      assert.equal(fs.readFileSync(path.join(ws, "other.txt"), "utf8"), "x\n");
      const results = outputs(model);
      assert.equal(results.length, 3);
      assert.match(results[0], /A docs\/new\.md\nD notes\.txt\nA archive\/notes\.txt/);
    },
    { permission: "allow_always" },
  );
});
