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
