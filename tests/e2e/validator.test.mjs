// Proves the schema validator used by the other tests accepts real ACP output and rejects
// broken output, so a green wire check means something.
import test from "node:test";
import assert from "node:assert/strict";
import { AcpValidator, WireLog } from "./lib/acp-validator.mjs";
import { schemaPath } from "./lib/env.mjs";

const v = new AcpValidator(schemaPath);

function wire(clientLines, agentLines) {
  const w = new WireLog(v);
  for (const l of clientLines) w.clientLine(JSON.stringify(l));
  for (const l of agentLines) w.agentLine(typeof l === "string" ? l : JSON.stringify(l));
  return w;
}

const initReq = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1 } };
const newReq = { jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/tmp", mcpServers: [] } };
const promptReq = {
  jsonrpc: "2.0", id: 2, method: "session/prompt",
  params: { sessionId: "s", prompt: [{ type: "text", text: "hi" }] },
};
const upd = (update) => ({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update } });

const good = [
  { jsonrpc: "2.0", id: 0, result: { protocolVersion: 1, agentCapabilities: { loadSession: false }, authMethods: [] } },
  { jsonrpc: "2.0", id: 1, result: { sessionId: "s" } },
  upd({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "hello" } }),
  upd({ sessionUpdate: "tool_call", toolCallId: "t1", title: "Read", kind: "read", status: "pending" }),
  upd({ sessionUpdate: "plan", entries: [{ content: "x", priority: "high", status: "pending" }] }),
  {
    jsonrpc: "2.0", id: 7, method: "session/request_permission",
    params: {
      sessionId: "s", toolCall: { toolCallId: "t1" },
      options: [{ optionId: "a", name: "Allow", kind: "allow_once" }],
    },
  },
  { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 7 } },
  { jsonrpc: "2.0", id: 2, result: { stopReason: "end_turn" } },
  { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } },
  { jsonrpc: "2.0", id: 2, error: { code: -32603, message: "boom", data: { code: "X" } } },
];

test("validator: method map comes from the schema", () => {
  assert.equal(v.agentNotificationParams["session/update"], "SessionNotification");
  assert.equal(v.agentRequestParams["session/request_permission"], "RequestPermissionRequest");
  assert.equal(v.agentResults["initialize"], "InitializeResponse");
  assert.equal(v.agentResults["session/new"], "NewSessionResponse");
  assert.equal(v.agentResults["session/prompt"], "PromptResponse");
  assert.equal(v.agentNotificationParams["$/cancel_request"], "CancelRequestNotification");
});

test("validator: accepts well-formed agent output", () => {
  const w = wire([initReq, newReq, promptReq], good);
  assert.equal(w.problems.length, 0, w.report());
});

const broken = {
  "non-JSON line": "Starting lousho...",
  "missing jsonrpc": { id: 2, result: { stopReason: "end_turn" } },
  "jsonrpc 1.0": { jsonrpc: "1.0", id: 2, result: { stopReason: "end_turn" } },
  "unknown sessionUpdate": upd({ sessionUpdate: "banana", content: { type: "text", text: "x" } }),
  "tool_call without title": upd({ sessionUpdate: "tool_call", toolCallId: "t1", kind: "read" }),
  "bad tool kind": upd({ sessionUpdate: "tool_call", toolCallId: "t1", title: "x", kind: "banana" }),
  "bad tool status": upd({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "done" }),
  "bad plan priority": upd({ sessionUpdate: "plan", entries: [{ content: "x", priority: "urgent", status: "pending" }] }),
  "chunk content without type": upd({ sessionUpdate: "agent_message_chunk", content: { text: "x" } }),
  "update without sessionId": { jsonrpc: "2.0", method: "session/update", params: { update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } } } },
  "bad stopReason": { jsonrpc: "2.0", id: 2, result: { stopReason: "done" } },
  "prompt result without stopReason": { jsonrpc: "2.0", id: 2, result: {} },
  "session/new result without sessionId": { jsonrpc: "2.0", id: 1, result: { modes: null } },
  "initialize result with string version": { jsonrpc: "2.0", id: 0, result: { protocolVersion: "1" } },
  "result for unknown id": { jsonrpc: "2.0", id: 99, result: {} },
  "result and error": { jsonrpc: "2.0", id: 2, result: { stopReason: "end_turn" }, error: { code: 1, message: "x" } },
  "error code as string": { jsonrpc: "2.0", id: 2, error: { code: "-32603", message: "x" } },
  "error without message": { jsonrpc: "2.0", id: 2, error: { code: -32603 } },
  "permission option bad kind": {
    jsonrpc: "2.0", id: 8, method: "session/request_permission",
    params: { sessionId: "s", toolCall: { toolCallId: "t1" }, options: [{ optionId: "a", name: "A", kind: "allow_sometimes" }] },
  },
  "$/cancel_request without requestId": { jsonrpc: "2.0", method: "$/cancel_request", params: {} },
  "unknown agent method": { jsonrpc: "2.0", method: "session/blah", params: {} },
};

for (const [name, msg] of Object.entries(broken)) {
  test(`validator: rejects ${name}`, () => {
    const w = wire([initReq, newReq, promptReq], [msg]);
    assert.ok(w.problems.length > 0, `expected a problem for ${name}`);
  });
}
