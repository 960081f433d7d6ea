// The `ask` tool through the RPC door's extension-UI dialogs: a yes/no question is a `confirm`,
// choices a `select`, free text an `input`; the host's answer is in the model's next request
// (@copilotkit/aimock as the model).
import test from "node:test";
import assert from "node:assert/strict";
import { RpcHost } from "./lib/rpc-host.mjs";
import { tempDir, workspace } from "./lib/env.mjs";
import { useAimock } from "./lib/aimock.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";

const mock = useAimock("elicitation.json");

async function toolMessages(mark, id) {
  return (await mock.journal())
    .slice(mark)
    .filter((e) => e.path === "/v1/chat/completions")
    .flatMap((e) => e.body?.messages ?? [])
    .filter((m) => m.role === "tool" && m.tool_call_id === id);
}

test("ask through the RPC door's dialogs", { timeout: 60000 }, async (t) => {
  const ws = workspace(t);
  const spec = writeAgentSpec(tempDir(t, "lousho-rpc-ask-"), {
    name: "rpc-ask-e2e",
    model: "openai/gpt-4o-mini",
    instructions: "You are a test agent.",
    tools: ["ask"],
    maxSteps: 3,
  });
  const host = new RpcHost(t, { spec, cwd: ws, env: mock.openaiEnv() });

  // Sends `message`, answers the first extension_ui_request with `answer(request)`, and returns
  // the request and the tool message the model got next.
  async function ask(message, id, answer) {
    const mark = (await mock.journal()).length;
    const from = host.frames.length;
    const ended = host.prompt(message);
    const req = await host.waitFor((f) => f.type === "extension_ui_request", `the dialog for ${message}`, from);
    host.child.stdin.write(JSON.stringify({ type: "extension_ui_response", id: req.id, ...answer(req) }) + "\n");
    await ended;
    // The newest tool message of that id (the session's history repeats the earlier ones).
    return { req, told: (await toolMessages(mark, id)).at(-1) };
  }

  await t.test("yes or no is a confirm", async () => {
    const { req, told } = await ask("ask and wait", "call_ask_4", () => ({ confirmed: false }));
    assert.equal(req.method, "confirm");
    assert.equal(req.title, "Proceed?");
    assert.equal(told.content, "The user answered: no");
  });

  await t.test("choices are a select", async () => {
    const { req, told } = await ask("pick a file", "call_ask_1", () => ({ value: "a.txt" }));
    assert.equal(req.method, "select");
    assert.deepEqual(req.options, ["a.txt", "b.txt"]);
    assert.equal(told.content, "The user answered: a.txt");
  });

  await t.test("free text is an input", async () => {
    const { req, told } = await ask("name the branch", "call_ask_2", () => ({ value: "main" }));
    assert.equal(req.method, "input");
    assert.equal(req.title, "Branch name?");
    assert.equal(told.content, "The user answered: main");
  });

  await t.test("a dismissed dialog is the model's answer", async () => {
    const { told } = await ask("pick a file", "call_ask_1", () => ({ cancelled: true }));
    assert.equal(told.content, "The user dismissed the question without answering.");
  });

  await host.finish();
});
