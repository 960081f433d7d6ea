// ACP wire codec.
#include "acp/codec.h"

#include <unordered_map>

#include "agent/history.h"
#include "support/json_util.h"
#include "support/json_writer.h"

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
  c.compaction = MemberOrNull(MemberOrNull(caps, "session"), "compaction").isObject();
  c.notices = MemberOrNull(MemberOrNull(caps, "session"), "notices").isObject();
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

namespace {
// `params.systemPrompt`: null / absent (none), a string (append), or {mode, content}.
Result<std::optional<agent::ClientPrompt>> SystemPromptFromJson(const Json::Value& v) {
  using agent::ClientPrompt;
  if (v.isNull()) return std::optional<ClientPrompt>();
  if (auto text = AsString(v)) return std::optional<ClientPrompt>(ClientPrompt{{}, *text});
  FieldReader r(v, "params.systemPrompt");
  if (!r.is_object()) return BadParams("params.systemPrompt: expected an object {mode, content}");
  auto mode = r.String("mode", true);
  const Json::Value* content = r.Array("content", true);
  if (!r.ok()) return BadParams(r.error());
  if (*mode != "append" && *mode != "override")
    return BadParams("params.systemPrompt.mode: unsupported mode '" + *mode +
                     "' (supported: append, override)");
  if (content->empty()) return BadParams("params.systemPrompt.content: must not be empty");
  ClientPrompt p{*mode == "override" ? ClientPrompt::Mode::kOverride : ClientPrompt::Mode::kAppend,
                 ""};
  for (Json::ArrayIndex i = 0; i < content->size(); ++i) {
    const Json::Value& block = ElementOrNull(*content, i);
    const std::string at = "params.systemPrompt.content[" + std::to_string(i) + "]";
    auto type = AsString(MemberOrNull(block, "type"));
    if (!type || *type != "text")
      return BadParams(at + ": unsupported block type '" + type.value_or("") + "' (only text)");
    auto text = AsString(MemberOrNull(block, "text"));
    if (!text) return BadParams(at + ".text: expected a string");
    p.text += (i ? "\n\n" : "") + *text;
  }
  return std::optional<ClientPrompt>(std::move(p));
}
}  // namespace

Json::Value SystemPromptCapability() {
  Json::Value cap(Json::objectValue);
  cap["mode"] = Json::Value(Json::objectValue);
  cap["mode"]["override"] = Json::Value(Json::objectValue);
  return cap;
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
  auto prompt = SystemPromptFromJson(MemberOrNull(params, "systemPrompt"));
  if (!prompt.ok()) return prompt.error();
  p.system_prompt = std::move(*prompt);
  return p;
}

Result<LoadSessionParams> LoadSessionParams::FromJson(const Json::Value& params) {
  FieldReader r(params, "params");
  auto sid = r.String("sessionId", true);
  if (!r.ok()) return BadParams(r.error());
  auto session = NewSessionParams::FromJson(params);
  if (!session.ok()) return session.error();
  return LoadSessionParams{*sid, std::move(*session)};
}

Result<ListSessionsParams> ListSessionsParams::FromJson(const Json::Value& params) {
  ListSessionsParams p;
  if (params.isNull()) return p;
  FieldReader r(params, "params");
  auto cwd = r.String("cwd", false);  // null counts as absent
  auto cursor = r.String("cursor", false);
  if (!r.ok()) return BadParams(r.error());
  p.cwd = cwd.value_or("");
  p.cursor = cursor.value_or("");
  return p;
}

namespace {
// `env` / `headers`: [{name, value}], both strings.
Result<std::vector<std::pair<std::string, std::string>>> NameValues(const Json::Value& list,
                                                                    const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  if (list.isNull()) return out;
  if (!list.isArray()) return BadParams(path + ": expected an array");
  for (Json::ArrayIndex i = 0; i < list.size(); ++i) {
    FieldReader r(ElementOrNull(list, i), path + "[" + std::to_string(i) + "]");
    auto name = r.String("name", true);
    auto value = r.String("value", true);
    if (!r.ok()) return BadParams(r.error());
    out.emplace_back(*name, *value);
  }
  return out;
}
}  // namespace

namespace {
// The fields of a stdio server (`at` names it in errors).
Status ReadStdioServer(const Json::Value& v, const std::string& at, config::McpServerSpec* s) {
  FieldReader r(v, at);
  auto command = r.String("command", true);
  if (!r.ok()) return BadParams(r.error());
  s->command = *command;
  if (s->command.empty()) return BadParams(at + ".command: must not be empty");
  const Json::Value& args = MemberOrNull(v, "args");
  if (!args.isNull() && !args.isArray()) return BadParams(at + ".args: expected an array");
  for (Json::ArrayIndex k = 0; args.isArray() && k < args.size(); ++k) {
    auto a = AsString(ElementOrNull(args, k));
    if (!a) return BadParams(at + ".args[" + std::to_string(k) + "]: expected string");
    s->args.push_back(*a);
  }
  auto env = NameValues(MemberOrNull(v, "env"), at + ".env");
  if (!env.ok()) return env.error();
  s->env = std::move(*env);
  return Status::Ok();
}

Status ReadHttpServer(const Json::Value& v, const std::string& at, config::McpServerSpec* s) {
  FieldReader r(v, at);
  auto url = r.String("url", true);
  if (!r.ok()) return BadParams(r.error());
  s->url = *url;
  auto headers = NameValues(MemberOrNull(v, "headers"), at + ".headers");
  if (!headers.ok()) return headers.error();
  s->headers = std::move(*headers);
  return Status::Ok();
}
}  // namespace

Result<std::vector<config::McpServerSpec>> McpServersFromJson(const Json::Value& list,
                                                              const std::string& path) {
  std::vector<config::McpServerSpec> out;
  if (list.isNull()) return out;
  if (!list.isArray()) return BadParams(path + ": expected an array");
  for (Json::ArrayIndex i = 0; i < list.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    const Json::Value& v = ElementOrNull(list, i);
    FieldReader r(v, at);
    config::McpServerSpec s;
    auto name = r.String("name", true);
    auto type = r.String("type", false);
    if (!r.ok()) return BadParams(r.error());
    s.name = *name;
    if (s.name.empty()) return BadParams(at + ".name: must not be empty");
    const std::string kind = type.value_or("stdio");
    Status st = Status::Ok();
    if (kind == "http" || kind == "sse") {
      s.transport = kind == "http" ? config::McpTransport::kHttp : config::McpTransport::kSse;
      st = ReadHttpServer(v, at, &s);
    } else if (kind == "stdio") {
      st = ReadStdioServer(v, at, &s);
    } else {
      return BadParams(at + ".type: expected http, sse or none (stdio), got \"" + kind + "\"");
    }
    if (!st.ok()) return st.error();
    out.push_back(std::move(s));
  }
  return out;
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

Result<SetConfigOptionParams> SetConfigOptionParams::FromJson(const Json::Value& params) {
  FieldReader r(params, "params");
  SetConfigOptionParams p;
  auto sid = r.String("sessionId", true);
  auto config = r.String("configId", true);
  const Json::Value* value = r.Any("value", true);
  if (!r.ok()) return BadParams(r.error());
  p.session_id = *sid;
  p.config_id = *config;
  p.value = *value;
  return p;
}

Result<SetModelParams> SetModelParams::FromJson(const Json::Value& params) {
  FieldReader r(params, "params");
  auto sid = r.String("sessionId", true);
  auto model = r.String("modelId", true);
  if (!r.ok()) return BadParams(r.error());
  return SetModelParams{*sid, *model};
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

namespace {
Json::Value SelectOption(const std::string& value, const std::string& name,
                         const std::string& description = {}) {
  Json::Value o(Json::objectValue);
  o["value"] = value;
  o["name"] = name;
  if (!description.empty()) o["description"] = description;
  return o;
}

Json::Value Select(const char* id, const char* name, const char* category,
                   const std::string& current, Json::Value options) {
  Json::Value s(Json::objectValue);
  s["id"] = id;
  s["name"] = name;
  s["category"] = category;
  s["type"] = "select";
  s["currentValue"] = current;
  s["options"] = std::move(options);
  return s;
}

// The offered models, with the current one added when it is not among them.
std::vector<agent::ModelOption> WithCurrent(const std::string& current,
                                            std::vector<agent::ModelOption> models) {
  for (const auto& m : models)
    if (m.id() == current) return models;
  const size_t slash = current.find('/');
  agent::ModelOption m;
  m.provider = current.substr(0, slash);
  m.model_id = slash == std::string::npos ? "" : current.substr(slash + 1);
  m.name = current;
  models.insert(models.begin(), m);
  return models;
}
}  // namespace

Json::Value ConfigOptionsToJson(const SessionConfigValues& current,
                                const std::vector<agent::ModelOption>& models,
                                const ThinkingLevelNames& levels) {
  Json::Value out(Json::arrayValue);
  Json::Value modes(Json::arrayValue);
  for (const auto& m : kModes) modes.append(SelectOption(ModeName(m.mode), m.name, m.description));
  out.append(Select(kConfigMode, "Mode", "mode", ModeName(current.mode), modes));
  Json::Value list(Json::arrayValue);
  for (const auto& m : WithCurrent(current.model, models)) {
    const std::string name = m.name.empty() ? m.id() : m.name;
    list.append(SelectOption(m.id(), name, name == m.id() ? "" : m.id()));
  }
  out.append(Select(kConfigModel, "Model", "model", current.model, list));
  Json::Value thinking(Json::arrayValue);
  for (const auto& [id, name] : levels) thinking.append(SelectOption(id, name));
  out.append(Select(kConfigThoughtLevel, "Thinking", "thought_level", current.thinking, thinking));
  return out;
}

Json::Value ModelsToJson(const std::string& current,
                         const std::vector<agent::ModelOption>& models) {
  Json::Value out(Json::objectValue);
  out["currentModelId"] = current;
  Json::Value list(Json::arrayValue);
  for (const auto& m : WithCurrent(current, models)) {
    Json::Value item(Json::objectValue);
    item["modelId"] = m.id();
    item["name"] = m.name.empty() ? m.id() : m.name;
    list.append(item);
  }
  out["availableModels"] = list;
  return out;
}

Json::Value ConfigOptionUpdate(const SessionConfigValues& current,
                               const std::vector<agent::ModelOption>& models,
                               const ThinkingLevelNames& levels) {
  Json::Value u(Json::objectValue);
  u["sessionUpdate"] = "config_option_update";
  u["configOptions"] = ConfigOptionsToJson(current, models, levels);
  return u;
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

// A resource a tool returned: embedded (its text or blob) or as a link.
Json::Value ResourceBlock(const agent::ResourceRef& r) {
  Json::Value block(Json::objectValue);
  if (r.embedded && (r.text || r.blob)) {
    block["type"] = "resource";
    Json::Value res(Json::objectValue);
    res["uri"] = r.uri;
    if (!r.mime_type.empty()) res["mimeType"] = r.mime_type;
    if (r.text) {
      res["text"] = *r.text;
    } else {
      res["blob"] = *r.blob;
    }
    block["resource"] = res;
  } else {
    block["type"] = "resource_link";
    block["uri"] = r.uri;
    block["name"] = r.name.empty() ? r.uri : r.name;
    if (!r.mime_type.empty()) block["mimeType"] = r.mime_type;
  }
  return block;
}

// A tool call content item {type: "content", content: block}.
Json::Value ContentItem(Json::Value block) {
  Json::Value c(Json::objectValue);
  c["type"] = "content";
  c["content"] = std::move(block);
  return c;
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
    if (b.type == BlockType::kImage) {
      Json::Value img(Json::objectValue);
      img["type"] = "image";
      img["data"] = b.data;
      img["mimeType"] = b.mime_type;
      content.append(ContentItem(std::move(img)));
    } else if (out.terminal_id.empty() || out.is_error) {
      // The terminal already shows a command's output; the diff already shows an edit.
      content.append(ContentItem(TextBlock(b.text)));
    }
  }
  for (const auto& r : out.resources) content.append(ContentItem(ResourceBlock(r)));
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
  // Text and thinking deltas are written by ChunkUpdateParamsJson alone (the per-delta path);
  // the other deltas have no update (a tool call is shown when the tool starts).
  Update operator()(const ev::MessageUpdate&) const { return std::nullopt; }
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
      case Phase::kProgress: {
        Json::Value c(Json::objectValue);
        c["type"] = "content";
        c["content"] = TextBlock(e.partial_output);
        u["status"] = "in_progress";
        u["content"] = Json::Value(Json::arrayValue);
        u["content"].append(c);
        return u;
      }
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
  // A stream rule stopped the answer the editor was showing (or flagged a tool call's
  // arguments): ACP has no message retraction, so the interruption is shown as what it is, a
  // completed "think" step titled with the rule, holding the rule's text; the retry streams
  // after it. See docs/architecture.md (Stream rules).
  Update operator()(const ev::TtsrTriggered& e) const {
    std::string names;
    for (const auto& n : e.rules) names += (names.empty() ? "" : ", ") + n;
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "tool_call";
    u["toolCallId"] = e.id;
    u["title"] =
        std::string(e.rules.size() == 1 ? "Rule " : "Rules ") + names +
        (e.interrupted ? ": answer interrupted, retrying" : ": reminder added to the tool result");
    u["kind"] = "think";
    u["status"] = "completed";
    Json::Value raw(Json::objectValue);
    Json::Value list(Json::arrayValue);
    for (const auto& n : e.rules) list.append(n);
    raw["rules"] = list;
    raw["source"] = e.source;
    raw["interrupted"] = e.interrupted;
    if (!e.tool_call_id.empty()) raw["toolCallId"] = e.tool_call_id;
    u["rawInput"] = raw;
    Json::Value content(Json::arrayValue);
    for (const auto& d : e.details) {
      Json::Value c(Json::objectValue);
      c["type"] = "content";
      c["content"] = TextBlock(d.content);
      content.append(c);
    }
    u["content"] = content;
    return u;
  }
  // As the notes about MCP servers that did not start: a paragraph of the agent's text, set apart
  // from the answer around it, which every client shows; a client that declared
  // `session.notices` gets a notice as well (NoticeUpdateFromEvent). The session sends it
  // between messages, never inside a streamed one.
  Update operator()(const ev::Warning& e) const {
    return Chunk("agent_message_chunk",
                 "\n\n" + std::string(e.info ? "" : "**Warning:** ") + e.text + "\n\n");
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
  // A compaction is shown as a "think" tool call: started, then completed with the summary, or
  // failed with why (cancelled: "Cancelled"). Nothing of it is hidden from the user.
  Update operator()(const ev::AutoCompactionStart& e) const {
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "tool_call";
    u["toolCallId"] = e.id;
    u["title"] = CompactionTitle(e.reason);
    u["kind"] = "think";
    u["status"] = "in_progress";
    Json::Value in(Json::objectValue);
    in["reason"] = e.reason;
    in["tokensBefore"] = static_cast<Json::Int64>(e.tokens_before);
    u["rawInput"] = in;
    return u;
  }
  Update operator()(const ev::AutoCompactionEnd& e) const {
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "tool_call_update";
    u["toolCallId"] = e.id;
    const bool ok = !e.aborted && e.error.empty();
    u["status"] = ok ? "completed" : "failed";
    std::string text;
    if (ok) {
      text = "Compacted: about " + std::to_string(e.tokens_before) + " tokens of context became " +
             std::to_string(e.tokens_after) + ".\n\n" + e.summary;
    } else {
      text = e.aborted ? "Compaction cancelled; the history is unchanged."
                       : "Compaction failed; the history is unchanged: " + e.error;
    }
    Json::Value c(Json::objectValue);
    c["type"] = "content";
    c["content"] = TextBlock(text);
    u["content"] = Json::Value(Json::arrayValue);
    u["content"].append(c);
    Json::Value out(Json::objectValue);
    out["tokensBefore"] = static_cast<Json::Int64>(e.tokens_before);
    if (ok) out["tokensAfter"] = static_cast<Json::Int64>(e.tokens_after);
    out["aborted"] = e.aborted;
    out["willRetry"] = e.will_retry;
    if (!e.error.empty()) out["error"] = e.error;
    u["rawOutput"] = out;
    return u;
  }
  static std::string CompactionTitle(const std::string& reason) {
    if (reason == "overflow") return "Compacting the conversation (it no longer fit the model)";
    if (reason == "threshold") return "Compacting the conversation (the context is nearly full)";
    return "Compacting the conversation";
  }
  // The door sends the config options itself: they need the session's other values.
  Update operator()(const ev::ModelChanged&) const { return std::nullopt; }
  // The reminder itself is a hidden message; the plan shows the todos.
  Update operator()(const ev::TodoReminder&) const { return std::nullopt; }
  Update operator()(const ev::TodoAutoClear&) const { return std::nullopt; }
  Update operator()(const ev::SessionInfoChanged& e) const {
    Json::Value u(Json::objectValue);
    u["sessionUpdate"] = "session_info_update";
    u["title"] = e.name;
    return u;
  }
};
}  // namespace

std::optional<Json::Value> UpdateFromEvent(const Event& e) {
  return std::visit(UpdateVisitor{}, e);
}

std::optional<Json::Value> NoticeUpdateFromEvent(const Event& e) {
  const auto* w = std::get_if<agent::event::Warning>(&e);
  if (w == nullptr) return std::nullopt;
  Json::Value u(Json::objectValue);
  u["sessionUpdate"] = "notice";
  u["severity"] = w->info ? "info" : "warning";
  u["title"] = w->title.empty() ? w->text : w->title;
  u["description"] = w->text;
  return u;
}

std::optional<Json::Value> CompactionUpdateFromEvent(const Event& e) {
  Json::Value u(Json::objectValue);
  u["sessionUpdate"] = "compaction_update";
  if (const auto* start = std::get_if<agent::event::AutoCompactionStart>(&e)) {
    u["compactionId"] = start->id;
    u["status"] = "in_progress";
    return u;
  }
  const auto* end = std::get_if<agent::event::AutoCompactionEnd>(&e);
  if (end == nullptr) return std::nullopt;
  u["compactionId"] = end->id;
  if (end->aborted) {
    u["status"] = "cancelled";
  } else if (!end->error.empty()) {
    u["status"] = "failed";
    u["error"] = "The history is unchanged: " + end->error;
  } else {
    u["status"] = "completed";
    u["summary"] = Json::Value(Json::arrayValue);
    u["summary"].append(TextBlock(end->summary));
  }
  return u;
}

namespace {
Json::Value BlockChunk(const char* kind, const ContentBlock& b) {
  Json::Value u(Json::objectValue);
  u["sessionUpdate"] = kind;
  if (b.type == BlockType::kImage) {
    Json::Value img(Json::objectValue);
    img["type"] = "image";
    img["data"] = b.data;
    img["mimeType"] = b.mime_type;
    u["content"] = img;
  } else {
    u["content"] = TextBlock(b.text);
  }
  return u;
}

// A stored tool result as the output the editor was shown when it ran. A terminal of the run is
// gone, so its output is shown as text instead.
agent::ToolOutput StoredOutput(const agent::Message& result) {
  agent::ToolOutput out;
  out.content = result.content;
  out.is_error = result.is_error;
  out.diffs = result.tool.diffs;
  out.details = result.tool.details;
  return out;
}

void ReplayAssistant(const agent::Message& m,
                     const std::unordered_map<std::string, const agent::Message*>& results,
                     std::vector<Json::Value>* out) {
  for (const auto& b : m.content) {
    switch (b.type) {
      case BlockType::kText:
        if (!b.text.empty()) out->push_back(BlockChunk("agent_message_chunk", b));
        break;
      case BlockType::kImage:
        out->push_back(BlockChunk("agent_message_chunk", b));
        break;
      case BlockType::kThinking:
        if (!b.redacted && !b.text.empty()) out->push_back(BlockChunk("agent_thought_chunk", b));
        break;
      case BlockType::kToolCall: {
        auto it = results.find(b.id);
        const agent::Message* result = it == results.end() ? nullptr : it->second;
        ev::ToolCall call;
        call.id = b.id;
        call.name = b.name;
        call.args = &b.arguments;
        call.title = result && !result->tool.title.empty() ? result->tool.title : b.name;
        if (result) {
          call.kind = result->tool.kind;
          call.locations = result->tool.locations;
        }
        out->push_back(*UpdateFromEvent(ev::ToolExecutionStart{0, &call}));
        if (result) {
          const agent::ToolOutput output = StoredOutput(*result);
          out->push_back(
              *UpdateFromEvent(ev::ToolExecutionEnd{0, &call, &output, output.is_error}));
        }
        break;
      }
    }
  }
}
}  // namespace

namespace {
// The updates of one entry of a replayed branch, appended to *out.
void ReplayEntry(const agent::Entry& e,
                 const std::unordered_map<std::string, const agent::Message*>& results,
                 std::vector<Json::Value>* out_vector) {
  std::vector<Json::Value>& out = *out_vector;
  switch (e.kind) {
    case agent::EntryKind::kMessage: {
      const agent::Message& m = e.message;
      if (!m.display) break;
      switch (m.role) {
        case agent::Role::kUser:
          for (const auto& b : m.content)
            if (b.type == BlockType::kText || b.type == BlockType::kImage)
              out.push_back(BlockChunk("user_message_chunk", b));
          break;
        case agent::Role::kAssistant:
          ReplayAssistant(m, results, &out);
          break;
        case agent::Role::kToolResult:
          break;  // shown with its call
      }
      break;
    }
    case agent::EntryKind::kModeChange:
      out.push_back(*UpdateFromEvent(ev::ModeChanged{e.mode}));
      break;
    case agent::EntryKind::kCustom:
      if (e.custom_type == agent::kPlanEntryType) {
        ev::PlanUpdate plan;
        for (const auto& p : e.data) {
          agent::PlanEntry pe;
          pe.content = StringOr(p, "content");
          pe.priority = StringOr(p, "priority", "medium");
          pe.status = StringOr(p, "status", "pending");
          plan.plan.push_back(std::move(pe));
        }
        out.push_back(*UpdateFromEvent(plan));
      }
      break;
    case agent::EntryKind::kSessionInfo: {
      Json::Value u(Json::objectValue);
      u["sessionUpdate"] = "session_info_update";
      u["title"] = e.name;
      out.push_back(u);
      break;
    }
    case agent::EntryKind::kModelChange:
    case agent::EntryKind::kThinkingChange:
    case agent::EntryKind::kLabel:
    case agent::EntryKind::kCompaction:
    case agent::EntryKind::kBranchSummary:
    case agent::EntryKind::kTtsrInjection:
      break;
  }
}
}  // namespace

void ForEachReplayUpdate(const std::vector<const agent::Entry*>& branch,
                         const std::function<void(const Json::Value&)>& visit) {
  std::unordered_map<std::string, const agent::Message*> results;
  for (const agent::Entry* e : branch)
    if (e->kind == agent::EntryKind::kMessage && e->message.role == agent::Role::kToolResult)
      results[e->message.tool_call_id] = &e->message;
  // One entry's updates at a time: a long session's replay never holds them all.
  std::vector<Json::Value> updates;
  for (const agent::Entry* e : branch) {
    updates.clear();
    ReplayEntry(*e, results, &updates);
    for (const Json::Value& u : updates) visit(u);
  }
}

std::vector<Json::Value> ReplayUpdates(const std::vector<const agent::Entry*>& branch) {
  std::vector<Json::Value> out;
  ForEachReplayUpdate(branch, [&](const Json::Value& u) { out.push_back(u); });
  return out;
}

namespace {
const char* ChunkKind(agent::DeltaKind kind) {
  switch (kind) {
    case agent::DeltaKind::kText:
      return "agent_message_chunk";
    case agent::DeltaKind::kThinking:
      return "agent_thought_chunk";
    case agent::DeltaKind::kToolCallStart:
    case agent::DeltaKind::kToolCallArgs:
    case agent::DeltaKind::kToolCallEnd:
    case agent::DeltaKind::kTextStart:
    case agent::DeltaKind::kTextEnd:
    case agent::DeltaKind::kThinkingStart:
    case agent::DeltaKind::kThinkingEnd:
      break;
  }
  return nullptr;
}
}  // namespace

std::optional<std::string> ChunkUpdateParamsJson(const std::string& session_id, const Event& e) {
  const auto* update = std::get_if<ev::MessageUpdate>(&e);
  if (update == nullptr || update->delta == nullptr) return std::nullopt;
  const char* kind = ChunkKind(update->delta->kind);
  if (kind == nullptr) return std::nullopt;
  const std::string& text = update->delta->text;
  std::string out;
  out.reserve(96 + session_id.size() + text.size());
  // Members in jsoncpp's sorted order, as every other update is written.
  JsonWriter w(&out);
  w.ObjectBegin();
  w.Attribute("sessionId", session_id);
  w.AttributeBegin("update");
  w.ObjectBegin();
  w.AttributeBegin("content");
  w.ObjectBegin();
  w.Attribute("text", text);
  w.Attribute("type", "text");
  w.ObjectEnd();
  w.AttributeEnd();
  w.Attribute("sessionUpdate", kind);
  w.ObjectEnd();
  w.AttributeEnd();
  w.ObjectEnd();
  return out;
}

std::string UpdateParamsJson(const std::string& session_id, const Json::Value& update) {
  std::string out;
  JsonWriter w(&out);
  w.ObjectBegin();
  w.Attribute("sessionId", session_id);
  w.Attribute("update", update);
  w.ObjectEnd();
  return out;
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
