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

#include "agent/paths.h"
#include "agent/tool.h"
#include "support/cancel.h"
#include "support/json_util.h"
#include "support/status.h"

namespace lousho::agent::tools {

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

// Local file access. Only regular files are read or written: a FIFO blocks whoever opens or
// reads it, a device such as /dev/zero never ends, and a socket cannot be opened at all. The
// kind is checked with lstat before opening and again with fstat on the open descriptor (the
// path may have been swapped in between); opening uses O_NONBLOCK, so even a swapped-in FIFO
// cannot block the open. Reads go in chunks of kReadChunkBytes and stop with LOUSHO_CANCELLED
// between chunks once the token fires.

// The most that edit loads, that write writes, and the largest file write replaces: files this
// big are not something to rewrite through a model's tool call.
inline constexpr uint64_t kMaxTextFileBytes = 10ULL * 1024 * 1024;
inline constexpr size_t kReadChunkBytes = 64UL * 1024;

// "512 bytes", "64 KiB", "1.5 MiB", "2 GiB": sizes for messages.
std::string ByteSize(uint64_t bytes);

// "a FIFO (named pipe)", "a character device", ... for anything that is not a regular file.
std::string FileKindName(std::filesystem::file_type type);
// "<shown> is a FIFO (named pipe), not a regular file" when the path exists (looked at with
// lstat) and is neither a regular file nor a directory; "" otherwise.
std::string SpecialFileMessage(const std::filesystem::path& real, const std::string& shown);

// A regular file open for reading; closed on destruction. Move-only, not thread-safe.
class DiskFile {
 public:
  // Refuses anything but a regular file (see above). The final component must not be a symlink
  // unless follow_symlink: tool paths are already resolved, so a symlink there is a swap.
  static Result<DiskFile> Open(const std::filesystem::path& path, bool follow_symlink = false);
  DiskFile(DiskFile&& other) noexcept;
  DiskFile& operator=(DiskFile&& other) noexcept;
  DiskFile(const DiskFile&) = delete;
  DiskFile& operator=(const DiskFile&) = delete;
  ~DiskFile();

  // The size fstat reported at open.
  uint64_t size() const { return size_; }
  // Reads up to `max` bytes from the current position into buf, stopping early only at the
  // end; returns how many were read (0 at the end).
  Result<size_t> Read(char* buf, size_t max);
  // The same, appended to `out`.
  Result<size_t> ReadChunk(std::string* out, size_t max);
  // Appends everything up to the end to `out`, failing when `out` would exceed max_bytes
  // (LOUSHO_TOOL_TOO_LARGE) or when cancel fires (LOUSHO_CANCELLED).
  Status ReadRest(std::string* out, uint64_t max_bytes, const CancelToken& cancel);

 private:
  DiskFile(int fd, uint64_t size, std::string path)
      : fd_(fd), size_(size), path_(std::move(path)) {}
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string path_;  // for messages
};

// The whole of a regular file of at most max_bytes (larger: LOUSHO_TOOL_TOO_LARGE, without
// reading it), read in chunks that check cancel.
Result<std::string> ReadDiskFile(const std::filesystem::path& path,
                                 uint64_t max_bytes = kMaxTextFileBytes,
                                 const CancelToken& cancel = {}, bool follow_symlink = true);
// Creates or overwrites a regular file (never a FIFO, device or socket, never through a
// symlink). The file is truncated only after its kind was checked on the open descriptor.
Status WriteDiskFile(const std::filesystem::path& path, const std::string& content);

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
