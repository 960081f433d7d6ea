// The history's JSON codec, writing: entries, messages and blocks as the session file's JSON
// (docs/session-format.md); the names of entry kinds, stop reasons and tool kinds.
#include <cmath>
#include <optional>

#include "agent/history.h"
#include "support/json_util.h"

namespace lousho::agent {

namespace {
struct KindName {
  EntryKind kind;
  const char* name;
};
constexpr KindName kKindNames[] = {
    {EntryKind::kMessage, "message"},
    {EntryKind::kModelChange, "model_change"},
    {EntryKind::kThinkingChange, "thinking_level_change"},
    {EntryKind::kModeChange, "mode_change"},
    {EntryKind::kCustom, "custom"},
    {EntryKind::kLabel, "label"},
    {EntryKind::kCompaction, "compaction"},
    {EntryKind::kBranchSummary, "branch_summary"},
    {EntryKind::kSessionInfo, "session_info"},
    {EntryKind::kTtsrInjection, "ttsr_injection"},
};
}  // namespace

const char* EntryKindName(EntryKind kind) {
  for (const auto& k : kKindNames)
    if (k.kind == kind) return k.name;
  return "custom";
}

std::optional<EntryKind> ParseEntryKindName(std::string_view name) {
  for (const auto& k : kKindNames)
    if (name == k.name) return k.kind;
  return std::nullopt;
}

// --- codec ---

namespace {
struct StopName {
  StopReason reason;
  const char* id;
};
constexpr StopName kStopNames[] = {
    {StopReason::kEndTurn, "stop"},
    {StopReason::kToolUse, "toolUse"},
    {StopReason::kMaxTokens, "length"},
    {StopReason::kRefusal, "refusal"},
    {StopReason::kCancelled, "aborted"},
    {StopReason::kError, "error"},
    // A paused message is stored as one that stopped (the message after it goes on from it); read
    // back, "stop" is kEndTurn, the entry above.
    {StopReason::kPaused, "stop"},
};

struct KindId {
  ToolKind kind;
  const char* id;
};
constexpr KindId kToolKinds[] = {
    {ToolKind::kRead, "read"},
    {ToolKind::kEdit, "edit"},
    {ToolKind::kDelete, "delete"},
    {ToolKind::kMove, "move"},
    {ToolKind::kSearch, "search"},
    {ToolKind::kExecute, "execute"},
    {ToolKind::kThink, "think"},
    {ToolKind::kFetch, "fetch"},
    {ToolKind::kSwitchMode, "switch_mode"},
    {ToolKind::kOther, "other"},
};

Json::Value UsageToJson(const Usage& u) {
  Json::Value j(Json::objectValue);
  j["input"] = static_cast<Json::Int64>(u.input);
  j["output"] = static_cast<Json::Int64>(u.output);
  j["cacheRead"] = static_cast<Json::Int64>(u.cache_read);
  j["cacheWrite"] = static_cast<Json::Int64>(u.cache_write);
  j["totalTokens"] = static_cast<Json::Int64>(u.total());
  Json::Value cost(Json::objectValue);
  cost["total"] = u.cost;
  j["cost"] = cost;
  return j;
}

Json::Value ContentToJson(const std::vector<ContentBlock>& content) {
  Json::Value arr(Json::arrayValue);
  for (const auto& b : content) arr.append(ContentBlockToJson(b));
  return arr;
}

Json::Value LocationsToJson(const std::vector<ToolLocation>& locs) {
  Json::Value arr(Json::arrayValue);
  for (const auto& l : locs) {
    Json::Value j(Json::objectValue);
    j["path"] = l.path;
    if (l.line > 0) j["line"] = l.line;
    arr.append(j);
  }
  return arr;
}

Json::Value ToolDisplayToJson(const ToolDisplay& t) {
  Json::Value j(Json::objectValue);
  j["title"] = t.title;
  j["kind"] = ToolKindId(t.kind);
  if (!t.args.isNull()) j["args"] = t.args;
  if (!t.locations.empty()) j["locations"] = LocationsToJson(t.locations);
  if (!t.diffs.empty()) {
    Json::Value arr(Json::arrayValue);
    for (const auto& d : t.diffs) {
      Json::Value dj(Json::objectValue);
      dj["path"] = d.path;
      dj["oldText"] = d.old_text ? Json::Value(*d.old_text) : Json::Value();
      dj["newText"] = d.new_text;
      arr.append(dj);
    }
    j["diffs"] = arr;
  }
  if (!t.terminal_id.empty()) j["terminalId"] = t.terminal_id;
  return j;
}

}  // namespace

const char* StopReasonId(StopReason reason) {
  for (const auto& s : kStopNames)
    if (s.reason == reason) return s.id;
  return "stop";
}

std::optional<StopReason> ParseStopReasonId(const std::string& id) {
  for (const auto& s : kStopNames)
    if (id == s.id) return s.reason;
  return std::nullopt;
}

const char* ToolKindId(ToolKind kind) {
  for (const auto& k : kToolKinds)
    if (k.kind == kind) return k.id;
  return "other";
}

ToolKind ParseToolKindId(const std::string& id) {
  for (const auto& k : kToolKinds)
    if (id == k.id) return k.kind;
  return ToolKind::kOther;
}

Json::Value ContentBlockToJson(const ContentBlock& b) {
  Json::Value j(Json::objectValue);
  switch (b.type) {
    case BlockType::kText:
      j["type"] = "text";
      j["text"] = b.text;
      break;
    case BlockType::kThinking:
      j["type"] = "thinking";
      j["thinking"] = b.text;
      if (!b.signature().empty()) j["thinkingSignature"] = b.signature();
      if (b.redacted()) j["redacted"] = true;
      break;
    case BlockType::kToolCall:
      j["type"] = "toolCall";
      j["id"] = b.id();
      j["name"] = b.name();
      j["arguments"] = b.arguments();
      break;
    case BlockType::kImage:
      j["type"] = "image";
      j["data"] = b.data();
      j["mimeType"] = b.mime_type();
      break;
    case BlockType::kServerTool:
      j["type"] = "serverToolCall";
      j["id"] = b.id();
      j["name"] = b.name();
      j["arguments"] = b.arguments();
      j["api"] = b.server->api;
      j["summary"] = b.server->summary;
      j["result"] = b.server->result;
      if (b.server->is_error) j["isError"] = true;
      break;
  }
  return j;
}

Json::Value MessageToJson(const Message& m) {
  Json::Value j(Json::objectValue);
  switch (m.role) {
    case Role::kUser:
      if (m.is_custom()) {
        j["role"] = "custom";
        j["customType"] = m.custom_type;
        j["display"] = m.display;
      } else {
        j["role"] = "user";
      }
      j["content"] = ContentToJson(m.content);
      break;
    case Role::kAssistant:
      j["role"] = "assistant";
      j["content"] = ContentToJson(m.content);
      j["provider"] = m.provider();
      j["model"] = m.model();
      j["usage"] = UsageToJson(m.usage());
      j["stopReason"] = StopReasonId(m.stop_reason);
      if (!m.error_message().empty()) j["errorMessage"] = m.error_message();
      break;
    case Role::kToolResult:
      j["role"] = "toolResult";
      j["toolCallId"] = m.tool_call_id;
      j["toolName"] = m.tool_name;
      j["content"] = ContentToJson(m.content);
      if (!m.tool->details.isNull()) j["details"] = m.tool->details;
      j["isError"] = m.is_error;
      j["display"] = ToolDisplayToJson(*m.tool);
      break;
  }
  j["timestamp"] = static_cast<Json::Int64>(m.timestamp_ms);
  return j;
}

Json::Value EntryToJson(const Entry& e) {
  Json::Value j(Json::objectValue);
  j["type"] = EntryKindName(e.kind);
  j["id"] = e.id;
  j["parentId"] = e.parent_id.empty() ? Json::Value() : Json::Value(e.parent_id);
  j["timestamp"] = IsoTimestamp(e.timestamp_ms);
  switch (e.kind) {
    case EntryKind::kMessage:
      j["message"] = MessageToJson(e.message);
      break;
    case EntryKind::kModelChange:
      j["provider"] = e.more->provider;
      j["modelId"] = e.more->model_id;
      break;
    case EntryKind::kThinkingChange:
      j["thinkingLevel"] = e.more->thinking_level;
      break;
    case EntryKind::kModeChange:
      j["mode"] = e.more->mode;
      break;
    case EntryKind::kCustom:
      j["customType"] = e.more->custom_type;
      if (!e.more->data.isNull()) j["data"] = e.more->data;
      break;
    case EntryKind::kLabel:
      j["targetId"] = e.more->target_id;
      j["label"] = e.more->label;
      break;
    case EntryKind::kCompaction:
      j["summary"] = e.more->summary;
      j["firstKeptEntryId"] = e.more->first_kept_id;
      j["tokensBefore"] = static_cast<Json::Int64>(e.more->tokens_before);
      if (!e.more->data.isNull()) j["details"] = e.more->data;
      break;
    case EntryKind::kBranchSummary:
      j["fromId"] = e.more->from_id.empty() ? std::string("root") : e.more->from_id;
      j["summary"] = e.more->summary;
      if (!e.more->data.isNull()) j["details"] = e.more->data;
      break;
    case EntryKind::kSessionInfo:
      j["name"] = e.more->name;
      break;
    case EntryKind::kTtsrInjection: {
      Json::Value rules(Json::arrayValue);
      for (const auto& r : e.more->rules) rules.append(r);
      j["injectedRules"] = rules;
      break;
    }
  }
  return j;
}

Result<Entry> EntryFromText(std::string_view line, const std::string& where) {
  Entry e;
  Status read = DecodeEntryLine(line, where, &e);
  if (!read.ok()) return read.error();
  return e;
}

Result<Entry> EntryFromJson(const Json::Value& v, const std::string& where) {
  return EntryFromText(WriteJson(v), where);
}

}  // namespace lousho::agent
