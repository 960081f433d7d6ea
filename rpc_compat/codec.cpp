// RPC wire codec: command fields, side-channel replies, messages and models (the event frames:
// codec_events.cpp).
#include "rpc_compat/codec.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include "agent/history.h"
#include "rpc_compat/commands.h"
#include "support/json_util.h"
#include "support/json_writer.h"

namespace lousho::rpc_compat {
namespace {

Json::Value Obj() { return Json::Value(Json::objectValue); }

Error Invalid(const std::string& message) { return MakeError(ErrorCode::kInvalidParams, message); }

// One content block the host sent (text or image).
Result<std::vector<agent::ContentBlock>> ImagesFromJson(const Json::Value* images) {
  std::vector<agent::ContentBlock> out;
  if (images == nullptr) return out;
  for (Json::ArrayIndex i = 0; i < images->size(); ++i) {
    const std::string path = "images[" + std::to_string(i) + "]";
    FieldReader r(ElementOrNull(*images, i), path);
    auto data = r.String("data", true);
    auto mime = r.String("mimeType", true);
    if (!r.ok()) return Invalid(r.error());
    out.push_back(agent::ContentBlock::Image(*mime, *data));
  }
  return out;
}

Result<std::vector<agent::ContentBlock>> ContentFromJson(const Json::Value* content,
                                                         const std::string& path) {
  std::vector<agent::ContentBlock> out;
  if (content == nullptr) return out;
  for (Json::ArrayIndex i = 0; i < content->size(); ++i) {
    auto b = agent::ContentBlockFromJson(ElementOrNull(*content, i),
                                         path + "[" + std::to_string(i) + "]");
    if (!b.ok()) return Invalid(b.error().message);
    if (b->type != agent::BlockType::kText && b->type != agent::BlockType::kImage)
      return Invalid(path + "[" + std::to_string(i) + "]: expected text or image content");
    out.push_back(std::move(*b));
  }
  return out;
}

const std::set<std::string> kTaskStatuses = {"pending", "in_progress", "completed", "abandoned",
                                             "blocked"};

}  // namespace

Json::Value NewFrame(const char* type) {
  Json::Value f(Json::objectValue);
  f["type"] = type;
  return f;
}

Json::Value ReadyFrame() {
  Json::Value f = NewFrame(frame::kReady);
  f["protocolVersion"] = kProtocolVersion;
  Json::Value versions(Json::arrayValue);
  versions.append(kProtocolVersion);
  f["supportedProtocolVersions"] = versions;
  f["maxFrameBytes"] = static_cast<Json::Int64>(kMaxFrameBytes);
  return f;
}

Json::Value ResponseFrame(const Json::Value& id, const std::string& command, bool success,
                          const Json::Value* data, const std::string& error) {
  Json::Value f = NewFrame(frame::kResponse);
  if (!id.isNull()) f["id"] = id;
  f["command"] = command;
  f["success"] = success;
  if (success && data != nullptr) f["data"] = *data;
  if (!success) f["error"] = error;
  return f;
}

Json::Value FitFrame(const Json::Value& frame) {
  const std::string type = StringOr(frame, "type");
  if (type == frame::kResponse)
    return ResponseFrame(MemberOrNull(frame, "id"), StringOr(frame, "command"), false, nullptr,
                         "RPC response exceeded the transport limit");
  if (type == frame::kAgentEnd) {
    Json::Value f = NewFrame(frame::kAgentEnd);
    f["messages"] = Json::Value(Json::arrayValue);
    f["messageCount"] = MemberOrNull(frame, "messages").size();
    return f;
  }
  Json::Value f = NewFrame(frame::kRpcFrameError);
  f["originalType"] = type;
  f["error"] = "RPC frame exceeded the transport limit";
  return f;
}

Result<NoParams> NoParams::FromJson(const Json::Value& /*cmd*/) { return NoParams{}; }

Result<PromptParams> PromptParams::FromJson(const Json::Value& cmd) {
  FieldReader r(cmd, "");
  auto message = r.String("message", true);
  const Json::Value* images = r.Array("images", false);
  auto behavior = r.String("streamingBehavior", false);
  if (!r.ok()) return Invalid(r.error());
  PromptParams p;
  if (behavior) {
    if (*behavior != "steer" && *behavior != "followUp")
      return Invalid("streamingBehavior: expected \"steer\" or \"followUp\"");
    p.streaming_behavior = *behavior;
  }
  p.content.push_back(agent::ContentBlock::Text(*message));
  auto imgs = ImagesFromJson(images);
  if (!imgs.ok()) return imgs.error();
  for (auto& b : *imgs) p.content.push_back(std::move(b));
  return p;
}

Result<NewSessionParams> NewSessionParams::FromJson(const Json::Value& cmd) {
  FieldReader r(cmd, "");
  auto parent = r.String("parentSession", false);
  if (!r.ok()) return Invalid(r.error());
  return NewSessionParams{parent.value_or("")};
}

Result<SetModelParams> SetModelParams::FromJson(const Json::Value& cmd) {
  FieldReader r(cmd, "");
  auto provider = r.String("provider", true);
  auto model = r.String("modelId", true);
  if (!r.ok()) return Invalid(r.error());
  return SetModelParams{*provider, *model};
}

Result<LevelParams> LevelParams::FromJson(const Json::Value& cmd) {
  FieldReader r(cmd, "");
  auto level = r.String("level", true);
  if (!r.ok()) return Invalid(r.error());
  return LevelParams{*level};
}

Result<ModeParams> ModeParams::FromJson(const Json::Value& cmd) {
  FieldReader r(cmd, "");
  auto mode = r.String("mode", true);
  if (!r.ok()) return Invalid(r.error());
  return ModeParams{*mode};
}

Result<EnabledParams> EnabledParams::FromJson(const Json::Value& cmd) {
  FieldReader r(cmd, "");
  auto enabled = r.Bool("enabled", true);
  if (!r.ok()) return Invalid(r.error());
  return EnabledParams{*enabled};
}

Result<BashParams> BashParams::FromJson(const Json::Value& cmd) {
  FieldReader r(cmd, "");
  auto command = r.String("command", true);
  if (!r.ok()) return Invalid(r.error());
  if (command->empty()) return Invalid("command: must not be empty");
  return BashParams{*command};
}

Result<EntryParams> EntryParams::FromJson(const Json::Value& cmd) {
  FieldReader r(cmd, "");
  auto id = r.String("entryId", true);
  auto restore = r.Bool("restoreFiles", false);
  if (!r.ok()) return Invalid(r.error());
  return EntryParams{*id, restore.value_or(false)};
}

Result<NameParams> NameParams::FromJson(const Json::Value& cmd) {
  FieldReader r(cmd, "");
  auto name = r.String("name", true);
  if (!r.ok()) return Invalid(r.error());
  return NameParams{*name};
}

Result<PathParams> PathParams::FromJson(const Json::Value& cmd) {
  FieldReader r(cmd, "");
  std::optional<std::string> path;
  for (const char* key : {"sessionPath", "outputPath", "customInstructions"})
    if (FindMember(cmd, key)) path = r.String(key, false);
  if (!r.ok()) return Invalid(r.error());
  return PathParams{path.value_or("")};
}

Result<TodosParams> TodosParams::FromJson(const Json::Value& cmd) {
  FieldReader r(cmd, "");
  const Json::Value* phases = r.Array("phases", true);
  if (!r.ok()) return Invalid(r.error());
  TodosParams p;
  for (Json::ArrayIndex i = 0; i < phases->size(); ++i) {
    const std::string path = "phases[" + std::to_string(i) + "]";
    FieldReader pr(ElementOrNull(*phases, i), path);
    auto id = pr.String("id", false);
    auto name = pr.String("name", true);
    const Json::Value* tasks = pr.Array("tasks", true);
    if (!pr.ok()) return Invalid(pr.error());
    agent::TodoPhase phase{id.value_or(""), *name, {}};
    for (Json::ArrayIndex k = 0; k < tasks->size(); ++k) {
      FieldReader tr(ElementOrNull(*tasks, k), pr.Path("tasks") + "[" + std::to_string(k) + "]");
      auto tid = tr.String("id", false);
      auto content = tr.String("content", true);
      auto status = tr.String("status", true);
      auto blocker = tr.String("blocker", false);
      if (!tr.ok()) return Invalid(tr.error());
      if (!kTaskStatuses.count(*status))
        return Invalid(tr.Path("status") +
                       ": expected pending, in_progress, completed, abandoned or blocked");
      phase.tasks.push_back(
          agent::TodoTask{tid.value_or(""), *content, *status, blocker.value_or("")});
    }
    p.phases.push_back(std::move(phase));
  }
  return p;
}

Json::Value TodoTaskToJson(const agent::TodoTask& task) {
  Json::Value j = Obj();
  if (!task.id.empty()) j["id"] = task.id;
  j["content"] = task.content;
  j["status"] = task.status;
  if (!task.blocker.empty()) j["blocker"] = task.blocker;
  return j;
}

Json::Value TodosToJson(const std::vector<agent::TodoPhase>& phases) {
  Json::Value arr(Json::arrayValue);
  for (const auto& phase : phases) {
    Json::Value j = Obj();
    if (!phase.id.empty()) j["id"] = phase.id;
    j["name"] = phase.name;
    Json::Value tasks(Json::arrayValue);
    for (const auto& task : phase.tasks) tasks.append(TodoTaskToJson(task));
    j["tasks"] = tasks;
    arr.append(j);
  }
  return arr;
}

Result<HostToolsParams> HostToolsParams::FromJson(const Json::Value& cmd) {
  FieldReader r(cmd, "");
  const Json::Value* tools = r.Array("tools", true);
  if (!r.ok()) return Invalid(r.error());
  HostToolsParams p;
  std::set<std::string> names;
  for (Json::ArrayIndex i = 0; i < tools->size(); ++i) {
    FieldReader tr(ElementOrNull(*tools, i), "tools[" + std::to_string(i) + "]");
    auto name = tr.String("name", true);
    auto description = tr.String("description", true);
    const Json::Value* parameters = tr.Object("parameters", true);
    if (!tr.ok()) return Invalid(tr.error());
    if (name->empty()) return Invalid(tr.Path("name") + ": must not be empty");
    if (description->empty()) return Invalid(tr.Path("description") + ": must not be empty");
    if (!names.insert(*name).second) return Invalid(tr.Path("name") + ": duplicate " + *name);
    p.tools.push_back(agent::HostToolSpec{*name, *description, *parameters});
  }
  return p;
}

Result<NegotiateParams> NegotiateParams::FromJson(const Json::Value& cmd) {
  FieldReader r(cmd, "");
  auto version = r.Int("protocolVersion", true);
  if (!r.ok()) return Invalid(r.error());
  return NegotiateParams{*version};
}

Result<UiResponse> UiResponse::FromJson(const Json::Value& frame) {
  FieldReader r(frame, "");
  auto id = r.String("id", true);
  auto value = r.String("value", false);
  auto confirmed = r.Bool("confirmed", false);
  auto cancelled = r.Bool("cancelled", false);
  if (!r.ok()) return Invalid(r.error());
  UiResponse u;
  u.id = *id;
  u.value = value;
  u.confirmed = confirmed;
  u.cancelled = cancelled.value_or(false);
  return u;
}

Result<HostToolReply> HostToolReply::FromJson(const Json::Value& frame, bool final) {
  FieldReader r(frame, "");
  auto id = r.String("id", true);
  const char* key = final ? "result" : "partialResult";
  const Json::Value* result = r.Object(key, true);
  auto is_error = r.Bool("isError", false);
  if (!r.ok()) return Invalid(r.error());
  FieldReader rr(*result, key);
  const Json::Value* content = rr.Array("content", false);
  if (!rr.ok()) return Invalid(rr.error());
  HostToolReply h;
  h.id = *id;
  auto blocks = ContentFromJson(content, rr.Path("content"));
  if (!blocks.ok()) return blocks.error();
  h.result.content = std::move(*blocks);
  h.result.is_error = is_error.value_or(false);
  if (const Json::Value* details = FindMember(*result, "details")) h.result.details = *details;
  return h;
}

Json::Value MessageToRpc(const agent::Message& m) {
  Json::Value j = agent::MessageToJson(m);
  // The session-file form keeps how a tool call was shown; the RPC message has no such field.
  const Json::Value* display = FindMember(j, "display");
  if (display && !display->isBool()) j.removeMember("display");
  if (m.role == agent::Role::kAssistant) {
    j["api"] = m.provider();
    // As WriteRpcMessage: no block for a call the provider ran.
    if (std::any_of(m.content.begin(), m.content.end(), [](const agent::ContentBlock& b) {
          return b.type == agent::BlockType::kServerTool;
        })) {
      Json::Value kept(Json::arrayValue);
      for (const auto& b : m.content)
        if (b.type != agent::BlockType::kServerTool) kept.append(agent::ContentBlockToJson(b));
      j["content"] = kept;
    }
  }
  return j;
}

Json::Value MessagesToRpc(const std::vector<agent::Message>& messages) {
  Json::Value arr(Json::arrayValue);
  for (const auto& m : messages) arr.append(MessageToRpc(m));
  return arr;
}

agent::Message ToolResultMessage(const agent::event::ToolCall& call,
                                 const agent::ToolOutput& output, bool is_error) {
  agent::Message m;
  m.role = agent::Role::kToolResult;
  m.tool_call_id = call.id;
  m.tool_name = call.name;
  m.is_error = is_error;
  m.content = output.content;
  m.tool.Edit().details = output.details;
  m.timestamp_ms = agent::NowMs();
  return m;
}

Json::Value ModelToJson(const ModelOption& m) {
  Json::Value j = Obj();
  j["id"] = m.id;
  j["name"] = m.name.empty() ? m.id : m.name;
  j["api"] = m.api;
  j["provider"] = m.provider;
  j["baseUrl"] = m.base_url;
  j["reasoning"] = m.reasoning;
  Json::Value input(Json::arrayValue);
  input.append("text");
  if (m.images) input.append("image");
  j["input"] = input;
  Json::Value cost = Obj();
  cost["input"] = m.input_price;
  cost["output"] = m.output_price;
  cost["cacheRead"] = m.cache_read_price;
  cost["cacheWrite"] = m.cache_write_price;
  j["cost"] = cost;
  j["contextWindow"] = static_cast<Json::Int64>(m.context_window);
  j["maxTokens"] = static_cast<Json::Int64>(m.max_tokens);
  return j;
}

}  // namespace lousho::rpc_compat
