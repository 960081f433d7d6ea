// ACP wire codec.
#include "acp/codec.h"

#include "agent/history.h"
#include "support/json_util.h"

namespace lousho::acp {
using agent::BlockType;
using agent::ContentBlock;
using agent::Event;

ClientCapabilities ClientCapabilitiesFromJson(const Json::Value& caps) {
  ClientCapabilities c;
  if (!caps.isObject()) return c;
  c.raw = caps;
  const Json::Value& fs = MemberOrNull(caps, "fs");
  c.fs_read = BoolOr(fs, "readTextFile", false);
  c.fs_write = BoolOr(fs, "writeTextFile", false);
  c.terminal = BoolOr(caps, "terminal", false);
  c.auth_terminal = BoolOr(MemberOrNull(caps, "auth"), "terminal", false);
  c.meta_terminal_auth = BoolOr(MemberOrNull(caps, "_meta"), "terminal-auth", false);
  return c;
}

namespace {
Error BadParams(const std::string& message) {
  return MakeError(ErrorCode::kInvalidParams, message);
}
}  // namespace

Result<InitializeParams> InitializeParams::FromJson(const Json::Value& params) {
  FieldReader r(params, "params");
  InitializeParams p;
  auto version = r.Int("protocolVersion", true);
  const Json::Value* caps = r.Object("clientCapabilities", false);
  if (!r.ok()) return BadParams(r.error());
  p.protocol_version = *version;
  p.capabilities = ClientCapabilitiesFromJson(caps ? *caps : Json::Value());
  return p;
}

Result<NewSessionParams> NewSessionParams::FromJson(const Json::Value& params) {
  FieldReader r(params, "params");
  NewSessionParams p;
  auto cwd = r.String("cwd", true);
  const Json::Value* mcp = r.Array("mcpServers", false);
  const Json::Value* extra = r.Array("additionalDirectories", false);
  if (!r.ok()) return BadParams(r.error());
  p.cwd = *cwd;
  if (mcp) p.mcp_servers = *mcp;
  if (extra) {
    for (Json::ArrayIndex i = 0; i < extra->size(); ++i) {
      auto dir = AsString(ElementOrNull(*extra, i));
      if (!dir || dir->empty() || (*dir)[0] != '/')
        return BadParams("params.additionalDirectories[" + std::to_string(i) +
                         "]: expected an absolute path");
      p.additional_directories.push_back(*dir);
    }
  }
  return p;
}

Result<PromptParams> PromptParams::FromJson(const Json::Value& params) {
  FieldReader r(params, "params");
  PromptParams p;
  auto sid = r.String("sessionId", true);
  if (!r.ok()) return BadParams(r.error());
  p.session_id = *sid;
  const Json::Value* prompt = r.Array("prompt", true);
  if (!r.ok()) return BadParams(r.error());
  if (prompt->empty()) return BadParams("params.prompt: must not be empty");
  p.prompt = *prompt;
  return p;
}

Result<SetModeParams> SetModeParams::FromJson(const Json::Value& params) {
  FieldReader r(params, "params");
  SetModeParams p;
  auto sid = r.String("sessionId", true);
  auto mode = r.String("modeId", true);
  if (!r.ok()) return BadParams(r.error());
  p.session_id = *sid;
  p.mode_id = *mode;
  return p;
}

Result<SessionIdParams> SessionIdParams::FromJson(const Json::Value& params) {
  FieldReader r(params, "params");
  auto sid = r.String("sessionId", true);
  if (!r.ok()) return BadParams(r.error());
  return SessionIdParams{*sid};
}

Result<AuthenticateParams> AuthenticateParams::FromJson(const Json::Value& params) {
  FieldReader r(params, "params");
  auto id = r.String("methodId", true);
  if (!r.ok()) return BadParams(r.error());
  return AuthenticateParams{*id};
}

Result<CancelRequestParams> CancelRequestParams::FromJson(const Json::Value& params) {
  FieldReader r(params, "params");
  const Json::Value* id = r.Any("requestId", true);
  if (!r.ok()) return BadParams(r.error());
  return CancelRequestParams{*id};
}

namespace {
Error BlockError(const FieldReader& r) { return MakeError(ErrorCode::kInvalidParams, r.error()); }

// An embedded resource: its text inline, an image when the model takes images, else a note.
Result<ContentBlock> ResourceBlock(FieldReader& r, const std::string& path, bool images) {
  const Json::Value* res = r.Object("resource", true);
  if (!r.ok()) return BlockError(r);
  FieldReader rr(*res, path + ".resource");
  auto uri = rr.String("uri", true);
  auto text = rr.String("text", false);
  auto mime = rr.String("mimeType", false);
  if (!rr.ok()) return BlockError(rr);
  if (text) {
    const bool ends_in_newline = text->empty() || text->back() == '\n';
    return ContentBlock::Text("Contents of " + *uri + ":\n```\n" + *text +
                              (ends_in_newline ? "" : "\n") + "```");
  }
  auto blob = AsString(MemberOrNull(*res, "blob"));
  if (mime && mime->rfind("image/", 0) == 0 && images && blob)
    return ContentBlock::Image(*mime, *blob);
  return ContentBlock::Text("[binary resource " + *uri + (mime ? " (" + *mime + ")" : "") +
                            " not shown]");
}

Result<ContentBlock> PromptBlock(const Json::Value& v, const std::string& path, bool images) {
  FieldReader r(v, path);
  auto type = r.String("type", true);
  if (!r.ok()) return BlockError(r);
  if (*type == "text") {
    auto text = r.String("text", true);
    if (!r.ok()) return BlockError(r);
    return ContentBlock::Text(*text);
  }
  if (*type == "resource_link") {
    auto uri = r.String("uri", true);
    auto name = r.String("name", false);
    if (!r.ok()) return BlockError(r);
    return ContentBlock::Text("[" + name.value_or(*uri) + "](" + *uri + ")");
  }
  if (*type == "resource") return ResourceBlock(r, path, images);
  if (*type == "image") {
    auto data = r.String("data", true);
    auto mime = r.String("mimeType", true);
    if (!r.ok()) return BlockError(r);
    if (images) return ContentBlock::Image(*mime, *data);
    return ContentBlock::Text("[an image was attached, but this model does not accept images]");
  }
  // audio and future kinds: degrade rather than fail the turn.
  return ContentBlock::Text("[a " + *type + " block was attached but is not supported]");
}
}  // namespace

Result<std::vector<ContentBlock>> PromptFromJson(const Json::Value& prompt, bool images_supported) {
  std::vector<ContentBlock> out;
  for (Json::ArrayIndex i = 0; i < prompt.size(); ++i) {
    auto block = PromptBlock(ElementOrNull(prompt, i), "params.prompt[" + std::to_string(i) + "]",
                             images_supported);
    if (!block.ok()) return block.error();
    out.push_back(std::move(*block));
  }
  return out;
}

const char* ToolKindName(agent::ToolKind kind) { return agent::ToolKindId(kind); }

const char* StopReasonName(agent::TurnStop stop) {
  switch (stop) {
    case agent::TurnStop::kEndTurn:
      return "end_turn";
    case agent::TurnStop::kMaxTokens:
      return "max_tokens";
    case agent::TurnStop::kMaxTurnRequests:
      return "max_turn_requests";
    case agent::TurnStop::kRefusal:
      return "refusal";
    case agent::TurnStop::kCancelled:
      return "cancelled";
  }
  return "end_turn";
}

namespace {
struct ModeInfo {
  agent::PermissionMode mode;
  const char* name;
  const char* description;
};
const ModeInfo kModes[] = {
    {agent::PermissionMode::kDefault, "Default", "Ask before edits and commands"},
    {agent::PermissionMode::kAcceptEdits, "Accept edits", "Apply file edits without asking"},
    {agent::PermissionMode::kPlan, "Plan", "Read-only: look and plan, change nothing"},
    {agent::PermissionMode::kBypass, "Bypass permissions", "Run every tool without asking"},
};

Json::Value TextBlock(const std::string& text) {
  Json::Value b(Json::objectValue);
  b["type"] = "text";
  b["text"] = text;
  return b;
}
}  // namespace

const char* ModeName(agent::PermissionMode mode) { return agent::PermissionModeId(mode); }

Json::Value ModesToJson(agent::PermissionMode current) {
  Json::Value modes(Json::objectValue);
  modes["currentModeId"] = ModeName(current);
  Json::Value list(Json::arrayValue);
  for (const auto& m : kModes) {
    Json::Value item(Json::objectValue);
    item["id"] = ModeName(m.mode);
    item["name"] = m.name;
    item["description"] = m.description;
    list.append(item);
  }
  modes["availableModes"] = list;
  return modes;
}

Json::Value DiffToJson(const agent::FileDiff& diff) {
  Json::Value d(Json::objectValue);
  d["type"] = "diff";
  d["path"] = diff.path;
  d["oldText"] = diff.old_text ? Json::Value(*diff.old_text) : Json::Value();
  d["newText"] = diff.new_text;
  return d;
}

Json::Value LocationToJson(const agent::ToolLocation& loc) {
  Json::Value l(Json::objectValue);
  l["path"] = loc.path;
  if (loc.line > 0) l["line"] = loc.line;
  return l;
}

namespace {
Json::Value Locations(const std::vector<agent::ToolLocation>& locs) {
  Json::Value arr(Json::arrayValue);
  for (const auto& l : locs) arr.append(LocationToJson(l));
  return arr;
}

Json::Value ToolOutputContent(const agent::ToolOutput& out) {
  Json::Value content(Json::arrayValue);
  if (!out.terminal_id.empty()) {
    Json::Value t(Json::objectValue);
    t["type"] = "terminal";
    t["terminalId"] = out.terminal_id;
    content.append(t);
  }
  for (const auto& d : out.diffs) content.append(DiffToJson(d));
  for (const auto& b : out.content) {
    Json::Value c(Json::objectValue);
    c["type"] = "content";
    if (b.type == BlockType::kImage) {
      Json::Value img(Json::objectValue);
      img["type"] = "image";
      img["data"] = b.data;
      img["mimeType"] = b.mime_type;
      c["content"] = img;
    } else {
      // The terminal already shows a command's output; the diff already shows an edit.
      if (!out.terminal_id.empty() && !out.is_error) continue;
      c["content"] = TextBlock(b.text);
    }
    content.append(c);
  }
  return content;
}

Json::Value RawOutput(const agent::ToolOutput& out) {
  if (!out.details.isNull()) return out.details;
  Json::Value raw(Json::objectValue);
  std::string text;
  for (const auto& b : out.content)
    if (b.type == BlockType::kText) text += b.text;
  raw[out.is_error ? "error" : "output"] = text;
  return raw;
}
}  // namespace

namespace {
namespace ev = agent::event;
using Update = std::optional<Json::Value>;

Json::Value ToolCallUpdate(const ev::ToolCall& call) {
  Json::Value u(Json::objectValue);
  u["sessionUpdate"] = "tool_call_update";
  u["toolCallId"] = call.id;
  return u;
}

Json::Value Chunk(const char* kind, const std::string& text) {
  Json::Value u(Json::objectValue);
  u["sessionUpdate"] = kind;
  u["content"] = TextBlock(text);
  return u;
}

// One overload per event kind and no catch-all: a new kind breaks this door's build until it
// says what the kind becomes on the wire.
struct UpdateVisitor {
  Update operator()(const ev::MessageUpdate& e) const {
    switch (e.delta->kind) {
      case agent::DeltaKind::kText:
        return Chunk("agent_message_chunk", e.delta->text);
      case agent::DeltaKind::kThinking:
        return Chunk("agent_thought_chunk", e.delta->text);
      case agent::DeltaKind::kToolCallStart:
      case agent::DeltaKind::kToolCallArgs:
      case agent::DeltaKind::kToolCallEnd:  // shown when the tool starts
      case agent::DeltaKind::kTextStart:
      case agent::DeltaKind::kTextEnd:
      case agent::DeltaKind::kThinkingStart:
      case agent::DeltaKind::kThinkingEnd:
        return std::nullopt;
    }
    return std::nullopt;
  }
  Update operator()(const ev::ToolExecutionStart& e) const {
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "tool_call";
    u["toolCallId"] = e.call->id;
    u["title"] = e.call->title;
    u["kind"] = ToolKindName(e.call->kind);
    u["status"] = "pending";
    u["rawInput"] = e.call->args ? *e.call->args : Json::Value();
    if (!e.call->locations.empty()) u["locations"] = Locations(e.call->locations);
    return u;
  }
  Update operator()(const ev::ToolExecutionUpdate& e) const {
    Json::Value u = ToolCallUpdate(*e.call);
    using Phase = ev::ToolExecutionUpdate::Phase;
    switch (e.phase) {
      case Phase::kInProgress:
        u["status"] = "in_progress";
        return u;
      case Phase::kTerminal: {
        Json::Value t(Json::objectValue);
        t["type"] = "terminal";
        t["terminalId"] = e.terminal_id;
        u["content"] = Json::Value(Json::arrayValue);
        u["content"].append(t);
        return u;
      }
      case Phase::kPartialOutput:
        return std::nullopt;  // an editor terminal or the final result shows the output
    }
    return std::nullopt;
  }
  Update operator()(const ev::ToolExecutionEnd& e) const {
    Json::Value u = ToolCallUpdate(*e.call);
    u["status"] = e.is_error ? "failed" : "completed";
    if (e.output) {
      u["content"] = ToolOutputContent(*e.output);
      u["rawOutput"] = RawOutput(*e.output);
    }
    return u;
  }
  Update operator()(const ev::PlanUpdate& e) const {
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "plan";
    Json::Value entries(Json::arrayValue);
    for (const auto& p : e.plan) {
      Json::Value entry(Json::objectValue);
      entry["content"] = p.content;
      entry["priority"] = p.priority;
      entry["status"] = p.status;
      entries.append(entry);
    }
    u["entries"] = entries;
    return u;
  }
  Update operator()(const ev::ModeChanged& e) const {
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "current_mode_update";
    u["currentModeId"] = e.mode_id;
    return u;
  }
  Update operator()(const ev::UsageUpdate& e) const {
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "usage_update";
    u["used"] = static_cast<Json::Int64>(e.context_used);
    u["size"] = static_cast<Json::Int64>(e.context_size);
    Json::Value cost(Json::objectValue);
    cost["amount"] = e.session_cost;
    cost["currency"] = "USD";
    u["cost"] = cost;
    return u;
  }
  // No ACP counterpart: the prompt's response and the updates above carry what ACP shows.
  Update operator()(const ev::AgentStart&) const { return std::nullopt; }
  Update operator()(const ev::AgentEnd&) const { return std::nullopt; }
  Update operator()(const ev::TurnStart&) const { return std::nullopt; }
  Update operator()(const ev::TurnEnd&) const { return std::nullopt; }
  Update operator()(const ev::MessageStart&) const { return std::nullopt; }
  Update operator()(const ev::MessageEnd&) const { return std::nullopt; }
  Update operator()(const ev::AutoRetryStart&) const { return std::nullopt; }
  Update operator()(const ev::AutoRetryEnd&) const { return std::nullopt; }
  Update operator()(const ev::TtsrTriggered&) const { return std::nullopt; }
  Update operator()(const ev::AutoCompactionStart&) const { return std::nullopt; }
  Update operator()(const ev::AutoCompactionEnd&) const { return std::nullopt; }
};
}  // namespace

std::optional<Json::Value> UpdateFromEvent(const Event& e) {
  return std::visit(UpdateVisitor{}, e);
}

Json::Value PermissionRequestToJson(const std::string& session_id,
                                    const agent::PermissionRequest& request) {
  Json::Value p(Json::objectValue);
  p["sessionId"] = session_id;
  Json::Value tc(Json::objectValue);
  tc["toolCallId"] = request.tool_call_id;
  tc["title"] = request.title;
  tc["kind"] = ToolKindName(request.kind);
  tc["status"] = "pending";
  tc["rawInput"] = request.raw_input;
  if (!request.locations.empty()) tc["locations"] = Locations(request.locations);
  if (!request.diffs.empty()) {
    Json::Value content(Json::arrayValue);
    for (const auto& d : request.diffs) content.append(DiffToJson(d));
    tc["content"] = content;
  }
  p["toolCall"] = tc;
  Json::Value options(Json::arrayValue);
  const char* kinds[][2] = {{"allow_once", "Allow once"},
                            {"allow_always", "Always allow"},
                            {"reject_once", "Reject"},
                            {"reject_always", "Always reject"}};
  for (const auto& k : kinds) {
    Json::Value o(Json::objectValue);
    o["optionId"] = k[0];
    o["name"] = k[1];
    o["kind"] = k[0];
    options.append(o);
  }
  p["options"] = options;
  return p;
}

agent::PermissionDecision PermissionDecisionFromJson(const Json::Value& result) {
  // Anything but a well-formed selection of one of our options counts as a rejection.
  const Json::Value& outcome = MemberOrNull(result, "outcome");
  const std::string kind = StringOr(outcome, "outcome");
  if (kind == "cancelled") return agent::PermissionDecision::kCancelled;
  if (kind != "selected") return agent::PermissionDecision::kRejectOnce;
  const std::string id = StringOr(outcome, "optionId");
  if (id == "allow_once") return agent::PermissionDecision::kAllowOnce;
  if (id == "allow_always") return agent::PermissionDecision::kAllowAlways;
  if (id == "reject_always") return agent::PermissionDecision::kRejectAlways;
  return agent::PermissionDecision::kRejectOnce;
}

}  // namespace lousho::acp
