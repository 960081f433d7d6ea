// The one JSON writer: compact JSON streamed into a std::string, byte for byte what jsoncpp's
// writer writes for the same value with the project's settings (no indentation, non-ASCII as
// \uXXXX escapes, invalid UTF-8 read the way jsoncpp reads it, 17 significant digits for
// doubles). WriteJson (support/json_util.h) is this writer over a Json::Value; the hot paths
// (provider request bodies, ACP chunks, RPC message_update lines) write through it without
// building one (tests/core/json_writer_test.cpp compares it with jsoncpp).
#pragma once

#include <json/json.h>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace lousho {

// Appends `s` as a quoted JSON string, escaped as the writer escapes every string.
void AppendJsonString(std::string_view s, std::string* out);

// Writes one JSON value (a scalar, or an object or array opened and closed by the calls that
// follow) at the end of *out. Members are written in the order they are given: a caller that
// wants jsoncpp's bytes gives them in its (sorted) order. Commas and colons are the writer's.
// In builds with assertions (no NDEBUG) every call is checked against the nesting so far (a
// member outside an object, a value where a key is due, a close without its open, a second
// top-level value); a wrong call aborts with what was wrong. Not thread-safe.
class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;
#ifdef NDEBUG
  ~JsonWriter() = default;
#else
  ~JsonWriter();  // checks that every object, array and member was closed
#endif

  void Value(std::string_view s) {
    BeginValue();
    AppendJsonString(s, out_);
  }
  void Value(const char* s) { Value(std::string_view(s)); }
  void Value(const std::string& s) { Value(std::string_view(s)); }
  void Value(bool b) {
    BeginValue();
    out_->append(b ? "true" : "false");
  }
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  void Value(T n) {
    BeginValue();
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, n);
    out_->append(buf, static_cast<size_t>(r.ptr - buf));
  }
  void Value(double d);
  void Value(std::nullptr_t) {
    BeginValue();
    out_->append("null");
  }
  // A DOM value, members in jsoncpp's order. A string value without storage (jsoncpp writes
  // nothing for it, leaving the line invalid) is written as "".
  void Value(const Json::Value& v);
  // JSON text written elsewhere, taken as one value as it is (not checked).
  void RawValue(std::string_view json) {
    BeginValue();
    out_->append(json);
  }

  void ObjectBegin() { Open('{', kObject); }
  void ObjectEnd() { Close('}', kObject); }
  void ArrayBegin() { Open('[', kArray); }
  void ArrayEnd() { Close(']', kArray); }

  // A member of the object being written: its key, then exactly one value, then AttributeEnd.
  void AttributeBegin(std::string_view key) {
    Check(kObject, "a member outside an object");
    if (comma_) out_->push_back(',');
    AppendJsonString(key, out_);
    out_->push_back(':');
    comma_ = false;
    Push(kAttribute);
  }
  void AttributeEnd() {
    Check(kAttribute, "AttributeEnd without AttributeBegin");
    Pop(true);
  }
  template <typename T>
  void Attribute(std::string_view key, const T& v) {
    AttributeBegin(key);
    Value(v);
    AttributeEnd();
  }

 private:
  enum Context : uint8_t { kTop, kObject, kArray, kAttribute };

  void BeginValue() {
    CheckValueAllowed();
    if (comma_) out_->push_back(',');
    comma_ = true;
  }
  void Open(char c, Context ctx) {
    BeginValue();
    out_->push_back(c);
    comma_ = false;
    Push(ctx);
  }
  void Close(char c, Context ctx) {
    Check(ctx, c == '}' ? "ObjectEnd outside an object" : "ArrayEnd outside an array");
    out_->push_back(c);
    comma_ = true;
    Pop(false);
  }
  void WriteDom(const Json::Value& v);

#ifdef NDEBUG
  void CheckValueAllowed() {}
  void Check(Context, const char*) {}
  void Push(Context) {}
  void Pop(bool) {}
#else
  // The nesting so far; `valued_` says whether the innermost level holds a value yet (the top
  // and a member take one).
  void CheckValueAllowed();
  void Check(Context want, const char* what) const;
  void Push(Context ctx);
  void Pop(bool member);
  std::vector<Context> stack_{kTop};
  bool valued_ = false;
#endif

  std::string* out_;
  bool comma_ = false;  // the next item of the innermost array or object needs a ','
};

// `v` when it is an object, else {}: a tool call's arguments as an API wants them.
inline void WriteObjectOrEmpty(const Json::Value& v, JsonWriter* w) {
  if (v.isObject()) {
    w->Value(v);
    return;
  }
  w->ObjectBegin();
  w->ObjectEnd();
}

}  // namespace lousho
