// JSON helpers.
#include "support/json_util.h"

#include <cmath>
#include <memory>
#include <sstream>

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
  // One writer and one buffer per thread: Json::writeString builds a writer (reading its
  // settings) and a stream for every call, which costs as much as writing a short line.
  struct LineWriter {
    std::unique_ptr<Json::StreamWriter> writer;
    std::ostringstream out;
  };
  thread_local LineWriter w = [] {
    Json::StreamWriterBuilder b;
    b["indentation"] = "";
    return LineWriter{std::unique_ptr<Json::StreamWriter>(b.newStreamWriter()), {}};
  }();
  w.out.str(std::string());
  w.out.clear();
  w.writer->write(v, &w.out);
  return w.out.str();
}

namespace {
// jsoncpp's reading of one UTF-8 sequence at *p (end at `end`), kept byte for byte, invalid and
// overlong sequences included: a bad lead or a short tail is U+FFFD; *p is left on the last byte
// taken. Lead bytes 0x80-0xDF are all read as two-byte sequences, as jsoncpp does.
unsigned Utf8CodePoint(const char*& p, const char* end) {
  constexpr unsigned kReplacement = 0xFFFD;
  const unsigned first = static_cast<unsigned char>(*p);
  if (first < 0x80) return first;
  auto tail = [&](int i) { return static_cast<unsigned>(static_cast<unsigned char>(p[i])) & 0x3F; };
  if (first < 0xE0) {
    if (end - p < 2) return kReplacement;
    const unsigned cp = ((first & 0x1F) << 6) | tail(1);
    p += 1;
    return cp < 0x80 ? kReplacement : cp;
  }
  if (first < 0xF0) {
    if (end - p < 3) return kReplacement;
    const unsigned cp = ((first & 0x0F) << 12) | (tail(1) << 6) | tail(2);
    p += 2;
    if (cp >= 0xD800 && cp <= 0xDFFF) return kReplacement;
    return cp < 0x800 ? kReplacement : cp;
  }
  if (first < 0xF8) {
    if (end - p < 4) return kReplacement;
    const unsigned cp = ((first & 0x07) << 18) | (tail(1) << 12) | (tail(2) << 6) | tail(3);
    p += 3;
    return cp < 0x10000 ? kReplacement : cp;
  }
  return kReplacement;
}

void AppendU16Escape(unsigned unit, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  const char esc[6] = {'\\',
                       'u',
                       kHex[(unit >> 12) & 0xF],
                       kHex[(unit >> 8) & 0xF],
                       kHex[(unit >> 4) & 0xF],
                       kHex[unit & 0xF]};
  out->append(esc, 6);
}
}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  const char* p = s.data();
  const char* const end = p + s.size();
  while (p < end) {
    // Runs of printable ASCII go out as they are.
    const char* run = p;
    while (p < end) {
      const auto c = static_cast<unsigned char>(*p);
      if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
      ++p;
    }
    out->append(run, static_cast<size_t>(p - run));
    if (p == end) break;
    switch (*p) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default: {
        unsigned cp = Utf8CodePoint(p, end);
        if (cp >= 0x20 && cp <= 0x7F) {
          out->push_back(static_cast<char>(cp));
        } else if (cp < 0x10000) {
          AppendU16Escape(cp, out);
        } else {
          // Lead bytes 0xF5-0xF7 give code points past U+10FFFF; jsoncpp keeps 10 bits of the
          // high half, so does this.
          cp -= 0x10000;
          AppendU16Escape(((cp >> 10) & 0x3FF) + 0xD800, out);
          AppendU16Escape((cp & 0x3FF) + 0xDC00, out);
        }
        break;
      }
    }
    ++p;
  }
  out->push_back('"');
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
