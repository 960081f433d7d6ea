// A loopback OpenAI Responses model for e2e tests, streaming the event sequence of the published
// API reference (response.created, output_item.added / done around each item, the reasoning
// summary parts and their text deltas, output_text deltas, function_call_arguments and
// custom_tool_call_input deltas, response.completed with usage). It keeps every request body;
// the test's `reply(body, count)` returns the output items of each answer:
//   { type: "reasoning", summary: ["part", ...], encrypted: "opaque" }
//   { type: "message", text: "..." }
//   { type: "function_call", name, callId, arguments: "{...}" }
//   { type: "custom_tool_call", name, callId, input: "..." }
//   { type: "web_search_call", query, sources: ["https://...", ...] }  (the API's own search)
import { pieces, startSseModel } from "./sse-model.mjs";

// The events of one answer, each {type, ...} with its sequence_number.
export function responseEvents(items, { id = "resp_e2e", usage } = {}) {
  const events = [];
  const emit = (type, fields) => events.push({ type, sequence_number: events.length, ...fields });
  const shell = (status, extra = {}) => ({ id, object: "response", status, output: [], ...extra });
  emit("response.created", { response: shell("in_progress") });
  emit("response.in_progress", { response: shell("in_progress") });
  items.forEach((item, output_index) => {
    const itemId = `${item.type.slice(0, 3)}_${output_index}`;
    if (item.type === "reasoning") {
      emit("response.output_item.added", { output_index, item: { id: itemId, type: "reasoning", summary: [] } });
      item.summary.forEach((text, summary_index) => {
        const part = { type: "summary_text", text: "" };
        emit("response.reasoning_summary_part.added", { item_id: itemId, output_index, summary_index, part });
        for (const delta of pieces(text))
          emit("response.reasoning_summary_text.delta", { item_id: itemId, output_index, summary_index, delta });
        emit("response.reasoning_summary_text.done", { item_id: itemId, output_index, summary_index, text });
        emit("response.reasoning_summary_part.done", {
          item_id: itemId,
          output_index,
          summary_index,
          part: { type: "summary_text", text },
        });
      });
      emit("response.output_item.done", {
        output_index,
        item: {
          id: itemId,
          type: "reasoning",
          summary: item.summary.map((text) => ({ type: "summary_text", text })),
          encrypted_content: item.encrypted,
        },
      });
    } else if (item.type === "message") {
      const base = { id: itemId, type: "message", role: "assistant" };
      emit("response.output_item.added", { output_index, item: { ...base, status: "in_progress", content: [] } });
      const part = { type: "output_text", text: "", annotations: [] };
      emit("response.content_part.added", { item_id: itemId, output_index, content_index: 0, part });
      for (const delta of pieces(item.text))
        emit("response.output_text.delta", { item_id: itemId, output_index, content_index: 0, delta, logprobs: [] });
      emit("response.output_text.done", { item_id: itemId, output_index, content_index: 0, text: item.text });
      const done = { ...part, text: item.text };
      emit("response.content_part.done", { item_id: itemId, output_index, content_index: 0, part: done });
      emit("response.output_item.done", { output_index, item: { ...base, status: "completed", content: [done] } });
    } else if (item.type === "function_call") {
      const base = { id: itemId, type: "function_call", call_id: item.callId, name: item.name };
      emit("response.output_item.added", { output_index, item: { ...base, status: "in_progress", arguments: "" } });
      for (const delta of pieces(item.arguments))
        emit("response.function_call_arguments.delta", { item_id: itemId, output_index, delta });
      emit("response.function_call_arguments.done", { item_id: itemId, output_index, arguments: item.arguments });
      emit("response.output_item.done", {
        output_index,
        item: { ...base, status: "completed", arguments: item.arguments },
      });
    } else if (item.type === "web_search_call") {
      const base = { id: itemId, type: "web_search_call" };
      emit("response.output_item.added", { output_index, item: { ...base, status: "in_progress" } });
      emit("response.web_search_call.in_progress", { item_id: itemId, output_index });
      emit("response.web_search_call.searching", { item_id: itemId, output_index });
      emit("response.web_search_call.completed", { item_id: itemId, output_index });
      const sources = (item.sources ?? []).map((url) => ({ type: "url", url }));
      emit("response.output_item.done", {
        output_index,
        item: { ...base, status: "completed", action: { type: "search", query: item.query, sources } },
      });
    } else if (item.type === "custom_tool_call") {
      const base = { id: itemId, type: "custom_tool_call", call_id: item.callId, name: item.name };
      emit("response.output_item.added", { output_index, item: { ...base, status: "in_progress", input: "" } });
      for (const delta of pieces(item.input, 40))
        emit("response.custom_tool_call_input.delta", { item_id: itemId, output_index, delta });
      emit("response.custom_tool_call_input.done", { item_id: itemId, output_index, input: item.input });
      emit("response.output_item.done", { output_index, item: { ...base, status: "completed", input: item.input } });
    }
  });
  emit("response.completed", {
    response: shell("completed", {
      usage: usage ?? {
        input_tokens: 1500,
        input_tokens_details: { cached_tokens: 1024 },
        output_tokens: 120,
        output_tokens_details: { reasoning_tokens: 64 },
        total_tokens: 1620,
      },
    }),
  });
  return events;
}

// Resolves to { server, requests, port } (each request as { path, headers, body }); closed after
// the test when `t` is given.
export const startResponsesModel = (t, reply) =>
  startSseModel(t, {
    record: (req, body) => ({ path: req.url, headers: req.headers, body }),
    frames: (json, n) => responseEvents(reply(json, n)).map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`),
  });
