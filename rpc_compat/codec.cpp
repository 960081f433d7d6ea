// RPC wire codec: command fields, side-channel replies, messages, models and the event frames.
#include "rpc_compat/codec.h"

#include <bit>
#include <cstdint>
#include <set>

#include "agent/history.h"
#include "rpc_compat/commands.h"
#include "support/json_util.h"

namespace lousho::rpc_compat {
namespace {

Json::Value Obj() { return Json::Value(Json::objectValue); }

Json::Value Frame(const char* type) {
  Json::Value f = Obj();
  f["type"] = type;
  return f;
}

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

Json::Value ReadyFrame() {
  Json::Value f = Frame(frame::kReady);
  f["protocolVersion"] = kProtocolVersion;
  Json::Value versions(Json::arrayValue);
  versions.append(kProtocolVersion);
  f["supportedProtocolVersions"] = versions;
  f["maxFrameBytes"] = static_cast<Json::Int64>(kMaxFrameBytes);
  return f;
}

Json::Value ResponseFrame(const Json::Value& id, const std::string& command, bool success,
                          const Json::Value* data, const std::string& error) {
  Json::Value f = Frame(frame::kResponse);
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
    Json::Value f = Frame(frame::kAgentEnd);
    f["messages"] = Json::Value(Json::arrayValue);
    f["messageCount"] = MemberOrNull(frame, "messages").size();
    return f;
  }
  Json::Value f = Frame(frame::kRpcFrameError);
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
  if (!r.ok()) return Invalid(r.error());
  return EntryParams{*id};
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
  if (m.role == agent::Role::kAssistant) j["api"] = m.provider;
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
  m.tool.details = output.details;
  m.timestamp_ms = agent::NowMs();
  return m;
}

namespace {

Json::Value ToolResultJson(const agent::ToolOutput& out) {
  Json::Value r = Obj();
  Json::Value content(Json::arrayValue);
  for (const auto& b : out.content) content.append(agent::ContentBlockToJson(b));
  r["content"] = content;
  if (!out.details.isNull()) r["details"] = out.details;
  return r;
}

Json::Value ToolCallFrame(const char* type, const agent::event::ToolCall& call) {
  Json::Value f = Frame(type);
  f["toolCallId"] = call.id;
  f["toolName"] = call.name;
  f["args"] = call.args ? *call.args : Json::Value(Json::objectValue);
  return f;
}

// The assistantMessageEvent of one delta; `partial_json` is the message so far.
Json::Value DeltaEvent(const agent::StreamDelta& d, const Json::Value& partial_json) {
  using agent::DeltaKind;
  Json::Value e = Obj();
  const Json::Value& block =
      ElementOrNull(MemberOrNull(partial_json, "content"), static_cast<Json::ArrayIndex>(d.index));
  switch (d.kind) {
    case DeltaKind::kTextStart:
      e["type"] = delta::kTextStart;
      break;
    case DeltaKind::kText:
      e["type"] = delta::kTextDelta;
      e["delta"] = d.text;
      break;
    case DeltaKind::kTextEnd:
      e["type"] = delta::kTextEnd;
      e["content"] = StringOr(block, "text");
      break;
    case DeltaKind::kThinkingStart:
      e["type"] = delta::kThinkingStart;
      break;
    case DeltaKind::kThinking:
      e["type"] = delta::kThinkingDelta;
      e["delta"] = d.text;
      break;
    case DeltaKind::kThinkingEnd:
      e["type"] = delta::kThinkingEnd;
      e["content"] = StringOr(block, "thinking");
      break;
    case DeltaKind::kToolCallStart:
      e["type"] = delta::kToolCallStart;
      break;
    case DeltaKind::kToolCallArgs:
      e["type"] = delta::kToolCallDelta;
      e["delta"] = d.text;
      break;
    case DeltaKind::kToolCallEnd:
      e["type"] = delta::kToolCallEnd;
      e["toolCall"] = block;
      break;
  }
  e["contentIndex"] = d.index;
  // The frame's `message` is already the partial message; the event repeats it only for tool
  // calls, where hosts read the call from it (pi-acp), so a long text is not sent twice per delta.
  const bool tool_call = d.kind == DeltaKind::kToolCallStart ||
                         d.kind == DeltaKind::kToolCallArgs || d.kind == DeltaKind::kToolCallEnd;
  if (tool_call) e["partial"] = partial_json;
  return e;
}

struct FrameVisitor {
  std::vector<Json::Value>* out;

  void operator()(const agent::event::AgentStart&) const {
    out->push_back(Frame(frame::kAgentStart));
  }
  void operator()(const agent::event::AgentEnd& e) const {
    Json::Value f = Frame(frame::kAgentEnd);
    f["messages"] = e.messages ? MessagesToRpc(*e.messages) : Json::Value(Json::arrayValue);
    out->push_back(f);
  }
  void operator()(const agent::event::TurnStart&) const {
    out->push_back(Frame(frame::kTurnStart));
  }
  void operator()(const agent::event::TurnEnd& e) const {
    Json::Value f = Frame(frame::kTurnEnd);
    if (e.message) f["message"] = MessageToRpc(*e.message);
    f["toolResults"] =
        e.tool_results ? MessagesToRpc(*e.tool_results) : Json::Value(Json::arrayValue);
    out->push_back(f);
  }
  void operator()(const agent::event::MessageStart& e) const {
    Json::Value f = Frame(frame::kMessageStart);
    if (e.message) f["message"] = MessageToRpc(*e.message);
    out->push_back(f);
  }
  void operator()(const agent::event::MessageUpdate& e) const {
    if (!e.delta || !e.partial) return;
    Json::Value f = Frame(frame::kMessageUpdate);
    Json::Value partial = MessageToRpc(*e.partial);
    f["assistantMessageEvent"] = DeltaEvent(*e.delta, partial);
    f["message"] = std::move(partial);
    out->push_back(f);
  }
  void operator()(const agent::event::MessageEnd& e) const {
    Json::Value f = Frame(frame::kMessageEnd);
    if (e.message) f["message"] = MessageToRpc(*e.message);
    out->push_back(f);
  }
  void operator()(const agent::event::ToolExecutionStart& e) const {
    if (e.call) out->push_back(ToolCallFrame(frame::kToolExecutionStart, *e.call));
  }
  void operator()(const agent::event::ToolExecutionUpdate& e) const {
    using Phase = agent::event::ToolExecutionUpdate::Phase;
    switch (e.phase) {
      case Phase::kInProgress:
      case Phase::kTerminal:
      case Phase::kProgress:  // an MCP progress note is not output; partialResult would replace it
        return;               // the RPC dialect shows only output
      case Phase::kPartialOutput:
        break;
    }
    if (!e.call) return;
    Json::Value f = ToolCallFrame(frame::kToolExecutionUpdate, *e.call);
    Json::Value text = Obj();
    text["type"] = "text";
    text["text"] = e.partial_output;
    Json::Value result = Obj();
    result["content"] = Json::Value(Json::arrayValue);
    result["content"].append(text);
    f["partialResult"] = result;
    out->push_back(f);
  }
  void operator()(const agent::event::ToolExecutionEnd& e) const {
    if (!e.call || !e.output) return;
    Json::Value f = Frame(frame::kToolExecutionEnd);
    f["toolCallId"] = e.call->id;
    f["toolName"] = e.call->name;
    f["result"] = ToolResultJson(*e.output);
    f["isError"] = e.is_error;
    out->push_back(f);
    // The tool-result message joins the conversation right after.
    Json::Value message = MessageToRpc(ToolResultMessage(*e.call, *e.output, e.is_error));
    Json::Value start = Frame(frame::kMessageStart);
    start["message"] = message;
    out->push_back(start);
    Json::Value end = Frame(frame::kMessageEnd);
    end["message"] = message;
    out->push_back(end);
  }
  void operator()(const agent::event::AutoRetryStart& e) const {
    Json::Value f = Frame(frame::kAutoRetryStart);
    f["attempt"] = e.retry.attempt;
    f["maxAttempts"] = e.retry.max_attempts;
    f["delayMs"] = static_cast<Json::Int64>(e.retry.delay_ms);
    f["errorMessage"] = e.retry.error_message;
    out->push_back(f);
  }
  void operator()(const agent::event::AutoRetryEnd& e) const {
    Json::Value f = Frame(frame::kAutoRetryEnd);
    f["success"] = e.success;
    f["attempt"] = e.attempt;
    if (!e.success && !e.error.empty()) f["finalError"] = e.error;
    out->push_back(f);
  }
  void operator()(const agent::event::PlanUpdate&) const {}   // the todo tool's plan: no frame
  void operator()(const agent::event::ModeChanged&) const {}  // no permission modes here
  // The name is set by set_session_name and read with get_state; the protocol has no event for it.
  void operator()(const agent::event::SessionInfoChanged&) const {}
  void operator()(const agent::event::UsageUpdate&) const {}  // get_session_stats has it
  void operator()(const agent::event::TtsrTriggered& e) const {
    Json::Value f = Frame(frame::kTtsrTriggered);
    Json::Value rules(Json::arrayValue);
    for (const auto& name : e.rules) {
      Json::Value rule = Obj();
      rule["name"] = name;
      rules.append(rule);
    }
    f["rules"] = rules;
    out->push_back(f);
  }
  void operator()(const agent::event::TodoReminder& e) const {
    Json::Value f = Frame(frame::kTodoReminder);
    Json::Value todos(Json::arrayValue);
    for (const auto& task : e.todos) todos.append(TodoTaskToJson(task));
    f["todos"] = todos;
    f["attempt"] = e.attempt;
    f["maxAttempts"] = e.max_attempts;
    out->push_back(f);
  }
  // An extension_ui_request notify, which needs a request id: the server writes it (SendEvent).
  void operator()(const agent::event::Warning&) const {}
  void operator()(const agent::event::TodoAutoClear&) const {
    out->push_back(Frame(frame::kTodoAutoClear));
  }
  void operator()(const agent::event::AutoCompactionStart& e) const {
    Json::Value f = Frame(frame::kAutoCompactionStart);
    f["reason"] = e.reason;
    f["action"] = "context-full";
    out->push_back(f);
  }
  void operator()(const agent::event::AutoCompactionEnd& e) const {
    Json::Value f = Frame(frame::kAutoCompactionEnd);
    f["action"] = "context-full";
    f["aborted"] = e.aborted;
    f["willRetry"] = e.will_retry;
    if (!e.error.empty()) f["errorMessage"] = e.error;
    if (!e.aborted && e.error.empty()) {
      Json::Value result = Obj();
      result["summary"] = e.summary;
      result["firstKeptEntryId"] = e.first_kept_id;
      result["tokensBefore"] = static_cast<Json::Int64>(e.tokens_before);
      result["tokensAfter"] = static_cast<Json::Int64>(e.tokens_after);
      f["result"] = result;
    }
    out->push_back(f);
  }
  // The legacy protocol has no frame for it: get_state reports the model.
  void operator()(const agent::event::ModelChanged&) const {}
};

}  // namespace

std::vector<Json::Value> FramesFromEvent(const agent::Event& event) {
  std::vector<Json::Value> out;
  std::visit(FrameVisitor{&out}, event);
  return out;
}

namespace {

// A double as WriteJson writes it; the usage's cost is 0 but for priced models, and then changes
// only with the usage events, so the last one written is kept per thread.
void AppendJsonDouble(double v, std::string* out) {
  // Compared bit for bit: 0.0 and -0.0 are written differently.
  thread_local uint64_t last = 0;
  thread_local std::string last_json;
  if (last_json.empty() || std::bit_cast<uint64_t>(v) != last) {
    last = std::bit_cast<uint64_t>(v);
    last_json = WriteJson(Json::Value(v));
  }
  out->append(last_json);
}

void AppendInt(long long v, std::string* out) { out->append(std::to_string(v)); }

// UsageToJson's object, members in jsoncpp's (sorted) order.
void AppendUsageJson(const agent::Usage& u, std::string* out) {
  out->append("{\"cacheRead\":");
  AppendInt(u.cache_read, out);
  out->append(",\"cacheWrite\":");
  AppendInt(u.cache_write, out);
  out->append(",\"cost\":{\"total\":");
  AppendJsonDouble(u.cost, out);
  out->append("},\"input\":");
  AppendInt(u.input, out);
  out->append(",\"output\":");
  AppendInt(u.output, out);
  out->append(",\"totalTokens\":");
  AppendInt(u.total(), out);
  out->push_back('}');
}

// ContentBlockToJson's object: text and thinking written here (the long, growing ones), the
// others (a tool call's arguments, an image) through jsoncpp.
void AppendBlockJson(const agent::ContentBlock& b, std::string* out) {
  switch (b.type) {
    case agent::BlockType::kText:
      out->append("{\"text\":");
      AppendJsonString(b.text, out);
      out->append(",\"type\":\"text\"}");
      return;
    case agent::BlockType::kThinking:
      out->push_back('{');
      if (b.redacted) out->append("\"redacted\":true,");
      out->append("\"thinking\":");
      AppendJsonString(b.text, out);
      if (!b.signature.empty()) {
        out->append(",\"thinkingSignature\":");
        AppendJsonString(b.signature, out);
      }
      out->append(",\"type\":\"thinking\"}");
      return;
    case agent::BlockType::kToolCall:
    case agent::BlockType::kImage:
      out->append(WriteJson(agent::ContentBlockToJson(b)));
      return;
  }
}

size_t TextSize(const agent::Message& m) {
  size_t n = 0;
  for (const auto& b : m.content) n += b.text.size() + b.signature.size();
  return n;
}

}  // namespace

std::optional<std::string> MessageUpdateLine(const agent::Event& event) {
  const auto* e = std::get_if<agent::event::MessageUpdate>(&event);
  if (e == nullptr || e->delta == nullptr || e->partial == nullptr) return std::nullopt;
  const char* type = nullptr;
  switch (e->delta->kind) {
    case agent::DeltaKind::kText:
      type = delta::kTextDelta;
      break;
    case agent::DeltaKind::kThinking:
      type = delta::kThinkingDelta;
      break;
    case agent::DeltaKind::kTextStart:
    case agent::DeltaKind::kTextEnd:
    case agent::DeltaKind::kThinkingStart:
    case agent::DeltaKind::kThinkingEnd:
    case agent::DeltaKind::kToolCallStart:
    case agent::DeltaKind::kToolCallArgs:
    case agent::DeltaKind::kToolCallEnd:
      return std::nullopt;
  }
  const agent::Message& m = *e->partial;
  // MessageToRpc adds `api` to assistant messages only; other roles keep the DOM path.
  if (type == nullptr || m.role != agent::Role::kAssistant) return std::nullopt;
  // Members in jsoncpp's sorted order: the frame's, the event's (as DeltaEvent builds them), the
  // message's (MessageToJson's assistant members, `role` included, and `api`).
  std::string out;
  out.reserve(320 + e->delta->text.size() + TextSize(m) + m.model.size() + 2 * m.provider.size() +
              m.error_message.size());
  out.append("{\"assistantMessageEvent\":{\"contentIndex\":");
  AppendInt(e->delta->index, &out);
  out.append(",\"delta\":");
  AppendJsonString(e->delta->text, &out);
  out.append(",\"type\":\"");
  out.append(type);
  out.append("\"},\"message\":{\"api\":");
  AppendJsonString(m.provider, &out);
  out.append(",\"content\":[");
  for (size_t i = 0; i < m.content.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendBlockJson(m.content[i], &out);
  }
  out.push_back(']');
  if (!m.error_message.empty()) {
    out.append(",\"errorMessage\":");
    AppendJsonString(m.error_message, &out);
  }
  out.append(",\"model\":");
  AppendJsonString(m.model, &out);
  out.append(",\"provider\":");
  AppendJsonString(m.provider, &out);
  out.append(",\"role\":\"assistant\",\"stopReason\":");
  AppendJsonString(agent::StopReasonId(m.stop_reason), &out);
  out.append(",\"timestamp\":");
  AppendInt(m.timestamp_ms, &out);
  out.append(",\"usage\":");
  AppendUsageJson(m.usage, &out);
  out.append("},\"type\":\"");
  out.append(frame::kMessageUpdate);
  out.append("\"}");
  return out;
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
