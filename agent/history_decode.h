// The history's codec, reading: the line decoder that history_decode.cpp (entries) and
// history_decode_message.cpp (messages, content blocks, tool displays) share, with its typed
// readers inline (they run for every field of every line). Included by those two files only.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/history.h"
#include "support/json_util.h"

namespace lousho::agent::history_decode {
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

  Status ReadEntry(const std::string& where, Entry* out);  // into a fresh Entry
  Result<ContentBlock> ReadBlock(const std::string& where);

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
  struct BlockFields;  // a content block's members as read, before its type says which count
  void BlockMember(std::string_view key, const At& at, BlockFields* x);
  bool AssembleBlock(const At& at, BlockFields& x, ContentBlock* b);
  bool AssembleCall(const At& at, BlockFields& x, ContentBlock* b);
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
  bool KindMember(std::string_view key, const At& at, Entry* e, EntryFields* x);
  bool Rules(const At& at, std::vector<std::string>* out);
  Status AssembleEntry(const At& root, EntryFields& x, Entry* e);

  JsonCursor c_;
  std::string error_;
};

inline bool LineDecoder::Str(const At& at, std::string* out) {
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

inline bool LineDecoder::Bool(const At& at, bool* out) {
  Json::Value v;
  if (!c_.Value(&v) || v.isNull()) return false;
  if (auto b = AsBool(v)) {
    *out = *b;
    return true;
  }
  return Fail(at, "expected boolean");
}

inline bool LineDecoder::Int(const At& at, long long* out) {
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

inline void LineDecoder::StrOr(std::string* out) {
  if (c_.Peek() == JsonCursor::Kind::kString)
    c_.String(out);
  else
    c_.Skip();
}

inline void LineDecoder::IntOr(long long* out) {
  Json::Value v;
  if (c_.Value(&v))
    if (auto n = AsInt64(v)) *out = *n;
}

inline void LineDecoder::DoubleOr(double* out) {
  Json::Value v;
  if (c_.Value(&v))
    if (auto d = AsDouble(v)) *out = *d;
}

inline bool LineDecoder::Open(const At& at, JsonCursor::Kind want) {
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
inline bool LineDecoder::Object(const At& at, Fn&& member) {
  if (!Open(at, JsonCursor::Kind::kObject)) return false;
  std::string key;
  while (ok() && c_.NextMember(&key)) member(std::string_view(key), at.Member(key));
  return ok();
}

template <typename Fn>
inline bool LineDecoder::Array(const At& at, Fn&& element) {
  if (!Open(at, JsonCursor::Kind::kArray)) return false;
  for (long i = 0; ok() && c_.NextElement(); ++i) element(at.Element(i));
  return ok();
}
}  // namespace lousho::agent::history_decode
