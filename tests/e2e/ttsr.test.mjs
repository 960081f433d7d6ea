// Stream rules end to end: lousho (OpenAI chat provider, over real HTTP) against a scripted model
// server in this test. The first reply breaks a project rule (.lousho/rules/) mid-stream; lousho
// stops the stream, shows the interruption as a completed "think" tool call, and asks again with
// the rule injected; the retry complies. Driven over ACP by the official SDK; every line the
// binary writes is validated against the ACP schema.
import test from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { withAgent, textOf } from "./lib/sdk-client.mjs";
import { tempDir, workspace } from "./lib/env.mjs";
import { writeAgentSpec } from "./lib/agent-spec.mjs";

// An OpenAI-compatible chat server: streams the violating reply unless the conversation ends
// with the injected rule, then a clean one. Records every request body.
function startModel() {
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const json = JSON.parse(body);
      requests.push(json);
      const last = json.messages[json.messages.length - 1];
      const lastText = typeof last.content === "string" ? last.content
        : (last.content ?? []).map((b) => b.text ?? "").join("");
      const told = last.role === "user" && lastText.includes("<system-interrupt");
      const pieces = told
        ? ["Here is ", "ALLOWED", "_TOKEN."]
        : ["Sure: ", "FORBIDDEN_", "TOKEN", " here and more text"];
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.on("error", () => {}); // the client may hang up mid-stream: that is the point
      const chunk = (delta, finish = null) =>
        `data: ${JSON.stringify({
          id: "c1",
          object: "chat.completion.chunk",
          model: json.model,
          choices: [{ index: 0, delta, finish_reason: finish }],
        })}\n\n`;
      res.write(chunk({ role: "assistant", content: "" }));
      for (const p of pieces) res.write(chunk({ content: p }));
      res.write(chunk({}, "stop"));
      res.end("data: [DONE]\n\n");
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, requests, port: server.address().port })),
  );
}

test("a stream rule interrupts the first reply and the retry complies", { timeout: 60000 }, async (t) => {
  const model = await startModel();
  t.after(() => model.server.close());
  const ws = workspace(t);
  fs.mkdirSync(path.join(ws, ".lousho/rules"), { recursive: true });
  fs.writeFileSync(
    path.join(ws, ".lousho/rules/no-forbidden.md"),
    "---\ndescription: Never write the forbidden token\ncondition: \"FORBIDDEN_TOKEN\"\n---\n" +
      "Do not output the string FORBIDDEN_TOKEN. Use ALLOWED_TOKEN instead.\n",
  );
  const provider = { api: "openai-chat", baseUrl: `http://127.0.0.1:${model.port}/v1`, apiKeyEnv: "OPENAI_API_KEY" };
  const spec = writeAgentSpec(tempDir(t, "lousho-ttsr-spec-"), {
    name: "ttsr-e2e",
    model: "openai/gpt-4o-mini",
    instructions: "test",
    tools: ["read"],
    providers: { openai: provider },
  });

  await withAgent(t, { spec, env: { OPENAI_API_KEY: "test" }, cwd: ws }, async (c) => {
    const sid = await c.newSession(ws);
    const { res, error, events } = await c.prompt(sid, "say the token");
    assert.equal(error, undefined, error?.message);
    assert.equal(res.stopReason, "end_turn");

    // The editor saw the text before the violation, the interruption, then the retry.
    const shown = textOf(events, "agent_message_chunk");
    assert.equal(shown, "Sure: FORBIDDEN_Here is ALLOWED_TOKEN.");
    assert.ok(!shown.includes("FORBIDDEN_TOKEN"), "the violating delta never left lousho");
    const think = events.filter((e) => e.kind === "update" && e.update.sessionUpdate === "tool_call");
    assert.equal(think.length, 1);
    assert.equal(think[0].update.kind, "think");
    assert.equal(think[0].update.status, "completed");
    assert.match(think[0].update.title, /no-forbidden/);
    assert.equal(
      think[0].update.content[0].content.text,
      "Do not output the string FORBIDDEN_TOKEN. Use ALLOWED_TOKEN instead.",
    );
    const order = events
      .filter((e) => e.kind === "update")
      .map((e) => e.update.sessionUpdate)
      .filter((k) => k === "agent_message_chunk" || k === "tool_call");
    assert.equal(order.indexOf("tool_call"), 2, order.join(","));

    // The model was asked twice; the retry ends with the rule as a user message and (discard
    // mode) without the partial answer.
    assert.equal(model.requests.length, 2);
    const retry = model.requests[1].messages;
    assert.ok(!retry.some((m) => m.role === "assistant"), JSON.stringify(retry));
    const last = retry[retry.length - 1];
    assert.equal(last.role, "user");
    const lastText = typeof last.content === "string" ? last.content : last.content.map((b) => b.text).join("");
    assert.ok(
      lastText.startsWith(
        '<system-interrupt reason="rule_violation" rule="no-forbidden" path=".lousho/rules/no-forbidden.md">\n' +
          "Output interrupted: violated user-defined rule.\n",
      ),
      lastText,
    );

    // Once per session: the same violation in the next prompt is not interrupted.
    const again = await c.prompt(sid, "say it again");
    assert.equal(again.res.stopReason, "end_turn");
    assert.equal(textOf(again.events, "agent_message_chunk"), "Sure: FORBIDDEN_TOKEN here and more text");
    assert.equal(model.requests.length, 3);
  });
});
