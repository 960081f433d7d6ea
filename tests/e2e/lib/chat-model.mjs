// A loopback OpenAI-chat model for e2e tests: keeps every request body and streams the deltas
// the test's `reply(body, count)` returns, as [delta, finishReason] pairs, then [DONE].
import { startSseModel } from "./sse-model.mjs";

// A message's text, whether its content is a string or a list of blocks.
export const textOfContent = (content) =>
  typeof content === "string" ? content : (content ?? []).map((b) => b.text ?? "").join("");

export const sseChunk = (model, delta, finish = null) =>
  `data: ${JSON.stringify({
    id: "c1",
    object: "chat.completion.chunk",
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  })}\n\n`;

// Resolves to { server, requests, others, port }; closed after the test when `t` is given.
// `requests` holds the request bodies; `other` answers what is not a chat request (see
// startSseModel).
export const startChatModel = (t, reply, other) =>
  startSseModel(t, {
    other,
    record: (req, json) => json,
    frames: (json, n) => [...reply(json, n).map(([delta, finish]) => sseChunk(json.model, delta, finish)), "data: [DONE]\n\n"],
  });

// A model driven by the prompt's words: "LIST RESOURCES" and "READ <uri>" call mcp_resource,
// "CALL <tool> <json>" calls that tool; a tool's result is acknowledged ("Got it."), anything
// else noted ("Noted.").
export const startCommandModel = (t) => {
  let calls = 0;
  return startChatModel(t, (json) => {
    const last = json.messages.at(-1);
    const text = last.role === "user" ? textOfContent(last.content) : "";
    let call;
    if (text.startsWith("LIST RESOURCES")) call = ["mcp_resource", { action: "list" }];
    const read = /^READ (\S+)/.exec(text);
    if (read) call = ["mcp_resource", { action: "read", uri: read[1] }];
    const tool = /^CALL (\S+) (.*)$/s.exec(text);
    if (tool) call = [tool[1], JSON.parse(tool[2])];
    if (!call) return [[{ role: "assistant", content: "" }], [{ content: last.role === "tool" ? "Got it." : "Noted." }], [{}, "stop"]];
    calls += 1;
    const fn = { name: call[0], arguments: JSON.stringify(call[1]) };
    return [[{ role: "assistant", content: "" }], [{ tool_calls: [{ index: 0, id: `call_${calls}`, type: "function", function: fn }] }], [{}, "tool_calls"]];
  });
};
