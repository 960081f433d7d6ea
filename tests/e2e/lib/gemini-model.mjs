// A loopback Gemini model for e2e tests, streaming streamGenerateContent?alt=sse as the published
// API reference shapes it: one GenerateContentResponse per `data:` line, thought parts (thought:
// true) and text in pieces, each functionCall whole in its own part, thoughtSignature on the part
// it belongs to, and the last chunk with finishReason and usageMetadata. It keeps every request
// as { path, headers, body }; the test's `reply(body, count)` returns the parts of each answer:
//   { thought: "text", signature?: "opaque" }
//   { text: "...", signature?: "opaque" }
//   { call: { name, args }, signature?: "opaque" }
import { pieces, startSseModel } from "./sse-model.mjs";

const chunk = (parts, extra = {}) =>
  `data: ${JSON.stringify({
    candidates: [{ content: { parts, role: "model" }, index: 0, ...extra.candidate }],
    ...(extra.usage ? { usageMetadata: extra.usage } : {}),
    modelVersion: "gemini-mock",
    responseId: "resp-gemini",
  })}\r\n\r\n`;

// The data lines of one answer.
export function geminiChunks(parts, { usage } = {}) {
  const out = [];
  for (const p of parts) {
    const sig = p.signature ? { thoughtSignature: p.signature } : {};
    if (p.call) out.push(chunk([{ functionCall: p.call, ...sig }]));
    else if (p.thought !== undefined) {
      const bits = pieces(p.thought);
      bits.forEach((text, i) => out.push(chunk([{ text, thought: true, ...(i === bits.length - 1 ? sig : {}) }])));
    } else {
      const bits = pieces(p.text);
      bits.forEach((text, i) => out.push(chunk([{ text, ...(i === 0 ? sig : {}) }])));
    }
  }
  out.push(
    chunk([{ text: "" }], {
      candidate: { finishReason: "STOP" },
      usage: usage ?? {
        promptTokenCount: 1500,
        cachedContentTokenCount: 1024,
        candidatesTokenCount: 60,
        thoughtsTokenCount: 40,
        totalTokenCount: 1600,
      },
    }),
  );
  return out;
}

// Resolves to { server, requests, port }; closed after the test when `t` is given.
export const startGeminiModel = (t, reply) =>
  startSseModel(t, {
    record: (req, body) => ({ path: req.url, headers: req.headers, body }),
    frames: (json, n) => geminiChunks(reply(json, n)),
  });
