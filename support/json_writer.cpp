// The one JSON writer (see json_writer.h).
#include "support/json_writer.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "support/json_util.h"

namespace lousho {

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

namespace {
// A double as jsoncpp writes it: no NaN or infinity in JSON, so NaN is null and the infinities
// overflow any reader's double; otherwise 17 significant digits ("%.17g"), and a whole number
// keeps a ".0" so that it reads back as a double. Returns the length written into buf[40].
size_t FormatDouble(double d, char* buf) {
  if (std::isnan(d)) return static_cast<size_t>(std::snprintf(buf, 40, "null"));
  if (std::isinf(d))
    return static_cast<size_t>(std::snprintf(buf, 40, d < 0 ? "-1e+9999" : "1e+9999"));
  int n = std::snprintf(buf, 40, "%.17g", d);
  bool point = false;
  for (int i = 0; i < n; ++i) {
    if (buf[i] == ',') buf[i] = '.';  // a locale's decimal comma, as jsoncpp mends it
    if (buf[i] == '.' || buf[i] == 'e') point = true;
  }
  if (!point) n += std::snprintf(buf + n, 40 - static_cast<size_t>(n), ".0");
  return static_cast<size_t>(n);
}
}  // namespace

void JsonWriter::Value(double d) {
  BeginValue();
  // The last double written on this thread is kept (compared bit for bit: 0.0 and -0.0 differ):
  // a usage's cost, in every message_update line of a reply, changes only with the usage.
  thread_local uint64_t last_bits = 0;
  thread_local size_t last_size = 0;
  thread_local char last[40];
  const auto bits = std::bit_cast<uint64_t>(d);
  if (last_size == 0 || bits != last_bits) {
    last_size = FormatDouble(d, last);
    last_bits = bits;
  }
  out_->append(last, last_size);
}

void JsonWriter::Value(const Json::Value& v) { WriteDom(v); }

void JsonWriter::WriteDom(const Json::Value& v) {
  switch (v.type()) {
    case Json::nullValue:
      return Value(nullptr);
    case Json::intValue:
      return Value(AsInt64(v).value_or(0));
    case Json::uintValue:
      return Value(AsUInt64(v).value_or(0));
    case Json::realValue:
      return Value(AsDouble(v).value_or(0.0));
    case Json::booleanValue:
      return Value(AsBool(v).value_or(false));
    case Json::stringValue: {
      const char* b = nullptr;
      const char* e = nullptr;
      if (!v.getString(&b, &e)) return Value(std::string_view());
      return Value(std::string_view(b, static_cast<size_t>(e - b)));
    }
    case Json::arrayValue:
      ArrayBegin();
      for (const Json::Value& item : v) WriteDom(item);
      return ArrayEnd();
    case Json::objectValue:
      ObjectBegin();
      // The map's order is jsoncpp's: keys compared byte by byte, a prefix first.
      for (auto it = v.begin(); it != v.end(); ++it) {
        const char* end = nullptr;
        const char* key = it.memberName(&end);
        AttributeBegin(std::string_view(key, static_cast<size_t>(end - key)));
        WriteDom(*it);
        AttributeEnd();
      }
      return ObjectEnd();
  }
}

#ifndef NDEBUG
namespace {
[[noreturn]] void NestingError(const char* what) {
  std::fprintf(stderr, "JsonWriter: %s\n", what);
  std::abort();
}
}  // namespace

JsonWriter::~JsonWriter() {
  if (stack_.size() != 1) NestingError("an object, array or member left open");
}

void JsonWriter::CheckValueAllowed() {
  switch (stack_.back()) {
    case kObject:
      NestingError("a value where a member's key is due");
    case kTop:
    case kAttribute:
      if (valued_) NestingError("a second value where one is due");
      valued_ = true;
      return;
    case kArray:
      return;
  }
}

void JsonWriter::Check(Context want, const char* what) const {
  if (stack_.back() != want) NestingError(what);
}

void JsonWriter::Push(Context ctx) {
  stack_.push_back(ctx);
  valued_ = false;
}

void JsonWriter::Pop(bool member) {
  if (member && !valued_) NestingError("a member without a value");
  stack_.pop_back();
  // A level below an object or array is filled by the one just closed; an object wants keys.
  valued_ = stack_.back() != kObject;
}
#endif

}  // namespace lousho
