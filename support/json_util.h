// JSON helpers: strict parsing, one-line writing, and a typed field reader that reports paths.
#pragma once

#include <json/json.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/json_writer.h"
#include "support/status.h"

namespace lousho {

// The deepest nesting ParseJson accepts; deeper input is a parse error.
inline constexpr int kMaxJsonDepth = 512;

// Parses one JSON document strictly (no comments, no trailing garbage).
Result<Json::Value> ParseJson(std::string_view text);
// Writes compact one-line JSON (non-ASCII escaped, invalid UTF-8 replaced): the one JsonWriter
// (support/json_writer.h, which also has AppendJsonString) over the value, byte for byte what
// jsoncpp's writer writes for it.
std::string WriteJson(const Json::Value& v);
// Decodes the body of a JSON string that starts just after its opening quote, exactly as
// ParseJson reads it (escapes, \uXXXX with surrogate pairs, other bytes as they are). Appends the
// text to *out and returns the bytes consumed including the closing quote; 0 when the body is
// malformed (a bad escape, no closing quote), with *out holding what was read so far.
size_t ReadJsonStringBody(std::string_view from, std::string* out);

// The length of the JSON scalar (string, number, true, false, null) that `from` starts with, or 0
// when it starts with anything else (an object, an array, no value).
size_t SkipJsonScalar(std::string_view from);

// A pull reader over JSON text, for the hot paths that know the shape they read (session file
// lines): it decodes straight into the caller's fields and builds a Json::Value only where asked.
// Strict JSON (RFC 8259 numbers, no comments, nesting up to kMaxJsonDepth); whatever it accepts,
// ParseJson accepts with the same value (ParseJson also wants an object or array at the top)
// (tests/core/json_cursor_test.cpp, and the json_cursor fuzz target). Never throws. The first
// syntax error stops it: ok() turns false, error() says what and at which byte, and every later
// call fails.
class JsonCursor {
 public:
  enum class Kind { kObject, kArray, kString, kNumber, kBool, kNull, kNone };
  explicit JsonCursor(std::string_view text) : text_(text) {}

  // The kind of the value at the cursor (kNone past the end or after an error).
  Kind Peek();
  // Objects: BeginObject consumes '{'; each NextMember then reads the next key into *key and
  // leaves the cursor on its value (which the caller must read or Skip), or consumes the closing
  // '}' and returns false (also on an error: check ok()).
  bool BeginObject();
  bool NextMember(std::string* key);
  // Arrays alike: NextElement is true when an element follows (the cursor is on it).
  bool BeginArray();
  bool NextElement();
  bool String(std::string* out);  // replaces *out
  bool Value(Json::Value* out);   // any value, built as ParseJson builds it
  bool Skip();                    // any value
  bool Null();                    // consumes a null; false (no error) when the value is not one
  bool End();                     // nothing but whitespace remains

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  size_t offset() const { return pos_; }  // bytes read so far

 private:
  void SkipSpace();
  bool Fail(const char* what);
  bool Expect(char c, const char* what);
  bool Begin(char open, const char* expected);
  // After an item of the innermost object or array: 1 when another follows (its ',' read), 0
  // when `close` ended it, -1 on an error.
  int Continue(char close, const char* expected);
  bool Number(Json::Value* out);  // null: read and checked, not built
  bool Word(std::string_view word);
  bool Build(Json::Value* out);

  std::string_view text_;
  size_t pos_ = 0;
  std::vector<bool> seen_;  // per open object or array: whether an item was read (a ',' is due)
  std::string scratch_;
  std::string error_;
};

// Whether `v` written as compact JSON (WriteJson) takes at most max_bytes, counted from above
// without writing it (non-ASCII as its escapes at most take) and stopping as soon as it is over:
// the work is bounded by max_bytes, however large `v` is.
bool JsonFitsIn(const Json::Value& v, size_t max_bytes);

// Multi-line, indented (for files a person reads).
std::string WriteJsonPretty(const Json::Value& v);

// The member `key` of an object, or null when absent (or when `obj` is not an object). Never
// inserts, unlike jsoncpp's non-const operator[].
const Json::Value* FindMember(const Json::Value& obj, std::string_view key);

// Throw-free accessors: jsoncpp's as*() throw on a type or range mismatch, so values from a
// client, a model server or a file are read only through these (scripts/lint enforces it).
// Each returns nullopt when the value is not of the type or not representable.
std::optional<long long> AsInt64(const Json::Value& v);  // integers, and whole doubles in range
std::optional<unsigned long long> AsUInt64(const Json::Value& v);  // non-negative integers
std::optional<double> AsDouble(const Json::Value& v);
std::optional<std::string> AsString(const Json::Value& v);
std::optional<bool> AsBool(const Json::Value& v);
// The member `key` of `obj` as that type, or `fallback` when absent or of another type.
std::string StringOr(const Json::Value& obj, std::string_view key, std::string fallback = {});
long long IntOr(const Json::Value& obj, std::string_view key, long long fallback);
double DoubleOr(const Json::Value& obj, std::string_view key, double fallback);
bool BoolOr(const Json::Value& obj, std::string_view key, bool fallback);
// The member or a null value (never inserts, never throws).
const Json::Value& MemberOrNull(const Json::Value& obj, std::string_view key);
// Element `i` of an array, or a null value when `array` is not one or is shorter.
const Json::Value& ElementOrNull(const Json::Value& array, Json::ArrayIndex i);
// The member names of an object in jsoncpp's (sorted) order; none for any other value.
std::vector<std::string> MemberNames(const Json::Value& obj);
// A string's own text; any other value written as compact JSON (tool arguments arrive both ways).
std::string StringOrJson(const Json::Value& v);

// Reads integers that must lie within bounds the caller gives, from the objects of one message
// (e.g. one stream event). Absent or null members read as the fallback; anything else outside
// the bounds (a string, a fraction, 1e30) is kept as the first error, naming `where` and the key,
// and also reads as the fallback. Not thread-safe.
class IntReader {
 public:
  explicit IntReader(std::string where) : where_(std::move(where)) {}

  long long Int(const Json::Value& obj, std::string_view key, long long lo, long long hi,
                long long fallback);

  bool ok() const { return error_.empty(); }
  // E.g. "bad number in message_delta: output_tokens is -1, expected an integer from 0 to 9".
  const std::string& error() const { return error_; }

 private:
  std::string where_;
  std::string error_;
};

// Reads fields of an object, checking types before jsoncpp can throw; the first problem is kept
// with its path (e.g. "params.sessionId: expected string"). Not thread-safe.
class FieldReader {
 public:
  FieldReader(const Json::Value& obj, std::string path);
  bool is_object() const { return obj_.isObject(); }
  const Json::Value& value() const { return obj_; }

  std::optional<std::string> String(const char* key, bool required);
  std::optional<long long> Int(const char* key, bool required);  // within int64
  std::optional<double> Double(const char* key, bool required);
  std::optional<bool> Bool(const char* key, bool required);
  // Any JSON type; required means present and not null.
  const Json::Value* Any(const char* key, bool required);
  const Json::Value* Object(const char* key, bool required);
  const Json::Value* Array(const char* key, bool required);
  std::string Path(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  void Fail(std::string msg) {
    if (error_.empty()) error_ = std::move(msg);
  }

 private:
  const Json::Value* Get(const char* key, bool required);
  const Json::Value& obj_;
  std::string path_;
  std::string error_;
};

}  // namespace lousho
