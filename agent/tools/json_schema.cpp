// A small JSON Schema checker.
#include "agent/tools/json_schema.h"

#include <cmath>

#include "support/json_util.h"

namespace lousho::agent::tools {
namespace {

constexpr int kMaxDepth = 64;

size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

bool IsInteger(const Json::Value& v) {
  if (v.isInt() || v.isInt64() || v.isUInt() || v.isUInt64()) return true;
  if (!v.isDouble()) return false;
  const double d = AsDouble(v).value_or(0.5);
  return std::isfinite(d) && std::floor(d) == d;
}

bool HasType(const Json::Value& v, const std::string& type) {
  if (type == "object") return v.isObject();
  if (type == "array") return v.isArray();
  if (type == "string") return v.isString();
  if (type == "boolean") return v.isBool();
  if (type == "null") return v.isNull();
  if (type == "integer") return IsInteger(v);
  if (type == "number") return v.isNumeric() && !v.isBool();
  return true;  // an unknown type name is not held against the value
}

std::string TypeName(const Json::Value& v) {
  if (v.isObject()) return "an object";
  if (v.isArray()) return "an array";
  if (v.isString()) return "a string";
  if (v.isBool()) return "a boolean";
  if (v.isNull()) return "null";
  return "a number";
}

class Checker {
 public:
  Checker(const Json::Value& root, size_t max) : root_(root), max_(max) {}

  void Check(const Json::Value& schema, const Json::Value& v, const std::string& path, int depth) {
    if (full() || depth > kMaxDepth) return;
    if (schema.isBool()) {
      if (!AsBool(schema).value_or(true)) Fail(path, "no value is allowed here");
      return;
    }
    if (!schema.isObject()) return;
    if (auto ref = AsString(MemberOrNull(schema, "$ref")))
      if (const Json::Value* target = Resolve(*ref)) Check(*target, v, path, depth + 1);
    if (!Type(schema, v, path)) return;
    Values(schema, v, path);
    if (v.isObject()) Object(schema, v, path, depth);
    if (v.isArray()) Array(schema, v, path, depth);
    if (v.isString()) String(schema, v, path);
    if (v.isNumeric() && !v.isBool()) Number(schema, v, path);
    Combined(schema, v, path, depth);
  }

  std::vector<std::string> Take() { return std::move(out_); }

 private:
  bool full() const { return out_.size() >= max_; }
  void Fail(const std::string& path, const std::string& what) {
    if (!full()) out_.push_back(path + ": " + what);
  }

  // "#/$defs/a/b" within the root schema; nullptr for any other reference.
  const Json::Value* Resolve(const std::string& ref) const {
    if (ref.empty() || ref[0] != '#') return nullptr;
    const Json::Value* at = &root_;
    size_t i = 1;
    while (i < ref.size() && ref[i] == '/') {
      const size_t next = ref.find('/', i + 1);
      const std::string key = ref.substr(i + 1, next == std::string::npos ? next : next - i - 1);
      at = FindMember(*at, key);
      if (at == nullptr) return nullptr;
      i = next == std::string::npos ? ref.size() : next;
    }
    return at;
  }

  bool Type(const Json::Value& schema, const Json::Value& v, const std::string& path) {
    const Json::Value& type = MemberOrNull(schema, "type");
    if (type.isString()) {
      const std::string want = AsString(type).value_or("");
      if (HasType(v, want)) return true;
      Fail(path, "expected " + want + ", got " + TypeName(v));
      return false;
    }
    if (!type.isArray() || type.empty()) return true;
    std::string names;
    for (const auto& t : type) {
      if (t.isString() && HasType(v, AsString(t).value_or(""))) return true;
      names += (names.empty() ? "" : " or ") + StringOrJson(t);
    }
    Fail(path, "expected " + names + ", got " + TypeName(v));
    return false;
  }

  void Values(const Json::Value& schema, const Json::Value& v, const std::string& path) {
    if (const Json::Value* c = FindMember(schema, "const"); c && *c != v)
      Fail(path, "expected " + WriteJson(*c));
    const Json::Value& e = MemberOrNull(schema, "enum");
    if (!e.isArray()) return;
    for (const auto& option : e)
      if (option == v) return;
    Fail(path, WriteJson(v) + " is not one of " + WriteJson(e));
  }

  void Object(const Json::Value& schema, const Json::Value& v, const std::string& path, int depth) {
    const Json::Value& required = MemberOrNull(schema, "required");
    for (Json::ArrayIndex i = 0; required.isArray() && i < required.size(); ++i) {
      auto key = AsString(ElementOrNull(required, i));
      if (key && FindMember(v, *key) == nullptr)
        Fail(path, "missing required property \"" + *key + "\"");
    }
    const Json::Value& props = MemberOrNull(schema, "properties");
    const Json::Value& extra = MemberOrNull(schema, "additionalProperties");
    for (const auto& key : MemberNames(v)) {
      const std::string at = path + "." + key;
      if (const Json::Value* p = FindMember(props, key)) {
        Check(*p, MemberOrNull(v, key), at, depth + 1);
      } else if (AsBool(extra) == false) {
        Fail(at, "property not allowed");
      } else if (extra.isObject()) {
        Check(extra, MemberOrNull(v, key), at, depth + 1);
      }
    }
  }

  void Array(const Json::Value& schema, const Json::Value& v, const std::string& path, int depth) {
    if (auto n = AsUInt64(MemberOrNull(schema, "minItems")); n && v.size() < *n)
      Fail(path, "expected at least " + std::to_string(*n) + " items");
    if (auto n = AsUInt64(MemberOrNull(schema, "maxItems")); n && v.size() > *n)
      Fail(path, "expected at most " + std::to_string(*n) + " items");
    const Json::Value& items = MemberOrNull(schema, "items");
    if (!items.isObject() && !items.isBool()) return;
    for (Json::ArrayIndex i = 0; i < v.size() && !full(); ++i)
      Check(items, ElementOrNull(v, i), path + "[" + std::to_string(i) + "]", depth + 1);
  }

  void String(const Json::Value& schema, const Json::Value& v, const std::string& path) {
    const size_t n = CodePoints(AsString(v).value_or(""));
    if (auto min = AsUInt64(MemberOrNull(schema, "minLength")); min && n < *min)
      Fail(path, "shorter than " + std::to_string(*min) + " characters");
    if (auto max = AsUInt64(MemberOrNull(schema, "maxLength")); max && n > *max)
      Fail(path, "longer than " + std::to_string(*max) + " characters");
  }

  void Number(const Json::Value& schema, const Json::Value& v, const std::string& path) {
    const double d = AsDouble(v).value_or(0);
    auto bound = [&](const char* key) { return AsDouble(MemberOrNull(schema, key)); };
    if (auto b = bound("minimum"); b && d < *b)
      Fail(path, "less than " + StringOrJson(MemberOrNull(schema, "minimum")));
    if (auto b = bound("maximum"); b && d > *b)
      Fail(path, "greater than " + StringOrJson(MemberOrNull(schema, "maximum")));
    if (auto b = bound("exclusiveMinimum"); b && d <= *b)
      Fail(path, "not greater than " + StringOrJson(MemberOrNull(schema, "exclusiveMinimum")));
    if (auto b = bound("exclusiveMaximum"); b && d >= *b)
      Fail(path, "not less than " + StringOrJson(MemberOrNull(schema, "exclusiveMaximum")));
  }

  // How many of `list`'s schemas `v` fits (checked apart, their mismatches not kept).
  size_t Fits(const Json::Value& list, const Json::Value& v, int depth) const {
    size_t n = 0;
    for (const auto& s : list) {
      Checker sub(root_, 1);
      sub.Check(s, v, "$", depth + 1);
      n += sub.out_.empty() ? 1 : 0;
    }
    return n;
  }

  void Combined(const Json::Value& schema, const Json::Value& v, const std::string& path,
                int depth) {
    const Json::Value& all = MemberOrNull(schema, "allOf");
    for (Json::ArrayIndex i = 0; all.isArray() && i < all.size(); ++i)
      Check(ElementOrNull(all, i), v, path, depth + 1);
    const Json::Value& any = MemberOrNull(schema, "anyOf");
    if (any.isArray() && !any.empty() && Fits(any, v, depth) == 0)
      Fail(path, "fits none of the anyOf schemas");
    const Json::Value& one = MemberOrNull(schema, "oneOf");
    if (one.isArray() && !one.empty() && Fits(one, v, depth) != 1)
      Fail(path, "fits " + std::to_string(Fits(one, v, depth)) + " of the oneOf schemas, not one");
  }

  const Json::Value& root_;
  size_t max_;
  std::vector<std::string> out_;
};

}  // namespace

std::vector<std::string> SchemaMismatches(const Json::Value& schema, const Json::Value& value,
                                          size_t max) {
  Checker c(schema, max == 0 ? 1 : max);
  c.Check(schema, value, "$", 0);
  return c.Take();
}

}  // namespace lousho::agent::tools
