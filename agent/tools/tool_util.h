// Helpers shared by the built-in tools: lenient argument reading, schemas, text limits, file I/O
// through the editor or the disk.
#pragma once

#include <json/json.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/paths.h"
#include "core/tool.h"
#include "support/cancel.h"
#include "support/files.h"
#include "support/json_util.h"
#include "support/status.h"

namespace lousho::agent::tools {

// The most of a tool's text output the model gets (built-in look-ups and MCP results); more is
// cut, and the output says so.
inline constexpr size_t kMaxToolOutputBytes = size_t{50} * 1024;

// Reads tool arguments. Models send numbers as strings and booleans as "true" now and then, so
// those are accepted; anything else wrong is kept as the first error, naming the field.
class Args {
 public:
  explicit Args(const Json::Value& args);
  std::optional<std::string> String(const char* key, bool required);
  std::optional<long long> Int(const char* key, long long min_value);
  std::optional<double> Number(const char* key, double min_value);
  bool Bool(const char* key, bool fallback);
  const Json::Value* Array(const char* key, bool required);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  void Fail(std::string msg) {
    if (error_.empty()) error_ = std::move(msg);
  }

 private:
  const Json::Value& args_;
  std::string error_;
};

// JSON schema helpers.
Json::Value ObjectSchema(std::initializer_list<std::pair<const char*, Json::Value>> properties,
                         std::initializer_list<const char*> required);
Json::Value PropSchema(const char* type, const char* description);

// The largest prefix of s of at most max_bytes that does not split a UTF-8 sequence.
size_t Utf8Prefix(std::string_view s, size_t max_bytes);
// The start of the smallest suffix of at most max_bytes that does not split a UTF-8 sequence.
size_t Utf8SuffixStart(std::string_view s, size_t max_bytes);

// Splits on '\n'; a final newline does not make an extra empty line. '\r' is kept.
std::vector<std::string_view> SplitLines(std::string_view text);

// NUL in the first 8 KiB: treated as binary, like git and grep do.
bool LooksBinary(std::string_view head);

// First line of s, at most max_chars bytes (UTF-8 safe), with "…" when shortened.
std::string Shorten(std::string_view s, size_t max_bytes);

// The disk layer (regular files only, bounded, cancellable) is support/files.h's.
using lousho::ByteSize;
using lousho::DiskFile;
using lousho::FileKindName;
using lousho::FileTooLarge;
using lousho::kMaxTextFileBytes;
using lousho::kReadChunkBytes;
using lousho::ReadDiskFile;
using lousho::SpecialFileMessage;
using lousho::WriteDiskFile;

// The text of a file: from the editor (unsaved buffers) when it can read files, else the disk.
// Texts over max_bytes are refused (LOUSHO_TOOL_TOO_LARGE); from disk without being read.
Result<std::string> ReadTextForTool(ToolContext& ctx, const ResolvedPath& path,
                                    uint64_t max_bytes = kMaxTextFileBytes);
// Writes through the editor when it can write files, else to disk. Parent directories are
// created on disk either way.
Status WriteTextForTool(ToolContext& ctx, const ResolvedPath& path, const std::string& text);

// Reports the "path" argument of a file tool as permission subject: as given, minus "./".
std::string PathSubject(const Json::Value& args);

// Base of the read-only tools that look inside a folder named by an optional "path" argument
// (grep, find, ls): the editor follows that folder, and permission rules match its path.
class FolderTool : public Tool {
 public:
  bool read_only() const override { return true; }
  std::vector<ToolLocation> Locations(const Json::Value& args,
                                      const ToolContext& ctx) const override;
  std::string PermissionSubject(const Json::Value& args) const override {
    return PathSubject(args);
  }
};

// "<verb> <pattern> in <path>", e.g. "grep TODO in src".
std::string SearchTitle(const std::string& verb, const Json::Value& args);

}  // namespace lousho::agent::tools
