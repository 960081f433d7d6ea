// History tree and its JSON codec.
#include "agent/history.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>

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
  // The form IsoTimestamp writes, read without sscanf (a session file holds one per entry).
  auto digits = [&](size_t at, size_t n, int* out) {
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
  };
  if (s.size() == 24 && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' &&
      s[16] == ':' && s[19] == '.' && s[23] == 'Z') {
    std::tm tm{};
    int ms = 0;
    if (digits(0, 4, &tm.tm_year) && digits(5, 2, &tm.tm_mon) && digits(8, 2, &tm.tm_mday) &&
        digits(11, 2, &tm.tm_hour) && digits(14, 2, &tm.tm_min) && digits(17, 2, &tm.tm_sec) &&
        digits(20, 3, &ms)) {
      tm.tm_year -= 1900;
      tm.tm_mon -= 1;
      return static_cast<long long>(timegm(&tm)) * 1000 + ms;
    }
  }
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

History::History(std::shared_ptr<HistoryRecorder> recorder) : History() {
  recorder_ = std::move(recorder);
}

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
  if (recorder_) recorder_->Record(stored);
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

Status History::Seed(std::vector<Entry> entries, const std::string& leaf,
                     std::vector<std::string>* repaired) {
  std::unordered_map<std::string, size_t> index;
  index.reserve(entries.size());  // one allocation, no rehash while a long file is indexed
  for (size_t i = 0; i < entries.size(); ++i) {
    Entry& e = entries[i];
    if (e.id.empty())
      return MakeError(ErrorCode::kHistoryInvalid, "entry " + std::to_string(i) + " has no id");
    if (!e.parent_id.empty() && index.count(e.parent_id) == 0) {
      // Older files lost the entries appended without being recorded (a stream rule's injection,
      // a compaction) while the next entry named them: hang it off the entry written before it.
      // The first entry has none before it and becomes a root.
      std::string before = i == 0 ? std::string() : entries[i - 1].id;
      if (repaired)
        repaired->push_back("entry '" + e.id + "' named a parent '" + e.parent_id +
                            "' that is not before it in the file; it now follows " +
                            (before.empty() ? std::string("nothing (a root)")
                                            : "'" + before + "', the entry before it"));
      e.parent_id = std::move(before);
    }
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
  branch_messages_.reserve(branch.size() + 1);
  branch_message_ids_.reserve(branch.size() + 1);
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
  Message m = Message::Custom(
      kCompactionSummaryType,
      "The earlier part of this conversation was compacted to save context. Its summary:\n\n"
      "<summary>\n" +
          compaction.summary + "\n</summary>",
      false);
  m.timestamp_ms = compaction.timestamp_ms;
  return m;
}

Message BranchSummaryMessage(const Entry& branch_summary) {
  Message m = Message::Custom(kBranchSummaryType,
                              "The conversation went down another path before coming back to "
                              "this point. What happened on that path:\n\n<summary>\n" +
                                  branch_summary.summary + "\n</summary>",
                              false);
  m.timestamp_ms = branch_summary.timestamp_ms;
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

// --- reading entry lines ---
//
// Session files are read with a pull decoder over each line's text (support/json_util's
// JsonCursor): fields go straight into the Entry, and a Json::Value is built only for the
// free-form members (tool arguments, details, data). Members may come in any order and unknown
// ones are skipped; what a field must be is checked once the whole object is read. Messages name
// the path the way FieldReader does ("<where>.message.content[0].type: required").

namespace {
// Where a value is. The path text is only built for an error message.
struct At {
  const At* parent;
  std::string_view key;  // a member name, or the root's name
  long index = -1;       // an array element's index (key unused)

  At Member(std::string_view k) const { return At{this, k}; }
  At Element(long i) const { return At{this, {}, i}; }
  std::string Str() const {
    std::string out = parent ? parent->Str() : std::string();
    if (index >= 0) return out + "[" + std::to_string(index) + "]";
    if (parent && !out.empty()) out += '.';
    return out.append(key);
  }
};

class LineDecoder {
 public:
  explicit LineDecoder(std::string_view text) : c_(text) {}

  // Whether the line was not JSON (a cursor error) rather than JSON of the wrong shape.
  bool syntax_error() const { return !c_.ok(); }
  bool ok() const { return c_.ok() && error_.empty(); }
  std::string error() const { return c_.ok() ? error_ : "invalid JSON: " + c_.error(); }

  // Decodes into *e, which must be a fresh Entry.
  Status ReadEntry(const std::string& where, Entry* out);
  Result<ContentBlock> ReadBlock(const std::string& where) {
    ContentBlock b;
    if (!Block(At{nullptr, where}, &b) || !c_.End()) return Invalid(error());
    return b;
  }

 private:
  bool Fail(const At& at, const char* what) {
    if (error_.empty()) error_ = at.Str() + ": " + what;
    return false;
  }
  // The value at the cursor, typed. A null reads as absent (false, no error); another type is an
  // error, as FieldReader has it.
  bool Str(const At& at, std::string* out);
  bool Bool(const At& at, bool* out);
  bool Int(const At& at, long long* out);
  // Lenient readers (the shapes the Json::Value readers took with *Or): anything else is skipped.
  void StrOr(std::string* out);
  void IntOr(long long* out);
  void DoubleOr(double* out);
  // Objects and arrays: `member(key, at)` / `element(at)` read each member / element; false when
  // the value is not one (an error unless it is null).
  // Opens the object or array (`want`) at the cursor: a null reads as absent (false, no error),
  // another value is an error.
  bool Open(const At& at, JsonCursor::Kind want);
  template <typename Fn>
  bool Object(const At& at, Fn&& member);
  template <typename Fn>
  bool Array(const At& at, Fn&& element);

  bool Message(const At& at, lousho::agent::Message* m);
  bool Content(const At& at, std::vector<ContentBlock>* out);
  bool Block(const At& at, ContentBlock* b);
  void Usage(lousho::agent::Usage* u);
  void Display(ToolDisplay* t);
  void Location(ToolDisplay* t);  // one element of "locations"
  void Diff(ToolDisplay* t);      // one element of "diffs"
  // A message's or an entry's members as read, before its role or type says which count.
  struct MessageFields;
  struct EntryFields;
  void MessageMember(std::string_view key, const At& at, lousho::agent::Message* m,
                     MessageFields* x);
  bool AssembleMessage(const At& at, const MessageFields& x, lousho::agent::Message* m);
  void EntryMember(std::string_view key, const At& at, Entry* e, EntryFields* x);
  Status AssembleEntry(const At& root, EntryFields& x, Entry* e);

  JsonCursor c_;
  std::string key_;
  std::string error_;
};

bool LineDecoder::Str(const At& at, std::string* out) {
  switch (c_.Peek()) {
    case JsonCursor::Kind::kString:
      return c_.String(out);
    case JsonCursor::Kind::kNull:
      c_.Null();
      return false;
    case JsonCursor::Kind::kObject:
    case JsonCursor::Kind::kArray:
    case JsonCursor::Kind::kNumber:
    case JsonCursor::Kind::kBool:
    case JsonCursor::Kind::kNone:
      break;
  }
  return Fail(at, "expected string");
}

bool LineDecoder::Bool(const At& at, bool* out) {
  Json::Value v;
  if (!c_.Value(&v) || v.isNull()) return false;
  if (auto b = AsBool(v)) {
    *out = *b;
    return true;
  }
  return Fail(at, "expected boolean");
}

bool LineDecoder::Int(const At& at, long long* out) {
  Json::Value v;
  if (!c_.Value(&v) || v.isNull()) return false;
  if (auto n = AsInt64(v)) {
    *out = *n;
    return true;
  }
  const double d = AsDouble(v).value_or(0.5);  // 0.5: not a number, not whole either
  const bool whole = v.isUInt64() || (v.isDouble() && std::isfinite(d) && std::floor(d) == d);
  return Fail(at, whole ? "integer out of range" : "expected integer");
}

void LineDecoder::StrOr(std::string* out) {
  if (c_.Peek() == JsonCursor::Kind::kString)
    c_.String(out);
  else
    c_.Skip();
}

void LineDecoder::IntOr(long long* out) {
  Json::Value v;
  if (c_.Value(&v))
    if (auto n = AsInt64(v)) *out = *n;
}

void LineDecoder::DoubleOr(double* out) {
  Json::Value v;
  if (c_.Value(&v))
    if (auto d = AsDouble(v)) *out = *d;
}

bool LineDecoder::Open(const At& at, JsonCursor::Kind want) {
  const JsonCursor::Kind kind = c_.Peek();
  if (kind == want) return want == JsonCursor::Kind::kObject ? c_.BeginObject() : c_.BeginArray();
  if (kind == JsonCursor::Kind::kNull) {
    c_.Null();
    return false;
  }
  c_.Skip();
  return Fail(at, want == JsonCursor::Kind::kObject ? "expected object" : "expected array");
}

template <typename Fn>
bool LineDecoder::Object(const At& at, Fn&& member) {
  if (!Open(at, JsonCursor::Kind::kObject)) return false;
  std::string key;
  while (ok() && c_.NextMember(&key)) member(std::string_view(key), at.Member(key));
  return ok();
}

template <typename Fn>
bool LineDecoder::Array(const At& at, Fn&& element) {
  if (!Open(at, JsonCursor::Kind::kArray)) return false;
  for (long i = 0; ok() && c_.NextElement(); ++i) element(at.Element(i));
  return ok();
}

bool LineDecoder::Block(const At& at, ContentBlock* b) {
  std::string type, text, thinking, signature, id, name, data, mime;
  bool has_type = false, has_text = false, has_thinking = false, has_id = false, has_name = false,
       has_data = false, has_mime = false, redacted = false;
  Json::Value args;
  if (!Object(at, [&](std::string_view k, const At& m) {
        if (k == "type") {
          has_type = Str(m, &type);
        } else if (k == "text") {
          has_text = Str(m, &text);
        } else if (k == "thinking") {
          has_thinking = Str(m, &thinking);
        } else if (k == "thinkingSignature") {
          Str(m, &signature);
        } else if (k == "redacted") {
          Bool(m, &redacted);
        } else if (k == "id") {
          has_id = Str(m, &id);
        } else if (k == "name") {
          has_name = Str(m, &name);
        } else if (k == "arguments") {
          c_.Value(&args);
        } else if (k == "data") {
          has_data = Str(m, &data);
        } else if (k == "mimeType") {
          has_mime = Str(m, &mime);
        } else {
          c_.Skip();
        }
      })) {
    return ok() ? Fail(at, "expected object") : false;
  }
  auto need = [&](bool has, const char* key) { return has || Fail(at.Member(key), "required"); };
  if (!need(has_type, "type")) return false;
  if (type == "text") {
    if (!need(has_text, "text")) return false;
    *b = ContentBlock::Text(std::move(text));
  } else if (type == "thinking") {
    if (!need(has_thinking, "thinking")) return false;
    *b = ContentBlock::Thinking(std::move(thinking), std::move(signature));
    b->redacted = redacted;
  } else if (type == "toolCall") {
    if (!need(has_id, "id") || !need(has_name, "name")) return false;
    *b = ContentBlock::ToolCall(std::move(id), std::move(name),
                                args.isNull() ? Json::Value(Json::objectValue) : std::move(args));
  } else if (type == "image") {
    if (!need(has_data, "data") || !need(has_mime, "mimeType")) return false;
    *b = ContentBlock::Image(std::move(mime), std::move(data));
  } else {
    return Fail(at.Member("type"), ("unknown block type '" + type + "'").c_str());
  }
  return true;
}

bool LineDecoder::Content(const At& at, std::vector<ContentBlock>* out) {
  out->clear();
  switch (c_.Peek()) {
    case JsonCursor::Kind::kNull:
      c_.Null();
      return true;
    case JsonCursor::Kind::kString: {
      std::string text;
      c_.String(&text);
      out->push_back(ContentBlock::Text(std::move(text)));
      return ok();
    }
    case JsonCursor::Kind::kArray:
      return Array(at, [&](const At& e) {
        ContentBlock b;
        if (Block(e, &b)) out->push_back(std::move(b));
      });
    case JsonCursor::Kind::kObject:
    case JsonCursor::Kind::kNumber:
    case JsonCursor::Kind::kBool:
    case JsonCursor::Kind::kNone:
      break;
  }
  c_.Skip();
  return Fail(at, "expected string or array");
}

void LineDecoder::Usage(lousho::agent::Usage* u) {
  const At none{nullptr, ""};
  Object(none, [&](std::string_view k, const At&) {
    if (k == "input") {
      IntOr(&u->input);
    } else if (k == "output") {
      IntOr(&u->output);
    } else if (k == "cacheRead") {
      IntOr(&u->cache_read);
    } else if (k == "cacheWrite") {
      IntOr(&u->cache_write);
    } else if (k == "cost" && c_.Peek() == JsonCursor::Kind::kObject) {
      Object(none, [&](std::string_view ck, const At&) {
        if (ck == "total")
          DoubleOr(&u->cost);
        else
          c_.Skip();
      });
    } else {
      c_.Skip();
    }
  });
}

void LineDecoder::Location(ToolDisplay* t) {
  const At none{nullptr, ""};
  if (c_.Peek() != JsonCursor::Kind::kObject) {
    c_.Skip();
    return;
  }
  ToolLocation loc;
  long long line = 0;
  Object(none, [&](std::string_view k, const At&) {
    if (k == "path")
      StrOr(&loc.path);
    else if (k == "line")
      IntOr(&line);
    else
      c_.Skip();
  });
  loc.line = line > 0 && line < (1LL << 31) ? static_cast<int>(line) : 0;
  if (!loc.path.empty()) t->locations.push_back(std::move(loc));
}

void LineDecoder::Diff(ToolDisplay* t) {
  const At none{nullptr, ""};
  if (c_.Peek() != JsonCursor::Kind::kObject) {
    c_.Skip();
    return;
  }
  FileDiff diff;
  Object(none, [&](std::string_view k, const At&) {
    if (k == "path") {
      StrOr(&diff.path);
    } else if (k == "newText") {
      StrOr(&diff.new_text);
    } else if (k == "oldText" && c_.Peek() == JsonCursor::Kind::kString) {
      diff.old_text.emplace();
      c_.String(&*diff.old_text);
    } else {
      c_.Skip();
    }
  });
  t->diffs.push_back(std::move(diff));
}

void LineDecoder::Display(ToolDisplay* t) {
  const At none{nullptr, ""};
  std::string kind = "other";
  Object(none, [&](std::string_view k, const At&) {
    if (k == "title") {
      StrOr(&t->title);
    } else if (k == "kind") {
      StrOr(&kind);
    } else if (k == "args") {
      c_.Value(&t->args);
    } else if (k == "terminalId") {
      StrOr(&t->terminal_id);
    } else if (k == "locations" && c_.Peek() == JsonCursor::Kind::kArray) {
      Array(none, [&](const At&) { Location(t); });
    } else if (k == "diffs" && c_.Peek() == JsonCursor::Kind::kArray) {
      Array(none, [&](const At&) { Diff(t); });
    } else {
      c_.Skip();
    }
  });
  t->kind = ParseToolKindId(kind);
}

struct LineDecoder::MessageFields {
  std::string role, stop = "stop";
  bool has_role = false, has_custom_type = false, has_call_id = false, has_tool_name = false;
  std::optional<bool> display_flag;
  bool display_object = false;
  ToolDisplay display;
  Json::Value details;
};

void LineDecoder::MessageMember(std::string_view k, const At& f, lousho::agent::Message* m,
                                MessageFields* x) {
  if (k == "role") {
    x->has_role = Str(f, &x->role);
  } else if (k == "content") {
    Content(f, &m->content);
  } else if (k == "timestamp") {
    Int(f, &m->timestamp_ms);
  } else if (k == "customType") {
    x->has_custom_type = Str(f, &m->custom_type);
  } else if (k == "display") {
    // A custom message's flag, a tool result's display: which one is decided by the role.
    x->display_object = c_.Peek() == JsonCursor::Kind::kObject;
    bool flag = true;
    if (x->display_object)
      Display(&x->display);
    else if (Bool(f, &flag))
      x->display_flag = flag;
  } else if (k == "provider") {
    Str(f, &m->provider);
  } else if (k == "model") {
    Str(f, &m->model);
  } else if (k == "usage") {
    if (c_.Peek() == JsonCursor::Kind::kObject)
      Usage(&m->usage);
    else if (!c_.Null())
      Fail(f, "expected object");
  } else if (k == "stopReason") {
    Str(f, &x->stop);
  } else if (k == "errorMessage") {
    Str(f, &m->error_message);
  } else if (k == "toolCallId") {
    x->has_call_id = Str(f, &m->tool_call_id);
  } else if (k == "toolName") {
    x->has_tool_name = Str(f, &m->tool_name);
  } else if (k == "isError") {
    Bool(f, &m->is_error);
  } else if (k == "details") {
    c_.Value(&x->details);
  } else {
    c_.Skip();
  }
}

bool LineDecoder::AssembleMessage(const At& at, const MessageFields& x, lousho::agent::Message* m) {
  if (!x.has_role) return Fail(at.Member("role"), "required");
  if (x.role == "user") {
    m->role = Role::kUser;
  } else if (x.role == "custom") {
    m->role = Role::kUser;
    if (!x.has_custom_type) return Fail(at.Member("customType"), "required");
    if (x.display_object) return Fail(at.Member("display"), "expected boolean");
    m->display = x.display_flag.value_or(true);
  } else if (x.role == "assistant") {
    m->role = Role::kAssistant;
    m->stop_reason = ParseStopReasonId(x.stop).value_or(StopReason::kEndTurn);
  } else if (x.role == "toolResult") {
    m->role = Role::kToolResult;
    if (!x.has_call_id) return Fail(at.Member("toolCallId"), "required");
    if (!x.has_tool_name) return Fail(at.Member("toolName"), "required");
    if (x.display_flag) return Fail(at.Member("display"), "expected object");
  } else {
    return Fail(at.Member("role"), ("unknown role '" + x.role + "'").c_str());
  }
  return true;
}

bool LineDecoder::Message(const At& at, lousho::agent::Message* m) {
  MessageFields x;
  if (!Object(at, [&](std::string_view k, const At& f) { MessageMember(k, f, m, &x); }))
    return false;
  if (!AssembleMessage(at, x, m)) return false;
  if (m->role == Role::kToolResult) {
    m->tool = std::move(x.display);
    m->tool.details = std::move(x.details);
  }
  // Fields of the other roles stay out of this one.
  if (m->role != Role::kAssistant) {
    m->provider.clear();
    m->model.clear();
    m->usage = {};
    m->error_message.clear();
  }
  if (x.role != "custom") m->custom_type.clear();
  if (m->role != Role::kToolResult) {
    m->tool_call_id.clear();
    m->tool_name.clear();
    m->is_error = false;
  }
  return true;
}

struct LineDecoder::EntryFields {
  std::string type, timestamp, thinking = "off", from = "root";
  bool has_type = false, has_id = false, has_message = false, has_provider = false,
       has_model = false, has_mode = false, has_custom_type = false, has_target = false,
       has_summary = false, has_rules = false;
  Json::Value data, details;
};

void LineDecoder::EntryMember(std::string_view k, const At& f, Entry* e, EntryFields* x) {
  if (k == "type") {
    x->has_type = Str(f, &x->type);
  } else if (k == "id") {
    x->has_id = Str(f, &e->id);
  } else if (k == "parentId") {
    Str(f, &e->parent_id);
  } else if (k == "timestamp") {
    if (Str(f, &x->timestamp)) e->timestamp_ms = ParseIsoTimestamp(x->timestamp);
  } else if (k == "message") {
    if (c_.Peek() == JsonCursor::Kind::kObject)
      x->has_message = Message(f, &e->message);
    else if (!c_.Null())
      Fail(f, "expected object");
  } else if (k == "provider") {
    x->has_provider = Str(f, &e->provider);
  } else if (k == "modelId") {
    x->has_model = Str(f, &e->model_id);
  } else if (k == "thinkingLevel") {
    Str(f, &x->thinking);
  } else if (k == "mode") {
    x->has_mode = Str(f, &e->mode);
  } else if (k == "customType") {
    x->has_custom_type = Str(f, &e->custom_type);
  } else if (k == "data") {
    c_.Value(&x->data);
  } else if (k == "details") {
    c_.Value(&x->details);
  } else if (k == "targetId") {
    x->has_target = Str(f, &e->target_id);
  } else if (k == "label") {
    Str(f, &e->label);
  } else if (k == "summary") {
    x->has_summary = Str(f, &e->summary);
  } else if (k == "firstKeptEntryId") {
    Str(f, &e->first_kept_id);
  } else if (k == "tokensBefore") {
    Int(f, &e->tokens_before);
  } else if (k == "fromId") {
    Str(f, &x->from);
  } else if (k == "name") {
    Str(f, &e->name);
  } else if (k == "injectedRules") {
    x->has_rules = Array(f, [&](const At&) {
      std::string rule;
      if (c_.Peek() == JsonCursor::Kind::kString && c_.String(&rule))
        e->rules.push_back(std::move(rule));
      else
        c_.Skip();
    });
  } else {
    c_.Skip();
  }
}

Status LineDecoder::ReadEntry(const std::string& where, Entry* out) {
  const At root{nullptr, where};
  EntryFields x;
  if (Object(root, [&](std::string_view k, const At& f) { EntryMember(k, f, out, &x); })) c_.End();
  if (!ok()) return Invalid(error());
  return AssembleEntry(root, x, out);
}

Status LineDecoder::AssembleEntry(const At& root, EntryFields& x, Entry* out) {
  Entry& e = *out;
  auto need = [&](bool has, const char* key) { return has || Fail(root.Member(key), "required"); };
  if (!need(x.has_type, "type") || !need(x.has_id, "id")) return Invalid(error());
  bool known = false;
  for (const auto& k : kKindNames)
    if (x.type == k.name) {
      e.kind = k.kind;
      known = true;
    }
  if (!known) return Invalid(root.Str() + ".type: unknown entry type '" + x.type + "'");
  bool complete = true;
  switch (e.kind) {
    case EntryKind::kMessage:
      complete = need(x.has_message, "message");
      break;
    case EntryKind::kModelChange:
      complete = need(x.has_provider, "provider") && need(x.has_model, "modelId");
      break;
    case EntryKind::kThinkingChange:
      e.thinking_level = std::move(x.thinking);
      break;
    case EntryKind::kModeChange:
      complete = need(x.has_mode, "mode");
      break;
    case EntryKind::kCustom:
      complete = need(x.has_custom_type, "customType");
      e.data = std::move(x.data);
      break;
    case EntryKind::kLabel:
      complete = need(x.has_target, "targetId");
      break;
    case EntryKind::kCompaction:
      complete = need(x.has_summary, "summary");
      e.data = std::move(x.details);
      break;
    case EntryKind::kBranchSummary:
      complete = need(x.has_summary, "summary");
      e.from_id = x.from == "root" ? std::string() : std::move(x.from);
      e.data = std::move(x.details);
      break;
    case EntryKind::kSessionInfo:
      break;
    case EntryKind::kTtsrInjection:
      complete = need(x.has_rules, "injectedRules");
      break;
  }
  if (!complete) return Invalid(error());
  // Fields of the other kinds stay out of this one.
  if (e.kind != EntryKind::kMessage) e.message = {};
  if (e.kind != EntryKind::kModelChange) {
    e.provider.clear();
    e.model_id.clear();
  }
  if (e.kind != EntryKind::kModeChange) e.mode.clear();
  if (e.kind != EntryKind::kCustom) e.custom_type.clear();
  if (e.kind != EntryKind::kLabel) {
    e.target_id.clear();
    e.label.clear();
  }
  if (e.kind != EntryKind::kCompaction && e.kind != EntryKind::kBranchSummary) e.summary.clear();
  if (e.kind != EntryKind::kCompaction) {
    e.first_kept_id.clear();
    e.tokens_before = 0;
  }
  if (e.kind != EntryKind::kSessionInfo) e.name.clear();
  if (e.kind != EntryKind::kTtsrInjection) e.rules.clear();
  return Status::Ok();
}
}  // namespace

Status DecodeEntryLine(std::string_view line, const std::string& where, Entry* out) {
  LineDecoder fast(line);
  Status read = fast.ReadEntry(where, out);
  if (!fast.syntax_error()) return read;
  // Not JSON the cursor takes (it reads strict JSON only): what ParseJson accepts is written
  // back in the one form the cursor reads, and read again; what it refuses is the error.
  auto json = ParseJson(line);
  if (!json.ok()) return Invalid(where + ": " + json.error().message);
  const std::string normal = WriteJson(*json);
  *out = Entry();
  return LineDecoder(normal).ReadEntry(where, out);
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

Result<ContentBlock> ContentBlockFromJson(const Json::Value& v, const std::string& where) {
  const std::string text = WriteJson(v);
  return LineDecoder(text).ReadBlock(where);
}

}  // namespace lousho::agent
