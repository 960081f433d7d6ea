// Small, throw-free accessors for reading provider JSON (jsoncpp's as*() throw on a type mismatch
// or a number out of range, and a cast of an out-of-range double is undefined).
#pragma once

#include <json/json.h>

#include <string>

#include "agent/providers/provider_errors.h"
#include "support/json_util.h"
#include "support/status.h"

namespace lousho::agent::json {

// Bounds on the numbers a model server sends. Anything outside them is a bad response: no real
// answer has that many blocks or tokens, and the bounds keep sums of usage far from overflow.
inline constexpr long long kMaxBlockIndex = 1024;                 // content block, tool call
inline constexpr long long kMaxTokenCount = 1'000'000'000'000LL;  // one usage figure

// The member `key` of `v`, or nullptr when `v` is not an object or has no such member.
inline const Json::Value* Member(const Json::Value& v, const char* key) {
  if (!v.isObject()) return nullptr;
  return v.find(key, key + std::char_traits<char>::length(key));
}
// A string member; any other type (null included) reads as empty, which every caller treats as
// "not sent".
inline std::string Str(const Json::Value& v, const char* key) {
  const Json::Value* m = Member(v, key);
  return m && m->isString() ? m->asString() : std::string();
}
inline bool IsObject(const Json::Value& v, const char* key) {
  const Json::Value* m = Member(v, key);
  return m && m->isObject();
}

// Reads the integers of one stream event, checked by type and range before jsoncpp is asked for
// them; the first problem is kept so the decoder can fail the response once. Not thread-safe.
class Numbers {
 public:
  // `where` names the event in the error (e.g. "content_block_delta"); it must outlive this.
  explicit Numbers(const char* where) : where_(where) {}

  // The integer member `key` in [lo, hi]. Absent or null gives `fallback`; any other value (a
  // string, a fraction, a number out of range) is recorded as an error and gives `fallback`.
  long long Int(const Json::Value& obj, const char* key, long long lo, long long hi,
                long long fallback) {
    const Json::Value* m = Member(obj, key);
    if (m == nullptr || m->isNull()) return fallback;
    // isInt64() is true only for integers (also integral doubles) that asInt64() can return.
    if (m->isInt64()) {
      long long v = m->asInt64();
      if (v >= lo && v <= hi) return v;
    }
    if (error_.empty()) {
      // Numbers are quoted; other values only by type (they may be megabytes long).
      std::string shown = m->isNumeric()  ? WriteJson(*m)
                          : m->isString() ? std::string("a string")
                          : m->isBool()   ? std::string("a boolean")
                                          : std::string("an array or object");
      error_ = std::string("bad number in ") + where_ + ": " + key + " is " + shown +
               ", expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
    }
    return fallback;
  }
  long long Index(const Json::Value& obj, const char* key) {
    return Int(obj, key, 0, kMaxBlockIndex, 0);
  }
  long long Tokens(const Json::Value& obj, const char* key) {
    return Int(obj, key, 0, kMaxTokenCount, 0);
  }

  bool ok() const { return error_.empty(); }
  // LOUSHO_PROVIDER_BAD_RESPONSE (not retryable: the server would answer the same way again).
  Status status() const {
    return ok() ? Status::Ok() : Status(MakeError(kProviderBadResponse, error_));
  }

 private:
  const char* where_;
  std::string error_;
};

}  // namespace lousho::agent::json
