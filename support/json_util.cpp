// JSON helpers.
#include "support/json_util.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>

namespace lousho {

namespace {
// Building a reader fills a settings object of a dozen members; a model stream parses one event
// per delta, so each thread builds its reader once. A reader resets itself at every parse.
Json::CharReader* ThreadReader() {
  thread_local std::unique_ptr<Json::CharReader> reader = [] {
    Json::CharReaderBuilder rb;
    Json::CharReaderBuilder::strictMode(&rb.settings_);
    rb.settings_["failIfExtra"] = true;
    rb.settings_["rejectDupKeys"] = false;
    rb.settings_["stackLimit"] = kMaxJsonDepth;
    return std::unique_ptr<Json::CharReader>(rb.newCharReader());
  }();
  return reader.get();
}
}  // namespace

Result<Json::Value> ParseJson(std::string_view text) {
  Json::CharReader* reader = ThreadReader();
  Json::Value out;
  std::string errs;
  bool parsed = false;
  try {
    parsed = reader->parse(text.data(), text.data() + text.size(), &out, &errs);
  } catch (const std::exception& e) {
    // jsoncpp throws instead of reporting when nesting exceeds stackLimit.
    return MakeError(ErrorCode::kJsonParse, std::string("invalid JSON: ") + e.what());
  }
  if (!parsed) {
    while (!errs.empty() && (errs.back() == '\n' || errs.back() == ' ')) errs.pop_back();
    for (auto& c : errs)
      if (c == '\n') c = ' ';
    return MakeError(ErrorCode::kJsonParse, errs.empty() ? "invalid JSON" : errs);
  }
  return out;
}

std::string WriteJson(const Json::Value& v) {
  std::string out;
  JsonWriter(&out).Value(v);
  return out;
}

namespace {
int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Four hex digits at from[i], or -1.
long Hex4(std::string_view from, size_t i) {
  if (from.size() - i < 4) return -1;
  long v = 0;
  for (size_t k = 0; k < 4; ++k) {
    const int d = HexDigit(from[i + k]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

void AppendUtf8(unsigned cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// The character a one-letter JSON escape stands for (\n, \t, \", ...); 0 for any other letter.
char SimpleJsonEscape(char e) {
  switch (e) {
    case '"':
    case '\\':
    case '/':
      return e;
    case 'b':
      return '\b';
    case 'f':
      return '\f';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    default:
      return 0;
  }
}

// The four hex digits of `\uXXXX` at from[i], appended as UTF-8: the index past them, or npos
// when malformed. A high surrogate takes the next \uXXXX as its low half, whatever it holds (as
// jsoncpp does); a lone low surrogate stands as it is.
size_t ReadUnicodeEscape(std::string_view from, size_t i, std::string* out) {
  long cp = Hex4(from, i);
  if (cp < 0) return std::string_view::npos;
  i += 4;
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (from.size() - i < 6 || from[i] != '\\' || from[i + 1] != 'u') return std::string_view::npos;
    const long low = Hex4(from, i + 2);
    if (low < 0) return std::string_view::npos;
    i += 6;
    cp = 0x10000 + ((cp & 0x3FF) << 10) + (low & 0x3FF);
  }
  AppendUtf8(static_cast<unsigned>(cp), out);
  return i;
}

// The escape whose letter is from[i] (past the backslash), appended: the index past it, or npos
// when it is not a JSON escape.
size_t ReadJsonEscape(std::string_view from, size_t i, std::string* out) {
  const char e = from[i++];
  if (e == 'u') return ReadUnicodeEscape(from, i, out);
  const char c = SimpleJsonEscape(e);
  if (c == 0) return std::string_view::npos;
  out->push_back(c);
  return i;
}
}  // namespace

size_t ReadJsonStringBody(std::string_view from, std::string* out) {
  if (from.empty()) return 0;
  const char* const base = from.data();
  size_t i = 0;
  size_t quote = 0;  // the next '"' at or after i (an escaped one moves it on); npos: none
  bool quote_known = false;
  for (;;) {
    // Runs without a quote or a backslash are copied at once (memchr scans wide); the quote is
    // looked for again only once an escaped one was passed, so escapes cost no rescans.
    if (!quote_known || (quote != std::string_view::npos && quote < i)) {
      const void* q = std::memchr(base + i, '"', from.size() - i);
      quote = q ? static_cast<size_t>(static_cast<const char*>(q) - base) : std::string_view::npos;
      quote_known = true;
    }
    const size_t stop = quote == std::string_view::npos ? from.size() : quote;
    const void* slash = std::memchr(base + i, '\\', stop - i);
    const size_t end = slash ? static_cast<size_t>(static_cast<const char*>(slash) - base) : stop;
    out->append(base + i, end - i);
    i = end;
    if (i == from.size()) return 0;
    if (from[i] == '"') return i + 1;
    if (++i == from.size()) return 0;
    i = ReadJsonEscape(from, i, out);
    if (i == std::string_view::npos) return 0;
  }
}

namespace {
// Where the whitespace JSON allows between tokens, at or after `pos`, ends.
size_t SkipJsonSpace(std::string_view text, size_t pos) {
  while (pos < text.size() &&
         (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' || text[pos] == '\r'))
    ++pos;
  return pos;
}
}  // namespace

void JsonCursor::SkipSpace() { pos_ = SkipJsonSpace(text_, pos_); }

bool JsonCursor::Fail(const char* what) {
  if (error_.empty()) error_ = std::string(what) + " at byte " + std::to_string(pos_);
  pos_ = text_.size();
  return false;
}

bool JsonCursor::Expect(char c, const char* what) {
  SkipSpace();
  if (pos_ < text_.size() && text_[pos_] == c) {
    ++pos_;
    return true;
  }
  return Fail(what);
}

JsonCursor::Kind JsonCursor::Peek() {
  SkipSpace();
  if (!ok() || pos_ >= text_.size()) return Kind::kNone;
  switch (text_[pos_]) {
    case '{':
      return Kind::kObject;
    case '[':
      return Kind::kArray;
    case '"':
      return Kind::kString;
    case 't':
    case 'f':
      return Kind::kBool;
    case 'n':
      return Kind::kNull;
    default:
      return text_[pos_] == '-' || (text_[pos_] >= '0' && text_[pos_] <= '9') ? Kind::kNumber
                                                                              : Kind::kNone;
  }
}

bool JsonCursor::Begin(char open, const char* expected) {
  if (!ok()) return false;
  // One level short of ParseJson's limit, which also counts the value inside the last level.
  if (seen_.size() + 1 >= static_cast<size_t>(kMaxJsonDepth)) return Fail("nesting too deep");
  if (!Expect(open, expected)) return false;
  seen_.push_back(false);
  return true;
}

bool JsonCursor::BeginObject() { return Begin('{', "expected '{'"); }

bool JsonCursor::BeginArray() { return Begin('[', "expected '['"); }

int JsonCursor::Continue(char close, const char* expected) {
  if (!ok() || seen_.empty()) {
    Fail("not in an object or array");
    return -1;
  }
  SkipSpace();
  if (pos_ < text_.size() && text_[pos_] == close) {
    ++pos_;
    seen_.pop_back();
    return 0;
  }
  if (seen_.back() && !Expect(',', expected)) return -1;
  seen_.back() = true;
  return 1;
}

bool JsonCursor::NextMember(std::string* key) {
  if (Continue('}', "expected ',' or '}'") <= 0) return false;
  SkipSpace();
  if (!String(key)) return false;
  return Expect(':', "expected ':'");
}

bool JsonCursor::NextElement() { return Continue(']', "expected ',' or ']'") > 0; }

bool JsonCursor::String(std::string* out) {
  out->clear();
  if (!Expect('"', "expected a string")) return false;
  const size_t n = ReadJsonStringBody(text_.substr(pos_), out);
  if (n == 0) return Fail("bad string");
  pos_ += n;
  return true;
}

bool JsonCursor::Word(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) return Fail("bad literal");
  pos_ += word.size();
  return true;
}

bool JsonCursor::Null() {
  if (Peek() != Kind::kNull) return false;
  return Word("null");
}

namespace {
size_t SkipJsonDigits(std::string_view text, size_t i) {
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  return i;
}

// Where an RFC 8259 number at text[from] ends (npos: it is not one), whether it is an integer
// (no fraction, no exponent), and where its integer digits start.
struct JsonNumberSpan {
  size_t end = std::string_view::npos;
  size_t int_start = 0;
  bool negative = false;
  bool integral = true;
};

JsonNumberSpan ScanJsonNumber(std::string_view text, size_t i) {
  JsonNumberSpan n;
  n.negative = i < text.size() && text[i] == '-';
  if (n.negative) ++i;
  n.int_start = i;
  i = SkipJsonDigits(text, i);
  const size_t int_digits = i - n.int_start;
  if (int_digits == 0 || (int_digits > 1 && text[n.int_start] == '0')) return n;
  if (i < text.size() && text[i] == '.') {
    n.integral = false;
    const size_t from = ++i;
    i = SkipJsonDigits(text, i);
    if (i == from) return n;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    n.integral = false;
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    const size_t from = i;
    i = SkipJsonDigits(text, i);
    if (i == from) return n;
  }
  n.end = i;
  return n;
}

// An integer's value typed as jsoncpp types it: Int64, or UInt64 past INT64_MAX; nothing when
// it fits neither (it is read as a double).
std::optional<Json::Value> JsonIntegerValue(std::string_view digits, bool negative) {
  uint64_t v = 0;
  for (char c : digits) {
    const unsigned d = static_cast<unsigned>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  constexpr uint64_t kMaxInt = static_cast<uint64_t>(INT64_MAX);
  if (negative && v <= kMaxInt + 1) {
    return v == kMaxInt + 1 ? Json::Value(static_cast<Json::Int64>(INT64_MIN))
                            : Json::Value(-static_cast<Json::Int64>(v));
  }
  if (negative) return std::nullopt;
  return v <= kMaxInt ? Json::Value(static_cast<Json::Int64>(v))
                      : Json::Value(static_cast<Json::UInt64>(v));
}

// The number at text[start], read as ParseJson reads it: RFC 8259 numbers only, typed as jsoncpp
// types them (an integer that fits int64 is an int, a larger one up to uint64 a uint, anything
// else a double). `end` is npos when it is not a number; `in_range` is false for one past
// double's range (ParseJson refuses it too).
struct JsonNumberRead {
  size_t end = std::string_view::npos;
  bool in_range = false;
  Json::Value value;
};

// With `build` false only `end` and `in_range` are set (a skipped number builds no value).
JsonNumberRead ReadJsonNumber(std::string_view text, size_t start, bool build) {
  JsonNumberRead r;
  const JsonNumberSpan n = ScanJsonNumber(text, start);
  r.end = n.end;
  if (n.end == std::string_view::npos) return r;
  if (!build && n.integral && n.end - n.int_start <= 18) {
    r.in_range = true;  // 18 digits fit int64 whatever they are
    return r;
  }
  if (n.integral) {
    if (auto v = JsonIntegerValue(text.substr(n.int_start, n.end - n.int_start), n.negative)) {
      r.value = std::move(*v);
      r.in_range = true;
      return r;
    }
  }
  double d = 0;
  const auto [end, ec] = std::from_chars(text.data() + start, text.data() + n.end, d);
  r.in_range = ec == std::errc() && end == text.data() + n.end;
  if (r.in_range) r.value = d;
  return r;
}
}  // namespace

bool JsonCursor::Number(Json::Value* out) {
  JsonNumberRead r = ReadJsonNumber(text_, pos_, out != nullptr);
  if (r.end == std::string_view::npos) return Fail("bad number");
  pos_ = r.end;
  if (!r.in_range) return Fail("number out of range");
  if (out != nullptr) *out = std::move(r.value);
  return true;
}

bool JsonCursor::Build(Json::Value* out) {
  switch (Peek()) {
    case Kind::kObject: {
      if (!BeginObject()) return false;
      *out = Json::Value(Json::objectValue);
      std::string key;
      while (NextMember(&key))
        if (!Build(&(*out)[key])) return false;
      return ok();
    }
    case Kind::kArray: {
      if (!BeginArray()) return false;
      *out = Json::Value(Json::arrayValue);
      while (NextElement())
        if (!Build(&out->append(Json::Value()))) return false;
      return ok();
    }
    case Kind::kString:
      if (!String(&scratch_)) return false;
      *out = Json::Value(scratch_.data(), scratch_.data() + scratch_.size());
      return true;
    case Kind::kNumber:
      return Number(out);
    case Kind::kBool:
      if (text_[pos_] == 't') {
        *out = true;
        return Word("true");
      }
      *out = false;
      return Word("false");
    case Kind::kNull:
      *out = Json::Value();
      return Word("null");
    case Kind::kNone:
      break;
  }
  return Fail("expected a value");
}

bool JsonCursor::Value(Json::Value* out) { return Build(out); }

bool JsonCursor::Skip() {
  // Read as Build reads (the same checks, the same errors), but nothing is built: a skipped
  // object or string costs no allocation (the unknown members of a stream chunk or an entry).
  switch (Peek()) {
    case Kind::kObject: {
      if (!BeginObject()) return false;
      while (NextMember(&scratch_))
        if (!Skip()) return false;
      return ok();
    }
    case Kind::kArray: {
      if (!BeginArray()) return false;
      while (NextElement())
        if (!Skip()) return false;
      return ok();
    }
    case Kind::kString:
      return String(&scratch_);
    case Kind::kNumber:
      return Number(nullptr);
    case Kind::kBool:
      return Word(text_[pos_] == 't' ? "true" : "false");
    case Kind::kNull:
      return Word("null");
    case Kind::kNone:
      break;
  }
  return Fail("expected a value");
}

size_t SkipJsonScalar(std::string_view from) {
  // What a JsonCursor's Peek and Skip read (SkipJsonScalarReadsWhatTheCursorReads holds it to
  // them), without setting one up: a stream chunk's envelope members (id, object, created,
  // model...) pass through here, one call each.
  const size_t pos = SkipJsonSpace(from, 0);
  if (pos >= from.size()) return 0;
  auto word = [&](std::string_view w) {
    return from.substr(pos, w.size()) == w ? pos + w.size() : 0;
  };
  switch (from[pos]) {
    case '"': {
      std::string body;
      const size_t n = ReadJsonStringBody(from.substr(pos + 1), &body);
      return n == 0 ? 0 : pos + 1 + n;
    }
    case 't':
      return word("true");
    case 'f':
      return word("false");
    case 'n':
      return word("null");
    default: {
      const JsonNumberRead r = ReadJsonNumber(from, pos, false);
      return r.end != std::string_view::npos && r.in_range ? r.end : 0;
    }
  }
}

bool JsonCursor::End() {
  SkipSpace();
  if (!ok()) return false;
  if (pos_ != text_.size()) return Fail("trailing characters");
  return true;
}

namespace {
// The bytes of a string written as JSON, at most: quotes, 2 for an escaped quote or backslash,
// 6 for a control byte, 3 per non-ASCII byte (\uXXXX for 2 bytes, a pair of them for 4).
size_t JsonStringBytes(const char* begin, const char* end, size_t stop_after) {
  size_t n = 2;
  for (const char* p = begin; p < end && n <= stop_after; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    n += c >= 0x80 ? 3 : c < 0x20 ? 6 : (c == '"' || c == '\\') ? 2 : 1;
  }
  return n;
}

bool FitsIn(const Json::Value& v, size_t max_bytes, size_t* used) {
  auto add = [&](size_t n) {
    *used += n;
    return *used <= max_bytes;
  };
  switch (v.type()) {
    case Json::nullValue:
    case Json::booleanValue:
      return add(5);
    case Json::intValue:
    case Json::uintValue:
    case Json::realValue:
      return add(25);
    case Json::stringValue: {
      const char* b = nullptr;
      const char* e = nullptr;
      v.getString(&b, &e);
      return add(b == nullptr ? 2 : JsonStringBytes(b, e, max_bytes - *used));
    }
    case Json::arrayValue:
      if (!add(2)) return false;
      for (Json::ArrayIndex i = 0; i < v.size(); ++i)
        if (!add(1) || !FitsIn(ElementOrNull(v, i), max_bytes, used)) return false;
      return true;
    case Json::objectValue:
      if (!add(2)) return false;
      for (auto it = v.begin(); it != v.end(); ++it) {
        const char* end = nullptr;
        const char* key = it.memberName(&end);
        if (!add(2 + JsonStringBytes(key, end, max_bytes - *used)) || !FitsIn(*it, max_bytes, used))
          return false;
      }
      return true;
  }
  return true;
}
}  // namespace

bool JsonFitsIn(const Json::Value& v, size_t max_bytes) {
  size_t used = 0;
  return FitsIn(v, max_bytes, &used);
}

std::string WriteJsonPretty(const Json::Value& v) {
  Json::StreamWriterBuilder b;
  b["indentation"] = "  ";
  return Json::writeString(b, v);
}

const Json::Value* FindMember(const Json::Value& obj, std::string_view key) {
  if (!obj.isObject()) return nullptr;
  return obj.find(key.data(), key.data() + key.size());
}

FieldReader::FieldReader(const Json::Value& obj, std::string path)
    : obj_(obj), path_(std::move(path)) {
  if (!obj_.isObject()) Fail((path_.empty() ? std::string("value") : path_) + ": expected object");
}

const Json::Value* FieldReader::Get(const char* key, bool required) {
  const Json::Value* v = FindMember(obj_, key);
  if (v == nullptr || v->isNull()) {
    if (required) Fail(Path(key) + ": required");
    return nullptr;
  }
  return v;
}

std::optional<std::string> FieldReader::String(const char* key, bool required) {
  const Json::Value* v = Get(key, required);
  if (!v) return std::nullopt;
  if (!v->isString()) {
    Fail(Path(key) + ": expected string");
    return std::nullopt;
  }
  return v->asString();
}

std::optional<long long> AsInt64(const Json::Value& v) {
  if (v.isInt64()) return v.asInt64();
  if (v.isDouble()) {
    const double d = v.asDouble();
    // Whole numbers strictly inside int64's range (2^63 itself is out).
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
        d == static_cast<double>(static_cast<long long>(d)))
      return static_cast<long long>(d);
  }
  return std::nullopt;
}

std::optional<unsigned long long> AsUInt64(const Json::Value& v) {
  if (v.isUInt64()) return v.asUInt64();
  return std::nullopt;
}

std::optional<double> AsDouble(const Json::Value& v) {
  if (v.isNumeric()) return v.asDouble();
  return std::nullopt;
}

std::optional<std::string> AsString(const Json::Value& v) {
  if (v.isString()) return v.asString();
  return std::nullopt;
}

std::optional<bool> AsBool(const Json::Value& v) {
  if (v.isBool()) return v.asBool();
  return std::nullopt;
}

std::string StringOr(const Json::Value& obj, std::string_view key, std::string fallback) {
  const Json::Value* v = FindMember(obj, key);
  return v && v->isString() ? v->asString() : std::move(fallback);
}

long long IntOr(const Json::Value& obj, std::string_view key, long long fallback) {
  const Json::Value* v = FindMember(obj, key);
  if (!v) return fallback;
  return AsInt64(*v).value_or(fallback);
}

double DoubleOr(const Json::Value& obj, std::string_view key, double fallback) {
  const Json::Value* v = FindMember(obj, key);
  return v && v->isNumeric() ? v->asDouble() : fallback;
}

bool BoolOr(const Json::Value& obj, std::string_view key, bool fallback) {
  const Json::Value* v = FindMember(obj, key);
  return v && v->isBool() ? v->asBool() : fallback;
}

const Json::Value& MemberOrNull(const Json::Value& obj, std::string_view key) {
  const Json::Value* v = FindMember(obj, key);
  return v ? *v : Json::Value::nullSingleton();
}

const Json::Value& ElementOrNull(const Json::Value& array, Json::ArrayIndex i) {
  if (!array.isArray() || i >= array.size()) return Json::Value::nullSingleton();
  return array[i];
}

std::vector<std::string> MemberNames(const Json::Value& obj) {
  if (!obj.isObject()) return {};
  return obj.getMemberNames();
}

std::string StringOrJson(const Json::Value& v) {
  if (v.isString()) return v.asString();
  return WriteJson(v);
}

long long IntReader::Int(const Json::Value& obj, std::string_view key, long long lo, long long hi,
                         long long fallback) {
  const Json::Value* m = FindMember(obj, key);
  if (m == nullptr || m->isNull()) return fallback;
  if (auto v = AsInt64(*m); v && *v >= lo && *v <= hi) return *v;
  if (error_.empty()) {
    // Numbers are quoted; other values only by type (they may be megabytes long).
    std::string shown = m->isNumeric()  ? WriteJson(*m)
                        : m->isString() ? std::string("a string")
                        : m->isBool()   ? std::string("a boolean")
                                        : std::string("an array or object");
    error_ = "bad number in " + where_ + ": " + std::string(key) + " is " + shown +
             ", expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  }
  return fallback;
}

std::optional<long long> FieldReader::Int(const char* key, bool required) {
  const Json::Value* v = Get(key, required);
  if (!v) return std::nullopt;
  auto n = AsInt64(*v);
  if (!n) {
    const bool whole = v->isUInt64() || (v->isDouble() && std::isfinite(v->asDouble()) &&
                                         std::floor(v->asDouble()) == v->asDouble());
    Fail(Path(key) + (whole ? ": integer out of range" : ": expected integer"));
  }
  return n;
}

std::optional<double> FieldReader::Double(const char* key, bool required) {
  const Json::Value* v = Get(key, required);
  if (!v) return std::nullopt;
  if (!v->isNumeric()) {
    Fail(Path(key) + ": expected number");
    return std::nullopt;
  }
  return v->asDouble();
}

std::optional<bool> FieldReader::Bool(const char* key, bool required) {
  const Json::Value* v = Get(key, required);
  if (!v) return std::nullopt;
  if (!v->isBool()) {
    Fail(Path(key) + ": expected boolean");
    return std::nullopt;
  }
  return v->asBool();
}

const Json::Value* FieldReader::Any(const char* key, bool required) { return Get(key, required); }

const Json::Value* FieldReader::Object(const char* key, bool required) {
  const Json::Value* v = Get(key, required);
  if (v && !v->isObject()) {
    Fail(Path(key) + ": expected object");
    return nullptr;
  }
  return v;
}

const Json::Value* FieldReader::Array(const char* key, bool required) {
  const Json::Value* v = Get(key, required);
  if (v && !v->isArray()) {
    Fail(Path(key) + ": expected array");
    return nullptr;
  }
  return v;
}

}  // namespace lousho
