// The history's codec, reading (docs/session-format.md): a pull decoder over each line's text
// (JsonCursor) puts fields straight into the Entry and builds a Json::Value only for free-form
// members (tool arguments, details, data). Members come in any order, unknown ones are skipped,
// what a field must be is checked once the object is read; errors name the path as FieldReader
// does ("<where>.message.content[0].type: required").
#include "agent/history_decode.h"

namespace lousho::agent {
namespace history_decode {
namespace {
Error Invalid(const std::string& message) { return MakeError(ErrorCode::kHistoryInvalid, message); }
}  // namespace

struct LineDecoder::EntryFields {
  std::string type, timestamp, thinking = "off", from = "root";
  bool has_type = false, has_id = false, has_message = false, has_provider = false,
       has_model = false, has_mode = false, has_custom_type = false, has_target = false,
       has_summary = false, has_rules = false;
  Json::Value data, details;
};

// The members every entry has (and the message an entry of kind message holds).
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
  } else if (!KindMember(k, f, e, x)) {
    c_.Skip();
  }
}

// The members of the other kinds; false for a name no kind has (the caller skips its value).
bool LineDecoder::KindMember(std::string_view k, const At& f, Entry* e, EntryFields* x) {
  if (k == "provider") {
    x->has_provider = Str(f, &e->more.Edit().provider);
  } else if (k == "modelId") {
    x->has_model = Str(f, &e->more.Edit().model_id);
  } else if (k == "thinkingLevel") {
    Str(f, &x->thinking);
  } else if (k == "mode") {
    x->has_mode = Str(f, &e->more.Edit().mode);
  } else if (k == "customType") {
    x->has_custom_type = Str(f, &e->more.Edit().custom_type);
  } else if (k == "data") {
    c_.Value(&x->data);
  } else if (k == "details") {
    c_.Value(&x->details);
  } else if (k == "targetId") {
    x->has_target = Str(f, &e->more.Edit().target_id);
  } else if (k == "label") {
    Str(f, &e->more.Edit().label);
  } else if (k == "summary") {
    x->has_summary = Str(f, &e->more.Edit().summary);
  } else if (k == "firstKeptEntryId") {
    Str(f, &e->more.Edit().first_kept_id);
  } else if (k == "tokensBefore") {
    Int(f, &e->more.Edit().tokens_before);
  } else if (k == "fromId") {
    Str(f, &x->from);
  } else if (k == "name") {
    Str(f, &e->more.Edit().name);
  } else if (k == "injectedRules") {
    x->has_rules = Rules(f, &e->more.Edit().rules);
  } else {
    return false;
  }
  return true;
}

// An array of rule names; an element that is not a string is skipped.
bool LineDecoder::Rules(const At& at, std::vector<std::string>* out) {
  return Array(at, [&](const At&) {
    std::string rule;
    if (c_.Peek() == JsonCursor::Kind::kString && c_.String(&rule))
      out->push_back(std::move(rule));
    else
      c_.Skip();
  });
}

Status LineDecoder::ReadEntry(const std::string& where, Entry* out) {
  const At root{nullptr, where};
  EntryFields x;
  if (Object(root, [&](std::string_view k, const At& f) { EntryMember(k, f, out, &x); })) c_.End();
  if (!ok()) return Invalid(error());
  return AssembleEntry(root, x, out);
}

Result<ContentBlock> LineDecoder::ReadBlock(const std::string& where) {
  ContentBlock b;
  if (!Block(At{nullptr, where}, &b) || !c_.End()) return Invalid(error());
  return b;
}

namespace {
// Empties the fields of `d` that kind `k` does not have.
void ClearOtherKinds(EntryKind k, EntryDetail& d) {
  if (k != EntryKind::kModelChange) {
    d.provider.clear();
    d.model_id.clear();
  }
  if (k != EntryKind::kModeChange) d.mode.clear();
  if (k != EntryKind::kCustom) d.custom_type.clear();
  if (k != EntryKind::kLabel) {
    d.target_id.clear();
    d.label.clear();
  }
  if (k != EntryKind::kCompaction && k != EntryKind::kBranchSummary) d.summary.clear();
  if (k != EntryKind::kCompaction) {
    d.first_kept_id.clear();
    d.tokens_before = 0;
  }
  if (k != EntryKind::kSessionInfo) d.name.clear();
  if (k != EntryKind::kTtsrInjection) d.rules.clear();
}
}  // namespace

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
      e.more.Edit().thinking_level = std::move(x.thinking);
      break;
    case EntryKind::kModeChange:
      complete = need(x.has_mode, "mode");
      break;
    case EntryKind::kCustom:
      complete = need(x.has_custom_type, "customType");
      e.more.Edit().data = std::move(x.data);
      break;
    case EntryKind::kLabel:
      complete = need(x.has_target, "targetId");
      break;
    case EntryKind::kCompaction:
      complete = need(x.has_summary, "summary");
      e.more.Edit().data = std::move(x.details);
      break;
    case EntryKind::kBranchSummary:
      complete = need(x.has_summary, "summary");
      e.more.Edit().from_id = x.from == "root" ? std::string() : std::move(x.from);
      e.more.Edit().data = std::move(x.details);
      break;
    case EntryKind::kSessionInfo:
      break;
    case EntryKind::kTtsrInjection:
      complete = need(x.has_rules, "injectedRules");
      break;
  }
  if (!complete) return Invalid(error());
  // Fields of the other kinds stay out of this one.
  if (e.kind == EntryKind::kMessage) {
    e.more.Reset();  // a message holds none: one pointer, no allocation
  } else {
    e.message = {};
    if (e.more.has_value()) ClearOtherKinds(e.kind, e.more.Edit());
  }
  return Status::Ok();
}
}  // namespace history_decode

Status DecodeEntryLine(std::string_view line, const std::string& where, Entry* out) {
  history_decode::LineDecoder fast(line);
  Status read = fast.ReadEntry(where, out);
  if (!fast.syntax_error()) return read;
  // Not JSON the cursor takes (it reads strict JSON only): what ParseJson accepts is written
  // back in the one form the cursor reads, and read again; what it refuses is the error.
  auto json = ParseJson(line);
  if (!json.ok()) return history_decode::Invalid(where + ": " + json.error().message);
  const std::string normal = WriteJson(*json);
  *out = Entry();
  return history_decode::LineDecoder(normal).ReadEntry(where, out);
}

Result<ContentBlock> ContentBlockFromJson(const Json::Value& v, const std::string& where) {
  const std::string text = WriteJson(v);
  return history_decode::LineDecoder(text).ReadBlock(where);
}

}  // namespace lousho::agent
