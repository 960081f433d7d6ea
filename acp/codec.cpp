// ACP wire codec: the client's capabilities and the params of every method the agent serves.
#include "acp/codec.h"

#include <algorithm>

#include "support/json_util.h"

namespace lousho::acp {
using agent::ContentBlock;

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
  c.elicitation_form = MemberOrNull(MemberOrNull(caps, "elicitation"), "form").isObject();
  c.elicitation_url = MemberOrNull(MemberOrNull(caps, "elicitation"), "url").isObject();
  c.meta_terminal_output = BoolOr(MemberOrNull(caps, "_meta"), "terminal_output", false);
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

Json::Value PromptUsageToJson(const agent::Usage& usage) {
  Json::Value u(Json::objectValue);
  const long long input = usage.input + usage.cache_read + usage.cache_write;
  u["inputTokens"] = static_cast<Json::UInt64>(std::max(0LL, input));
  u["outputTokens"] = static_cast<Json::UInt64>(std::max(0LL, usage.output));
  u["totalTokens"] = static_cast<Json::UInt64>(std::max(0LL, input + usage.output));
  u["cachedReadTokens"] = static_cast<Json::UInt64>(std::max(0LL, usage.cache_read));
  u["cachedWriteTokens"] = static_cast<Json::UInt64>(std::max(0LL, usage.cache_write));
  return u;
}

Result<ForkSessionParams> ForkSessionParams::FromJson(const Json::Value& params) {
  FieldReader r(params, "params");
  auto sid = r.String("sessionId", true);
  const Json::Value* meta = r.Object("_meta", false);
  if (!r.ok()) return BadParams(r.error());
  ForkSessionParams p;
  p.session_id = *sid;
  if (meta) {
    FieldReader m(*meta, "params._meta");
    auto at = m.String("messageId", false);
    if (!m.ok()) return BadParams(m.error());
    p.message_id = at.value_or("");
  }
  auto session = NewSessionParams::FromJson(params);
  if (!session.ok()) return session.error();
  p.session = std::move(*session);
  return p;
}

Result<LogoutParams> LogoutParams::FromJson(const Json::Value& params) {
  if (!params.isNull() && !params.isObject()) return BadParams("params: expected an object");
  return LogoutParams{};
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

}  // namespace lousho::acp
