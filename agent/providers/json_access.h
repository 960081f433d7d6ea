// Small, throw-free accessors for reading provider JSON (jsoncpp's as*() throw on a type mismatch).
#pragma once

#include <json/json.h>

#include <string>

namespace lousho::agent::json {

// The member `key` of `v`, or nullptr when `v` is not an object or has no such member.
inline const Json::Value* Member(const Json::Value& v, const char* key) {
  if (!v.isObject()) return nullptr;
  return v.find(key, key + std::char_traits<char>::length(key));
}
inline std::string Str(const Json::Value& v, const char* key) {
  const Json::Value* m = Member(v, key);
  return m && m->isString() ? m->asString() : std::string();
}
inline long long Int(const Json::Value& v, const char* key, long long fallback) {
  const Json::Value* m = Member(v, key);
  if (!m) return fallback;
  if (m->isIntegral()) return m->asInt64();
  if (m->isDouble()) return static_cast<long long>(m->asDouble());
  return fallback;
}
inline bool IsObject(const Json::Value& v, const char* key) {
  const Json::Value* m = Member(v, key);
  return m && m->isObject();
}

}  // namespace lousho::agent::json
