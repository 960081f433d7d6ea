// Helpers shared by the built-in tools.
#include "agent/tools/tool_util.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

namespace lousho::agent::tools {

namespace fs = std::filesystem;

Args::Args(const Json::Value& args) : args_(args) {
  if (!args_.isObject() && !args_.isNull()) Fail("arguments: expected an object");
}

std::optional<std::string> Args::String(const char* key, bool required) {
  const Json::Value* v = args_.isObject() ? args_.find(key, key + std::strlen(key)) : nullptr;
  if (!v || v->isNull()) {
    if (required) Fail(std::string(key) + ": required");
    return std::nullopt;
  }
  if (v->isString()) return v->asString();
  if (v->isNumeric() || v->isBool()) return v->asString();
  Fail(std::string(key) + ": expected string");
  return std::nullopt;
}

std::optional<long long> Args::Int(const char* key, long long min_value) {
  const Json::Value* v = args_.isObject() ? args_.find(key, key + std::strlen(key)) : nullptr;
  if (!v || v->isNull()) return std::nullopt;
  long long n = 0;
  if (v->isIntegral()) {
    n = v->asInt64();
  } else if (v->isDouble() &&
             v->asDouble() == static_cast<double>(static_cast<long long>(v->asDouble()))) {
    n = static_cast<long long>(v->asDouble());
  } else if (v->isString() && !v->asString().empty()) {
    const std::string s = v->asString();
    char* end = nullptr;
    errno = 0;
    n = std::strtoll(s.c_str(), &end, 10);
    if (errno != 0 || *end != '\0') {
      Fail(std::string(key) + ": expected integer");
      return std::nullopt;
    }
  } else {
    Fail(std::string(key) + ": expected integer");
    return std::nullopt;
  }
  if (n < min_value) {
    Fail(std::string(key) + ": must be at least " + std::to_string(min_value));
    return std::nullopt;
  }
  return n;
}

std::optional<double> Args::Number(const char* key, double min_value) {
  const Json::Value* v = args_.isObject() ? args_.find(key, key + std::strlen(key)) : nullptr;
  if (!v || v->isNull()) return std::nullopt;
  double d = 0;
  if (v->isNumeric()) {
    d = v->asDouble();
  } else if (v->isString() && !v->asString().empty()) {
    const std::string s = v->asString();
    char* end = nullptr;
    d = std::strtod(s.c_str(), &end);
    if (*end != '\0') {
      Fail(std::string(key) + ": expected number");
      return std::nullopt;
    }
  } else {
    Fail(std::string(key) + ": expected number");
    return std::nullopt;
  }
  if (!(d >= min_value)) {
    Fail(std::string(key) + ": must be at least " + std::to_string(min_value));
    return std::nullopt;
  }
  return d;
}

bool Args::Bool(const char* key, bool fallback) {
  const Json::Value* v = args_.isObject() ? args_.find(key, key + std::strlen(key)) : nullptr;
  if (!v || v->isNull()) return fallback;
  if (v->isBool()) return v->asBool();
  if (v->isString()) {
    if (v->asString() == "true") return true;
    if (v->asString() == "false") return false;
  }
  Fail(std::string(key) + ": expected boolean");
  return fallback;
}

const Json::Value* Args::Array(const char* key, bool required) {
  const Json::Value* v = args_.isObject() ? args_.find(key, key + std::strlen(key)) : nullptr;
  if (!v || v->isNull()) {
    if (required) Fail(std::string(key) + ": required");
    return nullptr;
  }
  if (!v->isArray()) {
    Fail(std::string(key) + ": expected array");
    return nullptr;
  }
  return v;
}

std::string StringArg(const Json::Value& args, const char* key) {
  if (!args.isObject()) return {};
  const Json::Value* v = args.find(key, key + std::strlen(key));
  return v && v->isString() ? v->asString() : std::string();
}

Json::Value ObjectSchema(std::initializer_list<std::pair<const char*, Json::Value>> properties,
                         std::initializer_list<const char*> required) {
  Json::Value s(Json::objectValue);
  s["type"] = "object";
  s["properties"] = Json::Value(Json::objectValue);
  for (const auto& [name, schema] : properties) s["properties"][name] = schema;
  s["required"] = Json::Value(Json::arrayValue);
  for (const char* r : required) s["required"].append(r);
  s["additionalProperties"] = false;
  return s;
}

Json::Value PropSchema(const char* type, const char* description) {
  Json::Value p(Json::objectValue);
  p["type"] = type;
  p["description"] = description;
  return p;
}

size_t Utf8Prefix(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s.size();
  size_t n = max_bytes;
  // Step back over continuation bytes so the cut falls before a lead byte.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

size_t Utf8SuffixStart(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return 0;
  size_t start = s.size() - max_bytes;
  while (start < s.size() && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) ++start;
  return start;
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

bool LooksBinary(std::string_view head) {
  return head.substr(0, 8192).find('\0') != std::string_view::npos;
}

std::string Shorten(std::string_view s, size_t max_bytes) {
  size_t nl = s.find('\n');
  bool cut = nl != std::string_view::npos;
  std::string_view first = s.substr(0, nl);
  if (first.size() > max_bytes) {
    first = first.substr(0, Utf8Prefix(first, max_bytes));
    cut = true;
  }
  std::string out(first);
  if (cut) out += "…";
  return out;
}

Result<std::string> ReadDiskFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!fs::exists(path, ec))
      return MakeError("LOUSHO_TOOL_IO", "file not found: " + path.string());
    return MakeError("LOUSHO_TOOL_IO",
                     "cannot open " + path.string() + ": " + std::strerror(errno));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return MakeError("LOUSHO_TOOL_IO", "cannot read " + path.string());
  return ss.str();
}

Status WriteDiskFile(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return MakeError("LOUSHO_TOOL_IO",
                     "cannot write " + path.string() + ": " + std::strerror(errno));
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) return MakeError("LOUSHO_TOOL_IO", "cannot write " + path.string());
  return Status::Ok();
}

Result<std::string> ReadTextForTool(ToolContext& ctx, const ResolvedPath& path) {
  if (ctx.client && ctx.client->CanReadTextFile()) {
    // line/limit 0: the whole buffer; slicing happens here so totals are known.
    return ctx.client->ReadTextFile(ctx.session_id, path.abs.string(), 0, 0, ctx.cancel);
  }
  return ReadDiskFile(path.real);
}

Status WriteTextForTool(ToolContext& ctx, const ResolvedPath& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.real.parent_path(), ec);
  if (ec)
    return MakeError("LOUSHO_TOOL_IO", "cannot create directory " +
                                           path.real.parent_path().string() + ": " + ec.message());
  if (ctx.client && ctx.client->CanWriteTextFile())
    return ctx.client->WriteTextFile(ctx.session_id, path.abs.string(), text, ctx.cancel);
  return WriteDiskFile(path.real, text);
}

std::string PathSubject(const Json::Value& args) {
  std::string p = StringArg(args, "path");
  if (!p.empty() && p[0] == '@') p.erase(0, 1);
  while (p.rfind("./", 0) == 0) p.erase(0, 2);
  return p;
}

std::vector<ToolLocation> FolderTool::Locations(const Json::Value& args,
                                                const ToolContext& ctx) const {
  std::string path = StringArg(args, "path");
  return {ToolLocation{AbsolutePath(ctx.cwd, path.empty() ? "." : path).string(), 0}};
}

std::string SearchTitle(const std::string& verb, const Json::Value& args) {
  std::string t = verb + " " + Shorten(StringArg(args, "pattern"), 60);
  std::string path = PathSubject(args);
  if (!path.empty()) t += " in " + path;
  return t;
}

}  // namespace lousho::agent::tools
