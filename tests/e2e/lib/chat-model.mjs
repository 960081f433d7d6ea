// A loopback OpenAI-chat model for e2e tests: keeps every request body and streams the deltas
// the test's `reply(body, count)` returns, as [delta, finishReason] pairs, then [DONE].
import http from "node:http";

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

// Resolves to { server, requests, port }; closed after the test when `t` is given.
export function startChatModel(t, reply) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const json = JSON.parse(body);
      requests.push(json);
      res.on("error", () => {});
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const [delta, finish] of reply(json, requests.length)) res.write(sseChunk(json.model, delta, finish));
      res.end("data: [DONE]\n\n");
    });
  });
  t?.after(() => server.close());
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, requests, port: server.address().port })),
  );
}
