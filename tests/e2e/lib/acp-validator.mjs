// Validates every line the agent writes against the official ACP JSON schema.
//
// Each agent message is checked twice:
//  1. the JSON-RPC envelope against the schema's top-level "Agent" message (anyOf[0]), and
//  2. strictly by method: requests/notifications the agent sends by their `method`
//     (session/update -> SessionNotification, session/request_permission ->
//     RequestPermissionRequest, ...), results by the method of the client request they answer
//     (initialize -> InitializeResponse, session/prompt -> PromptResponse, ...), and errors
//     against the JSON-RPC `Error` shape. The method -> $defs map is read from the schema's own
//     x-method / x-side annotations, so nothing is guessed.
import fs from "node:fs";
import { StringDecoder } from "node:string_decoder";
import Ajv2020 from "ajv/dist/2020.js";

const SCHEMA_ID = "https://lousho.invalid/acp/schema.json";

const intFormat = (min, max) => ({
  type: "number",
  validate: (n) => Number.isInteger(n) && n >= min && n <= max,
});

export class AcpValidator {
  constructor(schemaPath) {
    const schema = JSON.parse(fs.readFileSync(schemaPath, "utf8"));
    schema.$id = SCHEMA_ID;
    // strict:false because the schema carries x-* annotation keywords.
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    this.ajv.addFormat("int32", intFormat(-(2 ** 31), 2 ** 31 - 1));
    this.ajv.addFormat("uint16", intFormat(0, 65535));
    this.ajv.addFormat("uint32", intFormat(0, 2 ** 32 - 1));
    this.ajv.addFormat("int64", intFormat(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
    this.ajv.addFormat("uint64", intFormat(0, Number.MAX_SAFE_INTEGER));
    this.ajv.addFormat("double", { type: "number", validate: (n) => Number.isFinite(n) });
    this.ajv.addFormat("uri", /^[a-zA-Z][a-zA-Z0-9+.-]*:\S*$/);
    this.ajv.addSchema(schema);
    this.defs = schema.$defs;
    this.cache = new Map();

    // Method maps from the schema annotations. x-side = the side that handles the method.
    this.agentRequestParams = {}; // agent -> client requests
    this.agentNotificationParams = {}; // agent -> client notifications
    this.agentResults = {}; // results the agent returns for client requests
    this.clientRequestParams = {}; // client -> agent requests (to check our own raw input)
    for (const [name, def] of Object.entries(this.defs)) {
      const m = def["x-method"];
      if (!m) continue;
      const side = def["x-side"];
      if (side === "client" && name.endsWith("Request")) this.agentRequestParams[m] = name;
      else if (side === "client" && name.endsWith("Notification")) this.agentNotificationParams[m] = name;
      else if (side === "agent" && name.endsWith("Response")) this.agentResults[m] = name;
      else if (side === "agent" && name.endsWith("Request")) this.clientRequestParams[m] = name;
      // Protocol-level notifications ($/cancel_request) travel in either direction.
      else if (side === "protocol" && name.endsWith("Notification")) this.agentNotificationParams[m] = name;
    }
    for (const [m, d] of [
      ["session/update", "SessionNotification"],
      ["session/request_permission", "RequestPermissionRequest"],
      ["initialize", "InitializeResponse"],
      ["session/new", "NewSessionResponse"],
      ["session/prompt", "PromptResponse"],
    ]) {
      const table = d.endsWith("Response")
        ? this.agentResults
        : d.endsWith("Request")
          ? this.agentRequestParams
          : this.agentNotificationParams;
      if (table[m] !== d) throw new Error(`schema map: expected ${m} -> ${d}, got ${table[m]}`);
    }
  }

  compiled(ref) {
    let v = this.cache.get(ref);
    if (!v) {
      v = this.ajv.compile({ $ref: `${SCHEMA_ID}#${ref}` });
      this.cache.set(ref, v);
    }
    return v;
  }

  // Returns null when valid, else a short error string.
  check(ref, value) {
    const v = this.compiled(ref);
    if (v(value)) return null;
    return this.ajv.errorsText(v.errors.slice(0, 6), { separator: "; " });
  }

  checkDef(name, value) {
    if (!this.defs[name]) throw new Error(`no $defs/${name} in the schema`);
    return this.check(`/$defs/${name}`, value);
  }

  // Validates one agent message. `methodOfId(id)` returns the method of the client request with
  // that id (undefined if the client never sent it). Returns a list of problems (empty = ok).
  checkAgentMessage(msg, methodOfId) {
    const problems = [];
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
      return ["not a JSON-RPC object"];
    }
    if (msg.jsonrpc !== "2.0") problems.push(`jsonrpc is ${JSON.stringify(msg.jsonrpc)}, not "2.0"`);
    const env = this.check("/anyOf/0", msg);
    if (env) problems.push(`envelope: ${env}`);
    const hasId = Object.hasOwn(msg, "id");
    if (typeof msg.method === "string") {
      if (Object.hasOwn(msg, "result") || Object.hasOwn(msg, "error")) {
        problems.push("a request/notification carries result/error");
      }
      const table = hasId ? this.agentRequestParams : this.agentNotificationParams;
      const def = table[msg.method];
      if (!def) {
        if (!msg.method.startsWith("_")) {
          problems.push(`unknown agent ${hasId ? "request" : "notification"} method ${msg.method}`);
        }
      } else {
        const e = this.checkDef(def, msg.params);
        if (e) problems.push(`${msg.method} params vs ${def}: ${e}`);
      }
      if (hasId && (msg.id === null || (typeof msg.id !== "string" && !Number.isInteger(msg.id)))) {
        problems.push(`bad request id ${JSON.stringify(msg.id)}`);
      }
      return problems;
    }
    if (!hasId) return [...problems, "neither a request, a notification nor a response"];
    const hasResult = Object.hasOwn(msg, "result");
    const hasError = Object.hasOwn(msg, "error");
    if (hasResult === hasError) {
      return [...problems, "a response must carry exactly one of result / error"];
    }
    const extra = Object.keys(msg).filter((k) => !["jsonrpc", "id", "result", "error"].includes(k));
    if (extra.length) problems.push(`unexpected response keys: ${extra.join(",")}`);
    if (hasError) {
      const e = this.checkDef("Error", msg.error);
      if (e) problems.push(`error vs Error: ${e}`);
      if (!Number.isInteger(msg.error?.code)) problems.push("error.code is not an integer");
      if (msg.id !== null && methodOfId(msg.id) === undefined) {
        problems.push(`error response for an id the client never used: ${JSON.stringify(msg.id)}`);
      }
      return problems;
    }
    const method = methodOfId(msg.id);
    if (method === undefined) {
      return [...problems, `result for an id the client never used: ${JSON.stringify(msg.id)}`];
    }
    const def = this.agentResults[method];
    if (def) {
      const e = this.checkDef(def, msg.result);
      if (e) problems.push(`${method} result vs ${def}: ${e}`);
    } else if (!method.startsWith("_")) {
      problems.push(`result for method ${method} which has no response type`);
    }
    return problems;
  }
}

// Follows one connection: every raw line both ways, in order. Client lines teach it which
// id belongs to which method; agent lines are parsed and validated.
export class WireLog {
  constructor(validator) {
    this.validator = validator;
    this.entries = []; // {dir: "in"|"out", line, msg?, t}
    this.problems = []; // {line, problems}
    this.clientIds = new Map(); // JSON.stringify(id) -> method
  }

  methodOfId(id) {
    return this.clientIds.get(JSON.stringify(id));
  }

  clientLine(line) {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      msg = undefined; // tests send junk on purpose
    }
    if (msg && typeof msg.method === "string" && Object.hasOwn(msg, "id")) {
      this.clientIds.set(JSON.stringify(msg.id), msg.method);
    }
    this.entries.push({ dir: "in", line, msg, t: performance.now() });
  }

  agentLine(line) {
    const entry = { dir: "out", line, t: performance.now() };
    this.entries.push(entry);
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      this.problems.push({ line, problems: [`not JSON: ${e.message}`] });
      return entry;
    }
    entry.msg = msg;
    const p = this.validator.checkAgentMessage(msg, (id) => this.methodOfId(id));
    if (p.length) this.problems.push({ line, problems: p });
    return entry;
  }

  agentMessages() {
    return this.entries.filter((e) => e.dir === "out" && e.msg).map((e) => e.msg);
  }

  report() {
    return this.problems
      .map((p) => `${p.line.slice(0, 400)}\n    -> ${p.problems.join("\n    -> ")}`)
      .join("\n");
  }
}

// Splits a byte stream into lines (\n), keeping a partial tail.
export function lineSplitter(onLine) {
  let buf = "";
  const dec = new StringDecoder("utf8"); // a chunk may end inside a multi-byte character
  return {
    push(chunk) {
      buf += typeof chunk === "string" ? chunk : dec.write(chunk);
      let i;
      while ((i = buf.indexOf("\n")) >= 0) {
        onLine(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    },
    end() {
      buf += dec.end();
      if (buf.length) onLine(buf);
      buf = "";
    },
  };
}
