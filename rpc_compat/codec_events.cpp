// RPC wire codec: the frames of the engine's events (FramesFromEvent, MessageUpdateLine, the
// status requests); the commands, messages and models are in codec.cpp.
#include <algorithm>
#include <cstdint>
#include <set>

#include "agent/history.h"
#include "rpc_compat/codec.h"
#include "rpc_compat/commands.h"
#include "support/json_util.h"
#include "support/json_writer.h"

namespace lousho::rpc_compat {

namespace {

Json::Value ToolResultJson(const agent::ToolOutput& out) {
  Json::Value r = Json::Value(Json::objectValue);
  Json::Value content(Json::arrayValue);
  for (const auto& b : out.content) content.append(agent::ContentBlockToJson(b));
  r["content"] = content;
  if (!out.details.isNull()) r["details"] = out.details;
  return r;
}

Json::Value ToolCallFrame(const char* type, const agent::event::ToolCall& call) {
  Json::Value f = NewFrame(type);
  f["toolCallId"] = call.id;
  f["toolName"] = call.name;
  f["args"] = call.args ? *call.args : Json::Value(Json::objectValue);
  return f;
}

Json::Value Strings(const std::vector<std::string>& list) {
  Json::Value a(Json::arrayValue);
  for (const auto& s : list) a.append(s);
  return a;
}

// A rule of ttsr_triggered as the dialect's Rule object: name, path (as shown to the model),
// content, the conditions, the scope, the interrupt mode in force for it, the session's repeat
// settings, description and globs when it has them, and where it was loaded from (_source).
Json::Value TtsrRuleToJson(const agent::event::TtsrRule& r) {
  Json::Value j = Json::Value(Json::objectValue);
  j["name"] = r.name;
  j["path"] = r.path;
  j["content"] = r.content;
  j["condition"] = Strings(r.conditions);
  j["scope"] = Strings(r.scope);
  j["interruptMode"] = r.interrupt_mode;
  j["repeatMode"] = r.repeat_mode;
  j["repeatGap"] = r.repeat_gap;
  if (!r.description.empty()) j["description"] = r.description;
  if (!r.globs.empty()) j["globs"] = Strings(r.globs);
  Json::Value source = Json::Value(Json::objectValue);
  source["provider"] = r.origin;
  source["providerName"] = r.origin;
  source["path"] = r.file;
  source["level"] = r.origin == "user" ? "user" : "project";
  j["_source"] = source;
  return j;
}

struct FrameVisitor {
  std::vector<Json::Value>* out;

  void operator()(const agent::event::AgentStart&) const {
    out->push_back(NewFrame(frame::kAgentStart));
  }
  void operator()(const agent::event::AgentEnd& e) const {
    Json::Value f = NewFrame(frame::kAgentEnd);
    f["messages"] = e.messages ? MessagesToRpc(*e.messages) : Json::Value(Json::arrayValue);
    out->push_back(f);
  }
  void operator()(const agent::event::TurnStart&) const {
    out->push_back(NewFrame(frame::kTurnStart));
  }
  void operator()(const agent::event::TurnEnd& e) const {
    Json::Value f = NewFrame(frame::kTurnEnd);
    if (e.message) f["message"] = MessageToRpc(*e.message);
    f["toolResults"] =
        e.tool_results ? MessagesToRpc(*e.tool_results) : Json::Value(Json::arrayValue);
    out->push_back(f);
  }
  void operator()(const agent::event::MessageStart& e) const {
    Json::Value f = NewFrame(frame::kMessageStart);
    if (e.message) f["message"] = MessageToRpc(*e.message);
    out->push_back(f);
  }
  // Every message_update line is MessageUpdateLine's.
  void operator()(const agent::event::MessageUpdate&) const {}
  void operator()(const agent::event::MessageEnd& e) const {
    Json::Value f = NewFrame(frame::kMessageEnd);
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
      case Phase::kSubagent:
        if (e.call && e.subagent)
          if (auto f = SubagentFrame(*e.call, *e.subagent)) out->push_back(std::move(*f));
        return;
      case Phase::kPartialOutput:
        break;
    }
    if (!e.call) return;
    Json::Value f = ToolCallFrame(frame::kToolExecutionUpdate, *e.call);
    Json::Value text = Json::Value(Json::objectValue);
    text["type"] = "text";
    text["text"] = e.partial_output;
    Json::Value result = Json::Value(Json::objectValue);
    result["content"] = Json::Value(Json::arrayValue);
    result["content"].append(text);
    f["partialResult"] = result;
    out->push_back(f);
  }
  void operator()(const agent::event::ToolExecutionEnd& e) const {
    if (!e.call || !e.output) return;
    Json::Value f = NewFrame(frame::kToolExecutionEnd);
    f["toolCallId"] = e.call->id;
    f["toolName"] = e.call->name;
    f["result"] = ToolResultJson(*e.output);
    f["isError"] = e.is_error;
    out->push_back(f);
    // The tool-result message joins the conversation right after.
    Json::Value message = MessageToRpc(ToolResultMessage(*e.call, *e.output, e.is_error));
    Json::Value start = NewFrame(frame::kMessageStart);
    start["message"] = message;
    out->push_back(start);
    Json::Value end = NewFrame(frame::kMessageEnd);
    end["message"] = message;
    out->push_back(end);
  }
  void operator()(const agent::event::AutoRetryStart& e) const {
    Json::Value f = NewFrame(frame::kAutoRetryStart);
    f["attempt"] = e.retry.attempt;
    f["maxAttempts"] = e.retry.max_attempts;
    f["delayMs"] = static_cast<Json::Int64>(e.retry.delay_ms);
    f["errorMessage"] = e.retry.error_message;
    out->push_back(f);
  }
  void operator()(const agent::event::AutoRetryEnd& e) const {
    Json::Value f = NewFrame(frame::kAutoRetryEnd);
    f["success"] = e.success;
    f["attempt"] = e.attempt;
    if (!e.success && !e.error.empty()) f["finalError"] = e.error;
    out->push_back(f);
  }
  void operator()(const agent::event::PlanUpdate&) const {}   // the todo tool's plan: no frame
  void operator()(const agent::event::ModeChanged&) const {}  // no permission modes here
  // The name is set by set_session_name and read with get_state; the protocol has no event for it.
  void operator()(const agent::event::SessionInfoChanged&) const {}
  // The summary arrives whole in auto_compaction_end.
  void operator()(const agent::event::CompactionSummaryDelta&) const {}
  void operator()(const agent::event::UsageUpdate&) const {}  // get_session_stats has it
  void operator()(const agent::event::TtsrTriggered& e) const {
    Json::Value f = NewFrame(frame::kTtsrTriggered);
    Json::Value fired(Json::arrayValue);
    for (size_t i = 0; i < e.rules.size(); ++i) {
      if (i < e.details.size()) {
        fired.append(TtsrRuleToJson(e.details[i]));
      } else {
        Json::Value rule = Json::Value(Json::objectValue);
        rule["name"] = e.rules[i];
        fired.append(rule);
      }
    }
    f["rules"] = fired;
    out->push_back(f);
  }
  void operator()(const agent::event::TodoReminder& e) const {
    Json::Value f = NewFrame(frame::kTodoReminder);
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
    out->push_back(NewFrame(frame::kTodoAutoClear));
  }
  void operator()(const agent::event::AutoCompactionStart& e) const {
    Json::Value f = NewFrame(frame::kAutoCompactionStart);
    f["reason"] = e.reason;
    f["action"] = "context-full";
    out->push_back(f);
  }
  void operator()(const agent::event::AutoCompactionEnd& e) const {
    Json::Value f = NewFrame(frame::kAutoCompactionEnd);
    f["action"] = "context-full";
    f["aborted"] = e.aborted;
    f["willRetry"] = e.will_retry;
    if (!e.error.empty()) f["errorMessage"] = e.error;
    if (!e.aborted && e.error.empty()) {
      Json::Value result = Json::Value(Json::objectValue);
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

std::optional<Json::Value> StatusRequestFromEvent(const agent::Event& event) {
  std::string key;
  std::string text;
  if (std::holds_alternative<agent::event::AutoCompactionStart>(event)) {
    key = kCompactionStatusKey;
    text = "Compacting the conversation…";
  } else if (std::holds_alternative<agent::event::AutoCompactionEnd>(event)) {
    key = kCompactionStatusKey;  // cleared
  } else {
    return std::nullopt;
  }
  Json::Value f = Json::Value(Json::objectValue);
  f["method"] = ui::kSetStatus;
  f["statusKey"] = key;
  f["statusText"] = text;
  return f;
}

std::vector<Json::Value> FramesFromEvent(const agent::Event& event) {
  std::vector<Json::Value> out;
  std::visit(FrameVisitor{&out}, event);
  return out;
}

namespace {

// MessageToRpc's members, written straight (the message of every delta's line, growing with the
// reply): an assistant message's members here, in jsoncpp's sorted order, with text and thinking
// blocks written from the block (a tool call's or an image's through ContentBlockToJson); any
// other role through MessageToRpc.
void WriteRpcBlock(const agent::ContentBlock& b, JsonWriter* w) {
  switch (b.type) {
    case agent::BlockType::kText:
      w->ObjectBegin();
      w->Attribute("text", b.text);
      w->Attribute("type", "text");
      return w->ObjectEnd();
    case agent::BlockType::kThinking:
      w->ObjectBegin();
      if (b.redacted()) w->Attribute("redacted", true);
      w->Attribute("thinking", b.text);
      if (!b.signature().empty()) w->Attribute("thinkingSignature", b.signature());
      w->Attribute("type", "thinking");
      return w->ObjectEnd();
    case agent::BlockType::kToolCall:
    case agent::BlockType::kImage:
    case agent::BlockType::kServerTool:
      return w->Value(agent::ContentBlockToJson(b));
  }
}

void WriteRpcUsage(const agent::Usage& u, JsonWriter* w) {
  w->ObjectBegin();
  w->Attribute("cacheRead", u.cache_read);
  w->Attribute("cacheWrite", u.cache_write);
  w->AttributeBegin("cost");
  w->ObjectBegin();
  w->Attribute("total", u.cost);
  w->ObjectEnd();
  w->AttributeEnd();
  w->Attribute("input", u.input);
  w->Attribute("output", u.output);
  w->Attribute("totalTokens", u.total());
  w->ObjectEnd();
}

void WriteRpcMessage(const agent::Message& m, JsonWriter* w) {
  if (m.role != agent::Role::kAssistant) return w->Value(MessageToRpc(m));
  w->ObjectBegin();
  w->Attribute("api", m.provider());
  w->AttributeBegin("content");
  w->ArrayBegin();
  // A call the provider ran (its web search) reaches hosts as tool_execution frames only: the
  // RPC message has no block for it.
  for (const auto& b : m.content)
    if (b.type != agent::BlockType::kServerTool) WriteRpcBlock(b, w);
  w->ArrayEnd();
  w->AttributeEnd();
  if (!m.error_message().empty()) w->Attribute("errorMessage", m.error_message());
  w->Attribute("model", m.model());
  w->Attribute("provider", m.provider());
  w->Attribute("role", "assistant");
  w->Attribute("stopReason", agent::StopReasonId(m.stop_reason));
  w->Attribute("timestamp", m.timestamp_ms);
  w->AttributeBegin("usage");
  WriteRpcUsage(m.usage(), w);
  w->AttributeEnd();
  w->ObjectEnd();
}

// What the assistantMessageEvent of one delta kind carries.
struct DeltaShape {
  const char* type;
  bool delta = false;             // the delta's text
  const char* content = nullptr;  // *_end: the block's text or thinking
  bool partial = false;           // tool calls: the message again (hosts read the call from it)
};

DeltaShape ShapeOf(agent::DeltaKind kind) {
  using agent::DeltaKind;
  switch (kind) {
    case DeltaKind::kTextStart:
      return {delta::kTextStart};
    case DeltaKind::kText:
      return {delta::kTextDelta, true};
    case DeltaKind::kTextEnd:
      return {delta::kTextEnd, false, "text"};
    case DeltaKind::kThinkingStart:
      return {delta::kThinkingStart};
    case DeltaKind::kThinking:
      return {delta::kThinkingDelta, true};
    case DeltaKind::kThinkingEnd:
      return {delta::kThinkingEnd, false, "thinking"};
    case DeltaKind::kToolCallStart:
      return {delta::kToolCallStart, false, nullptr, true};
    case DeltaKind::kToolCallArgs:
      return {delta::kToolCallDelta, true, nullptr, true};
    case DeltaKind::kToolCallEnd:
      return {delta::kToolCallEnd, false, nullptr, true};
    case DeltaKind::kServerToolStart:
    case DeltaKind::kServerToolEnd:
      break;  // no event of their own (MessageUpdateLine writes no line for them)
  }
  return {delta::kTextDelta, true};
}

// The text a *_end event repeats: the block's text (a text block's for "text", a thinking
// block's for "thinking"), empty when the block at the index is of another kind or missing.
std::string_view EndContent(const agent::ContentBlock* b, std::string_view of) {
  if (b == nullptr) return {};
  if (of == "text") return b->type == agent::BlockType::kText ? b->text : std::string_view();
  return b->type == agent::BlockType::kThinking ? b->text : std::string_view();
}

// The assistantMessageEvent of one delta (members in jsoncpp's sorted order). The frame's
// `message` is already the partial message; the event repeats it only for tool calls, where
// hosts read the call from it (pi-acp), so a long text is not sent twice per delta.
void WriteDeltaEvent(const agent::StreamDelta& d, const agent::Message& m, JsonWriter* w) {
  const DeltaShape shape = ShapeOf(d.kind);
  const agent::ContentBlock* block = d.index >= 0 && static_cast<size_t>(d.index) < m.content.size()
                                         ? &m.content[d.index]
                                         : nullptr;
  w->ObjectBegin();
  if (shape.content != nullptr) w->Attribute("content", EndContent(block, shape.content));
  w->Attribute("contentIndex", d.index);
  if (shape.delta) w->Attribute("delta", d.text);
  if (shape.partial) {
    w->AttributeBegin("partial");
    WriteRpcMessage(m, w);
    w->AttributeEnd();
  }
  if (d.kind == agent::DeltaKind::kToolCallEnd) {
    w->AttributeBegin("toolCall");
    if (block != nullptr) {
      w->Value(agent::ContentBlockToJson(*block));
    } else {
      w->Value(nullptr);
    }
    w->AttributeEnd();
  }
  w->Attribute("type", shape.type);
  w->ObjectEnd();
}

size_t TextSize(const agent::Message& m) {
  size_t n = 0;
  for (const auto& b : m.content) n += b.text.size() + b.signature().size();
  return n;
}

}  // namespace

std::optional<std::string> MessageUpdateLine(const agent::Event& event) {
  const auto* e = std::get_if<agent::event::MessageUpdate>(&event);
  if (e == nullptr || e->delta == nullptr || e->partial == nullptr) return std::nullopt;
  // A call the provider runs itself is shown by its tool_execution frames.
  if (e->delta->kind == agent::DeltaKind::kServerToolStart ||
      e->delta->kind == agent::DeltaKind::kServerToolEnd)
    return std::nullopt;
  const agent::Message& m = *e->partial;
  std::string out;
  out.reserve(320 + e->delta->text.size() + TextSize(m) + m.model().size() +
              2 * m.provider().size() + m.error_message().size());
  // Members in jsoncpp's sorted order: the frame's, the event's, the message's.
  {
    JsonWriter w(&out);
    w.ObjectBegin();
    w.AttributeBegin("assistantMessageEvent");
    WriteDeltaEvent(*e->delta, m, &w);
    w.AttributeEnd();
    w.AttributeBegin("message");
    WriteRpcMessage(m, &w);
    w.AttributeEnd();
    w.Attribute("type", frame::kMessageUpdate);
    w.ObjectEnd();
  }
  // The ready frame promises hosts no line longer than this (FitFrame says what was dropped).
  if (out.size() + 1 > static_cast<size_t>(kMaxFrameBytes))
    out = WriteJson(FitFrame(NewFrame(frame::kMessageUpdate)));
  return out;
}

}  // namespace lousho::rpc_compat
