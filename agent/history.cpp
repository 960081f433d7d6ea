// History tree and its JSON codec.
#include "agent/history.h"

#include <chrono>
#include <cstdio>
#include <ctime>

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

long long NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string IsoTimestamp(long long ms) {
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(ms % 1000));
  return buf;
}

long long ParseIsoTimestamp(const std::string& s) {
  std::tm tm{};
  int ms = 0;
  int n = std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon,
                      &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms);
  if (n < 6) return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<long long>(timegm(&tm)) * 1000 + ms;
}

// --- the tree ---

History::History() : rng_(std::random_device{}()) {}

std::string History::NewId() {
  for (;;) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rng_() & 0xffffffffu));
    if (index_.find(buf) == index_.end()) return buf;
  }
}

const Entry& History::Append(Entry entry) {
  if (entry.id.empty() || index_.count(entry.id) != 0) entry.id = NewId();
  if (entry.timestamp_ms == 0) entry.timestamp_ms = NowMs();
  entry.parent_id = leaf_;
  leaf_ = entry.id;
  index_[entry.id] = entries_.size();
  entries_.push_back(std::move(entry));
  const Entry& stored = entries_.back();
  if (stored.kind == EntryKind::kMessage) {
    branch_messages_.push_back(stored.message);
    branch_message_ids_.push_back(stored.id);
  } else if (stored.kind == EntryKind::kBranchSummary && !stored.summary.empty()) {
    branch_messages_.push_back(BranchSummaryMessage(stored));
    branch_message_ids_.push_back(stored.id);
  } else if (stored.kind == EntryKind::kCompaction) {
    RebuildBranch();  // the context now starts with the summary
  }
  return stored;
}

const Entry* History::Find(const std::string& id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

Status History::SetLeaf(const std::string& id) {
  if (!id.empty() && Find(id) == nullptr)
    return MakeError(ErrorCode::kHistoryInvalid, "no entry with id '" + id + "'");
  leaf_ = id;
  RebuildBranch();
  return Status::Ok();
}

Result<const Entry*> History::BranchTo(const std::string& id, const std::string& summary) {
  if (!id.empty() && Find(id) == nullptr)
    return MakeError(ErrorCode::kHistoryInvalid, "no entry with id '" + id + "'");
  const Entry* leaf = Find(leaf_);
  // Already there: at `id` itself, or at an empty branch summary that marks a move to it.
  const bool there = leaf_ == id || (leaf && leaf->kind == EntryKind::kBranchSummary &&
                                     leaf->summary.empty() && leaf->parent_id == id);
  if (there && summary.empty()) return static_cast<const Entry*>(nullptr);
  Entry e;
  e.kind = EntryKind::kBranchSummary;
  e.from_id = id;
  e.summary = summary;
  e.data = Json::Value(Json::objectValue);
  e.data["abandonedLeafId"] = leaf_.empty() ? Json::Value() : Json::Value(leaf_);
  leaf_ = id;
  RebuildBranch();
  return &Append(std::move(e));  // adds the summary's message, if it has one
}

Status History::Seed(std::vector<Entry> entries, const std::string& leaf) {
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (e.id.empty())
      return MakeError(ErrorCode::kHistoryInvalid, "entry " + std::to_string(i) + " has no id");
    if (!e.parent_id.empty() && index.count(e.parent_id) == 0)
      return MakeError(ErrorCode::kHistoryInvalid,
                       "entry '" + e.id + "' names an unknown parent '" + e.parent_id + "'");
    if (!index.emplace(e.id, i).second)
      return MakeError(ErrorCode::kHistoryInvalid, "duplicate entry id '" + e.id + "'");
  }
  if (!leaf.empty() && index.count(leaf) == 0)
    return MakeError(ErrorCode::kHistoryInvalid, "no entry with id '" + leaf + "'");
  entries_ = std::move(entries);
  index_ = std::move(index);
  leaf_ = leaf.empty() ? (entries_.empty() ? std::string() : entries_.back().id) : leaf;
  RebuildBranch();
  return Status::Ok();
}

std::vector<const Entry*> History::Branch() const {
  std::vector<const Entry*> out;
  for (const Entry* e = Find(leaf_); e != nullptr; e = Find(e->parent_id)) {
    out.push_back(e);
    if (out.size() > entries_.size()) break;  // a cycle cannot be built, but never loop
  }
  return {out.rbegin(), out.rend()};
}

void History::RebuildBranch() {
  branch_messages_.clear();
  branch_message_ids_.clear();
  context_start_ = 0;
  const std::vector<const Entry*> branch = Branch();
  // The last compaction on the branch decides where the context starts.
  size_t compaction = branch.size();
  for (size_t i = branch.size(); i-- > 0;) {
    if (branch[i]->kind == EntryKind::kCompaction) {
      compaction = i;
      break;
    }
  }
  size_t from = 0;
  if (compaction < branch.size()) {
    branch_messages_.push_back(CompactionSummaryMessage(*branch[compaction]));
    branch_message_ids_.emplace_back();
    from = compaction;  // nothing kept unless its first kept entry is found before it
    for (size_t i = 0; i < compaction; ++i) {
      if (branch[i]->id == branch[compaction]->first_kept_id) {
        from = i;
        break;
      }
    }
  }
  for (size_t i = from; i < branch.size(); ++i) {
    if (i == compaction) context_start_ = branch_messages_.size();
    const Entry& e = *branch[i];
    if (e.kind == EntryKind::kMessage) {
      branch_messages_.push_back(e.message);
    } else if (e.kind == EntryKind::kBranchSummary && !e.summary.empty()) {
      // An empty one only marks where the leaf moved: the model never sees it.
      branch_messages_.push_back(BranchSummaryMessage(e));
    } else {
      continue;
    }
    branch_message_ids_.push_back(e.id);
  }
}

Message CompactionSummaryMessage(const Entry& compaction) {
  Message m;
  m.role = Role::kUser;
  m.custom_type = kCompactionSummaryType;
  m.display = false;
  m.timestamp_ms = compaction.timestamp_ms;
  m.content.push_back(ContentBlock::Text(
      "The earlier part of this conversation was compacted to save context. Its summary:\n\n"
      "<summary>\n" +
      compaction.summary + "\n</summary>"));
  return m;
}

Message BranchSummaryMessage(const Entry& branch_summary) {
  Message m;
  m.role = Role::kUser;
  m.custom_type = kBranchSummaryType;
  m.display = false;
  m.timestamp_ms = branch_summary.timestamp_ms;
  m.content.push_back(ContentBlock::Text(
      "The conversation went down another path before coming back to this point. What happened "
      "on that path:\n\n<summary>\n" +
      branch_summary.summary + "\n</summary>"));
  return m;
}

// --- codec ---

namespace {
struct StopName {
  StopReason reason;
  const char* id;
};
constexpr StopName kStopNames[] = {
    {StopReason::kEndTurn, "stop"},      {StopReason::kToolUse, "toolUse"},
    {StopReason::kMaxTokens, "length"},  {StopReason::kRefusal, "refusal"},
    {StopReason::kCancelled, "aborted"}, {StopReason::kError, "error"},
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

Error Invalid(const std::string& message) { return MakeError(ErrorCode::kHistoryInvalid, message); }

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

Usage UsageFromJson(const Json::Value& j) {
  Usage u;
  u.input = IntOr(j, "input", 0);
  u.output = IntOr(j, "output", 0);
  u.cache_read = IntOr(j, "cacheRead", 0);
  u.cache_write = IntOr(j, "cacheWrite", 0);
  u.cost = DoubleOr(MemberOrNull(j, "cost"), "total", 0);
  return u;
}

Json::Value ContentToJson(const std::vector<ContentBlock>& content) {
  Json::Value arr(Json::arrayValue);
  for (const auto& b : content) arr.append(ContentBlockToJson(b));
  return arr;
}

Result<std::vector<ContentBlock>> ContentFromJson(const Json::Value* v, const std::string& path) {
  std::vector<ContentBlock> out;
  if (v == nullptr || v->isNull()) return out;
  if (v->isString()) {
    out.push_back(ContentBlock::Text(AsString(*v).value_or("")));
    return out;
  }
  if (!v->isArray()) return Invalid(path + ": expected string or array");
  for (Json::ArrayIndex i = 0; i < v->size(); ++i) {
    auto b = ContentBlockFromJson(ElementOrNull(*v, i), path + "[" + std::to_string(i) + "]");
    if (!b.ok()) return b.error();
    out.push_back(std::move(*b));
  }
  return out;
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

ToolDisplay ToolDisplayFromJson(const Json::Value& j) {
  ToolDisplay t;
  t.title = StringOr(j, "title");
  t.kind = ParseToolKindId(StringOr(j, "kind", "other"));
  t.args = MemberOrNull(j, "args");
  const Json::Value& locs = MemberOrNull(j, "locations");
  if (locs.isArray())
    for (const auto& l : locs) {
      ToolLocation loc;
      loc.path = StringOr(l, "path");
      const long long line = IntOr(l, "line", 0);
      loc.line = line > 0 && line < (1LL << 31) ? static_cast<int>(line) : 0;
      if (!loc.path.empty()) t.locations.push_back(loc);
    }
  const Json::Value& diffs = MemberOrNull(j, "diffs");
  if (diffs.isArray())
    for (const auto& d : diffs) {
      FileDiff diff;
      diff.path = StringOr(d, "path");
      diff.old_text = AsString(MemberOrNull(d, "oldText"));
      diff.new_text = StringOr(d, "newText");
      t.diffs.push_back(std::move(diff));
    }
  t.terminal_id = StringOr(j, "terminalId");
  return t;
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
      if (!b.signature.empty()) j["thinkingSignature"] = b.signature;
      if (b.redacted) j["redacted"] = true;
      break;
    case BlockType::kToolCall:
      j["type"] = "toolCall";
      j["id"] = b.id;
      j["name"] = b.name;
      j["arguments"] = b.arguments;
      break;
    case BlockType::kImage:
      j["type"] = "image";
      j["data"] = b.data;
      j["mimeType"] = b.mime_type;
      break;
  }
  return j;
}

Result<ContentBlock> ContentBlockFromJson(const Json::Value& v, const std::string& path) {
  FieldReader r(v, path);
  auto type = r.String("type", true);
  if (!r.ok()) return Invalid(r.error());
  ContentBlock b;
  if (*type == "text") {
    b = ContentBlock::Text(r.String("text", true).value_or(""));
  } else if (*type == "thinking") {
    b = ContentBlock::Thinking(r.String("thinking", true).value_or(""),
                               r.String("thinkingSignature", false).value_or(""));
    b.redacted = r.Bool("redacted", false).value_or(false);
  } else if (*type == "toolCall") {
    auto id = r.String("id", true);
    auto name = r.String("name", true);
    const Json::Value* args = r.Any("arguments", false);
    b = ContentBlock::ToolCall(id.value_or(""), name.value_or(""),
                               args ? *args : Json::Value(Json::objectValue));
  } else if (*type == "image") {
    auto data = r.String("data", true);
    auto mime = r.String("mimeType", true);
    b = ContentBlock::Image(mime.value_or(""), data.value_or(""));
  } else {
    return Invalid(r.Path("type") + ": unknown block type '" + *type + "'");
  }
  if (!r.ok()) return Invalid(r.error());
  return b;
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
      j["provider"] = m.provider;
      j["model"] = m.model;
      j["usage"] = UsageToJson(m.usage);
      j["stopReason"] = StopReasonId(m.stop_reason);
      if (!m.error_message.empty()) j["errorMessage"] = m.error_message;
      break;
    case Role::kToolResult:
      j["role"] = "toolResult";
      j["toolCallId"] = m.tool_call_id;
      j["toolName"] = m.tool_name;
      j["content"] = ContentToJson(m.content);
      if (!m.tool.details.isNull()) j["details"] = m.tool.details;
      j["isError"] = m.is_error;
      j["display"] = ToolDisplayToJson(m.tool);
      break;
  }
  j["timestamp"] = static_cast<Json::Int64>(m.timestamp_ms);
  return j;
}

Result<Message> MessageFromJson(const Json::Value& v, const std::string& path) {
  FieldReader r(v, path);
  auto role = r.String("role", true);
  if (!r.ok()) return Invalid(r.error());
  Message m;
  auto content = ContentFromJson(FindMember(v, "content"), r.Path("content"));
  if (!content.ok()) return content.error();
  m.content = std::move(*content);
  m.timestamp_ms = r.Int("timestamp", false).value_or(0);
  if (*role == "user") {
    m.role = Role::kUser;
  } else if (*role == "custom") {
    m.role = Role::kUser;
    m.custom_type = r.String("customType", true).value_or("");
    m.display = r.Bool("display", false).value_or(true);
  } else if (*role == "assistant") {
    m.role = Role::kAssistant;
    m.provider = r.String("provider", false).value_or("");
    m.model = r.String("model", false).value_or("");
    if (const Json::Value* u = r.Object("usage", false)) m.usage = UsageFromJson(*u);
    auto stop = ParseStopReasonId(r.String("stopReason", false).value_or("stop"));
    m.stop_reason = stop.value_or(StopReason::kEndTurn);
    m.error_message = r.String("errorMessage", false).value_or("");
  } else if (*role == "toolResult") {
    m.role = Role::kToolResult;
    m.tool_call_id = r.String("toolCallId", true).value_or("");
    m.tool_name = r.String("toolName", true).value_or("");
    m.is_error = r.Bool("isError", false).value_or(false);
    if (const Json::Value* d = r.Object("display", false)) m.tool = ToolDisplayFromJson(*d);
    m.tool.details = MemberOrNull(v, "details");
  } else {
    return Invalid(r.Path("role") + ": unknown role '" + *role + "'");
  }
  if (!r.ok()) return Invalid(r.error());
  return m;
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
      j["provider"] = e.provider;
      j["modelId"] = e.model_id;
      break;
    case EntryKind::kThinkingChange:
      j["thinkingLevel"] = e.thinking_level;
      break;
    case EntryKind::kModeChange:
      j["mode"] = e.mode;
      break;
    case EntryKind::kCustom:
      j["customType"] = e.custom_type;
      if (!e.data.isNull()) j["data"] = e.data;
      break;
    case EntryKind::kLabel:
      j["targetId"] = e.target_id;
      j["label"] = e.label;
      break;
    case EntryKind::kCompaction:
      j["summary"] = e.summary;
      j["firstKeptEntryId"] = e.first_kept_id;
      j["tokensBefore"] = static_cast<Json::Int64>(e.tokens_before);
      if (!e.data.isNull()) j["details"] = e.data;
      break;
    case EntryKind::kBranchSummary:
      j["fromId"] = e.from_id.empty() ? std::string("root") : e.from_id;
      j["summary"] = e.summary;
      if (!e.data.isNull()) j["details"] = e.data;
      break;
    case EntryKind::kSessionInfo:
      j["name"] = e.name;
      break;
    case EntryKind::kTtsrInjection: {
      Json::Value rules(Json::arrayValue);
      for (const auto& r : e.rules) rules.append(r);
      j["injectedRules"] = rules;
      break;
    }
  }
  return j;
}

Result<Entry> EntryFromJson(const Json::Value& v, const std::string& path) {
  FieldReader r(v, path);
  auto type = r.String("type", true);
  auto id = r.String("id", true);
  auto parent = r.String("parentId", false);
  auto ts = r.String("timestamp", false);
  if (!r.ok()) return Invalid(r.error());
  Entry e;
  bool known = false;
  for (const auto& k : kKindNames)
    if (*type == k.name) {
      e.kind = k.kind;
      known = true;
    }
  if (!known) return Invalid(r.Path("type") + ": unknown entry type '" + *type + "'");
  e.id = *id;
  e.parent_id = parent.value_or("");
  e.timestamp_ms = ts ? ParseIsoTimestamp(*ts) : 0;
  switch (e.kind) {
    case EntryKind::kMessage: {
      const Json::Value* m = r.Object("message", true);
      if (!r.ok()) return Invalid(r.error());
      auto msg = MessageFromJson(*m, r.Path("message"));
      if (!msg.ok()) return msg.error();
      e.message = std::move(*msg);
      break;
    }
    case EntryKind::kModelChange:
      e.provider = r.String("provider", true).value_or("");
      e.model_id = r.String("modelId", true).value_or("");
      break;
    case EntryKind::kThinkingChange:
      e.thinking_level = r.String("thinkingLevel", false).value_or("off");
      break;
    case EntryKind::kModeChange:
      e.mode = r.String("mode", true).value_or("");
      break;
    case EntryKind::kCustom:
      e.custom_type = r.String("customType", true).value_or("");
      e.data = MemberOrNull(v, "data");
      break;
    case EntryKind::kLabel:
      e.target_id = r.String("targetId", true).value_or("");
      e.label = r.String("label", false).value_or("");
      break;
    case EntryKind::kCompaction:
      e.summary = r.String("summary", true).value_or("");
      e.first_kept_id = r.String("firstKeptEntryId", false).value_or("");
      e.tokens_before = r.Int("tokensBefore", false).value_or(0);
      e.data = MemberOrNull(v, "details");
      break;
    case EntryKind::kBranchSummary:
      e.from_id = r.String("fromId", false).value_or("root");
      if (e.from_id == "root") e.from_id.clear();
      e.summary = r.String("summary", true).value_or("");
      e.data = MemberOrNull(v, "details");
      break;
    case EntryKind::kSessionInfo:
      e.name = r.String("name", false).value_or("");
      break;
    case EntryKind::kTtsrInjection:
      if (const Json::Value* rules = r.Array("injectedRules", true))
        for (const auto& name : *rules)
          if (auto s = AsString(name)) e.rules.push_back(*s);
      break;
  }
  if (!r.ok()) return Invalid(r.error());
  return e;
}

}  // namespace lousho::agent
