// Helpers shared by the built-in tools: lenient argument reading, schemas, text limits, file I/O
// through the editor or the disk.
#pragma once

#include <json/json.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
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
// The same lines as strings of their own (what a dtl diff takes).
std::vector<std::string> SplitLineStrings(std::string_view text);

// The image type the first bytes name (PNG, JPEG, GIF, WebP), or null.
const char* ImageMime(std::string_view head);
// Standard base64 with padding (image content for the model).
std::string Base64(std::string_view in);

// NUL in the first 8 KiB: treated as binary, like git and grep do.
bool LooksBinary(std::string_view head);

// The most of a command's output that is shown: `max_lines` lines within `max_bytes`.
struct OutputCap {
  size_t max_bytes = 0;
  size_t max_lines = 0;
};

// The last cap.max_lines lines of `text` within cap.max_bytes (one huge line: its tail). Sets
// *kept_lines and *total_lines.
std::string TailLines(std::string_view text, OutputCap cap, size_t* kept_lines,
                      size_t* total_lines);

// A tool's output as the model gets it: whole when it fits `cap`; else its head (the first
// fifth of the cap) and its tail (the rest), whole lines where possible, with a line between
// saying how much was left out and, when `saved` names a file, that the file holds all of it.
// `start` is a prefix of the output and `end` a suffix (the same text when the tool has all of
// it); `total_bytes` is the output's size. *cut (may be null) says whether anything was cut.
// This is the one cut of tool output for the model: bash, grep, MCP results and fetch use it.
std::string CutForModel(std::string_view start, std::string_view end, uint64_t total_bytes,
                        OutputCap cap, const std::string& saved, bool* cut);
// The same for a text the tool holds whole.
inline std::string CutForModel(std::string_view text, OutputCap cap, const std::string& saved,
                               bool* cut) {
  return CutForModel(text, text, text.size(), cap, saved, cut);
}

// The whole of outputs cut for the model, kept as files in one folder (a session's
// "<name>.outputs/" beside its file), so the model can read or grep the part it needs (the first
// error of a long build). At most limits.max_files files of limits.max_file_bytes each and
// limits.max_total_bytes together: when a new file is kept, the oldest go. Thread-safe.
class SavedOutputs {
 public:
  struct Limits {
    size_t max_files = 50;
    uint64_t max_file_bytes = uint64_t{64} << 20;
    uint64_t max_total_bytes = uint64_t{256} << 20;
  };
  // One output being written as it comes (a command's). The file goes when the writer is
  // dropped without Keep.
  class Writer {
   public:
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    // Bytes past limits.max_file_bytes are not written (truncated() then says so).
    void Append(std::string_view bytes);
    // Keeps the file (the oldest files may go); its path, or empty when it could not be written.
    std::string Keep();
    bool truncated() const { return truncated_; }

   private:
    friend class SavedOutputs;
    Writer(SavedOutputs& owner, std::filesystem::path path, int fd);
    SavedOutputs& owner_;
    std::filesystem::path path_;
    int fd_ = -1;
    uint64_t written_ = 0;
    bool truncated_ = false;
    bool failed_ = false;
    bool kept_ = false;
  };

  explicit SavedOutputs(std::filesystem::path dir);
  SavedOutputs(std::filesystem::path dir, Limits limits);
  // A new file for `tool`'s output; null when the folder cannot be made.
  std::unique_ptr<Writer> Begin(std::string_view tool);
  // Saves `text` whole; its path, or empty.
  std::string Save(std::string_view tool, std::string_view text);
  const std::filesystem::path& dir() const { return dir_; }

 private:
  void Prune();

  std::filesystem::path dir_;
  Limits limits_;
  std::mutex mu_;
  uint64_t counter_ = 0;  // guarded by mu_
};

// "<folder>/<name>.outputs" for "<folder>/<name>.jsonl".
std::filesystem::path SavedOutputDirFor(const std::filesystem::path& session_file);
// Removes a session's saved outputs (with its file: session/delete). No folder is not an error.
Status RemoveSavedOutputs(const std::filesystem::path& session_file);

// Cuts `text` for the model with kMaxToolOutputBytes (and `max_lines`), saving it whole in the
// session's saved outputs first when it is cut (and there are any). *cut as for CutForModel.
std::string CutAndSave(ToolContext& ctx, std::string_view tool, std::string_view text,
                       size_t max_lines, bool* cut);

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
