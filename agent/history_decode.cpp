// The history's codec, reading (docs/session-format.md): a pull decoder over each line's text
// (JsonCursor) puts fields straight into the Entry and builds a Json::Value only for free-form
// members (tool arguments, details, data). Members come in any order, unknown ones are skipped,
// what a field must be is checked once the object is read; errors name the path as FieldReader
// does ("<where>.message.content[0].type: required").
#include <cmath>
#include <optional>

#include "agent/history.h"
#include "support/json_util.h"

namespace lousho::agent {
namespace {
Error Invalid(const std::string& message) { return MakeError(ErrorCode::kHistoryInvalid, message); }

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

const At kNowhere{nullptr, ""};  // where the lenient readers read (they report no error)

class LineDecoder {
 public:
  explicit LineDecoder(std::string_view text) : c_(text) {}

  // Whether the line was not JSON (a cursor error) rather than JSON of the wrong shape.
  bool syntax_error() const { return !c_.ok(); }
  bool ok() const { return c_.ok() && error_.empty(); }
  std::string error() const { return c_.ok() ? error_ : "invalid JSON: " + c_.error(); }

  Status ReadEntry(const std::string& where, Entry* out);  // into a fresh Entry
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
  // Opens the object or array (`want`) at the cursor: a null reads as absent (false, no error),
  // another value is an error. Object / Array then read each member (`member(key, at)`) or
  // element (`element(at)`).
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
  Object(kNowhere, [&](std::string_view k, const At&) {
    if (k == "input") {
      IntOr(&u->input);
    } else if (k == "output") {
      IntOr(&u->output);
    } else if (k == "cacheRead") {
      IntOr(&u->cache_read);
    } else if (k == "cacheWrite") {
      IntOr(&u->cache_write);
    } else if (k == "cost" && c_.Peek() == JsonCursor::Kind::kObject) {
      Object(kNowhere, [&](std::string_view ck, const At&) {
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
  if (c_.Peek() != JsonCursor::Kind::kObject) {
    c_.Skip();
    return;
  }
  ToolLocation loc;
  long long line = 0;
  Object(kNowhere, [&](std::string_view k, const At&) {
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
  if (c_.Peek() != JsonCursor::Kind::kObject) {
    c_.Skip();
    return;
  }
  FileDiff diff;
  Object(kNowhere, [&](std::string_view k, const At&) {
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
  std::string kind = "other";
  Object(kNowhere, [&](std::string_view k, const At&) {
    if (k == "title") {
      StrOr(&t->title);
    } else if (k == "kind") {
      StrOr(&kind);
    } else if (k == "args") {
      c_.Value(&t->args);
    } else if (k == "terminalId") {
      StrOr(&t->terminal_id);
    } else if (k == "locations" && c_.Peek() == JsonCursor::Kind::kArray) {
      Array(kNowhere, [&](const At&) { Location(t); });
    } else if (k == "diffs" && c_.Peek() == JsonCursor::Kind::kArray) {
      Array(kNowhere, [&](const At&) { Diff(t); });
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
  const std::optional<EntryKind> kind = ParseEntryKindName(x.type);
  if (kind) e.kind = *kind;
  if (!kind) return Invalid(root.Str() + ".type: unknown entry type '" + x.type + "'");
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

Result<ContentBlock> ContentBlockFromJson(const Json::Value& v, const std::string& where) {
  const std::string text = WriteJson(v);
  return LineDecoder(text).ReadBlock(where);
}

}  // namespace lousho::agent
