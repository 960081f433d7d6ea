// Helpers shared by the built-in tools.
#include "agent/tools/tool_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <system_error>
#include <utility>

namespace lousho::agent::tools {

namespace fs = std::filesystem;

Args::Args(const Json::Value& args) : args_(args) {
  if (!args_.isObject() && !args_.isNull()) Fail("arguments: expected an object");
}

std::optional<std::string> Args::String(const char* key, bool required) {
  const Json::Value* v = FindMember(args_, key);
  if (!v || v->isNull()) {
    if (required) Fail(std::string(key) + ": required");
    return std::nullopt;
  }
  if (v->isString()) return AsString(*v);
  if (v->isNumeric() || v->isBool()) return WriteJson(*v);  // 42, 1.5, true as text
  Fail(std::string(key) + ": expected string");
  return std::nullopt;
}

std::optional<long long> Args::Int(const char* key, long long min_value) {
  const Json::Value* v = FindMember(args_, key);
  if (!v || v->isNull()) return std::nullopt;
  long long n = 0;
  const std::string s = StringOr(args_, key);
  if (auto whole = AsInt64(*v)) {  // integers, and whole doubles within int64
    n = *whole;
  } else if (!s.empty()) {
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
  const Json::Value* v = FindMember(args_, key);
  if (!v || v->isNull()) return std::nullopt;
  double d = 0;
  const std::string s = StringOr(args_, key);
  if (auto number = AsDouble(*v)) {
    d = *number;
  } else if (!s.empty()) {
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
  const Json::Value* v = FindMember(args_, key);
  if (!v || v->isNull()) return fallback;
  if (auto b = AsBool(*v)) return *b;
  const std::string s = StringOr(args_, key);
  if (s == "true") return true;
  if (s == "false") return false;
  Fail(std::string(key) + ": expected boolean");
  return fallback;
}

const Json::Value* Args::Array(const char* key, bool required) {
  const Json::Value* v = FindMember(args_, key);
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

std::vector<std::string> SplitLineStrings(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view line : SplitLines(text)) out.emplace_back(line);
  return out;
}

const char* ImageMime(std::string_view head) {
  auto starts = [&](std::string_view magic) { return head.substr(0, magic.size()) == magic; };
  if (starts("\x89PNG\r\n\x1a\n")) return "image/png";
  if (starts("\xff\xd8\xff")) return "image/jpeg";
  if (starts("GIF87a") || starts("GIF89a")) return "image/gif";
  if (head.size() >= 12 && starts("RIFF") && head.substr(8, 4) == "WEBP") return "image/webp";
  return nullptr;
}

std::string Base64(std::string_view in) {
  static const char* kTable = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                 (static_cast<unsigned char>(in[i + 1]) << 8) |
                 static_cast<unsigned char>(in[i + 2]);
    out += kTable[v >> 18];
    out += kTable[(v >> 12) & 63];
    out += kTable[(v >> 6) & 63];
    out += kTable[v & 63];
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += kTable[v >> 18];
    out += kTable[(v >> 12) & 63];
    out += i + 1 < in.size() ? kTable[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
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

Result<std::string> ReadTextForTool(ToolContext& ctx, const ResolvedPath& path,
                                    uint64_t max_bytes) {
  if (ctx.services.files && ctx.services.files->CanReadTextFile()) {
    // line/limit 0: the whole buffer; slicing happens here so totals are known.
    auto text =
        ctx.services.files->ReadTextFile(ctx.session_id, path.abs.string(), 0, 0, ctx.cancel);
    if (text.ok() && text->size() > max_bytes)
      return FileTooLarge(path.abs, text->size(), max_bytes);
    return text;
  }
  return ReadDiskFile(path.real, max_bytes, ctx.cancel, false);
}

Status WriteTextForTool(ToolContext& ctx, const ResolvedPath& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.real.parent_path(), ec);
  if (ec)
    return MakeError(
        ErrorCode::kToolIo,
        "cannot create directory " + path.real.parent_path().string() + ": " + ec.message());
  if (ctx.before_change) ctx.before_change(path.real, &text);  // the rewind's checkpoint
  if (ctx.services.files && ctx.services.files->CanWriteTextFile())
    return ctx.services.files->WriteTextFile(ctx.session_id, path.abs.string(), text, ctx.cancel);
  return WriteDiskFile(path.real, text);
}

std::string PathSubject(const Json::Value& args) {
  std::string p = StringOr(args, "path");
  if (!p.empty() && p[0] == '@') p.erase(0, 1);
  while (p.rfind("./", 0) == 0) p.erase(0, 2);
  return p;
}

std::vector<ToolLocation> FolderTool::Locations(const Json::Value& args,
                                                const ToolContext& ctx) const {
  std::string path = StringOr(args, "path");
  return {ToolLocation{AbsolutePath(ctx.cwd, path.empty() ? "." : path).string(), 0}};
}

std::string SearchTitle(const std::string& verb, const Json::Value& args) {
  std::string t = verb + " " + Shorten(StringOr(args, "pattern"), 60);
  std::string path = PathSubject(args);
  if (!path.empty()) t += " in " + path;
  return t;
}

}  // namespace lousho::agent::tools
