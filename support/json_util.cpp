// JSON helpers.
#include "support/json_util.h"

#include <memory>

namespace lousho {

Result<Json::Value> ParseJson(std::string_view text) {
  Json::CharReaderBuilder rb;
  Json::CharReaderBuilder::strictMode(&rb.settings_);
  rb.settings_["failIfExtra"] = true;
  rb.settings_["rejectDupKeys"] = false;
  std::unique_ptr<Json::CharReader> reader(rb.newCharReader());
  Json::Value out;
  std::string errs;
  if (!reader->parse(text.data(), text.data() + text.size(), &out, &errs)) {
    while (!errs.empty() && (errs.back() == '\n' || errs.back() == ' ')) errs.pop_back();
    for (auto& c : errs)
      if (c == '\n') c = ' ';
    return MakeError("LOUSHO_JSON_PARSE", errs.empty() ? "invalid JSON" : errs);
  }
  return out;
}

std::string WriteJson(const Json::Value& v) {
  static const Json::StreamWriterBuilder* builder = [] {
    auto* b = new Json::StreamWriterBuilder();
    (*b)["indentation"] = "";
    return b;
  }();
  return Json::writeString(*builder, v);
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

std::optional<long long> FieldReader::Int(const char* key, bool required) {
  const Json::Value* v = Get(key, required);
  if (!v) return std::nullopt;
  if (!v->isIntegral() &&
      !(v->isDouble() && v->asDouble() == static_cast<long long>(v->asDouble()))) {
    Fail(Path(key) + ": expected integer");
    return std::nullopt;
  }
  return v->isIntegral() ? v->asInt64() : static_cast<long long>(v->asDouble());
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
