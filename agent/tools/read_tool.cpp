// The `read` tool: line-numbered file slices, images as image blocks.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <system_error>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/tool_util.h"
#include "core/paths.h"

namespace lousho::agent::tools {
namespace {

namespace fs = std::filesystem;

constexpr long long kDefaultLimit = 2000;
constexpr size_t kMaxLineBytes = 2000;
constexpr size_t kMaxOutputBytes = 50UL * 1024;
constexpr uintmax_t kMaxImageBytes = 10UL * 1024 * 1024;
// How far into a file read skips to reach `offset`.
constexpr uint64_t kMaxSkipBytes = 256ULL * 1024 * 1024;
// How much read looks at from the first shown line on: enough for any window the output cap
// allows, plus counting the remaining lines of all but very large files.
constexpr uint64_t kMaxLookBytes = 16ULL * 1024 * 1024;

// The length of s without a UTF-8 sequence cut off at its end.
size_t WholeUtf8(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  size_t lead = s.size();
  while (lead > 0 && s.size() - lead < 4 && (byte(lead - 1) & 0xC0) == 0x80) --lead;
  if (lead == 0) return s.size();
  --lead;  // the byte before the continuation bytes
  unsigned char b = byte(lead);
  size_t need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
  return s.size() - lead < need ? lead : s.size();
}

class ReadTool : public Tool {
 public:
  std::string name() const override { return "read"; }
  std::string description() const override {
    return "Read a file. Text comes back with line numbers (`     N\\t` prefixes, not part of the "
           "file). By default up to 2000 lines from the start; use offset (1-based line) and "
           "limit for large files. Images (png, jpg, gif, webp) come back as images. Use ls for "
           "directories.";
  }
  Json::Value parameters() const override {
    Json::Value offset = PropSchema("integer", "1-based line to start reading from");
    offset["minimum"] = 1;
    Json::Value limit = PropSchema("integer", "Maximum number of lines to read (default 2000)");
    limit["minimum"] = 1;
    return ObjectSchema({{"path", PropSchema("string",
                                             "Path to the file, relative to the "
                                             "working directory or absolute")},
                         {"offset", offset},
                         {"limit", limit}},
                        {"path"});
  }
  ToolKind kind() const override { return ToolKind::kRead; }
  bool read_only() const override { return true; }

  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    std::string title = "Read " + PathSubject(args);
    Args a(args);
    auto offset = a.Int("offset", 1);
    auto limit = a.Int("limit", 1);
    if (offset && limit) {
      title += ":" + std::to_string(*offset) + "-" + std::to_string(*offset + *limit - 1);
    } else if (offset) {
      title += ":" + std::to_string(*offset);
    } else if (limit) {
      title += ":1-" + std::to_string(*limit);
    }
    return title;
  }
  std::vector<ToolLocation> Locations(const Json::Value& args,
                                      const ToolContext& ctx) const override {
    std::string path = StringOr(args, "path");
    if (path.empty()) return {};
    Args a(args);
    auto offset = a.Int("offset", 1);
    return {
        ToolLocation{AbsolutePath(ctx.cwd, path).string(), static_cast<int>(offset.value_or(1))}};
  }
  std::string PermissionSubject(const Json::Value& args) const override {
    return PathSubject(args);
  }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    Args a(args);
    auto path_arg = a.String("path", true);
    auto offset_arg = a.Int("offset", 1);
    auto limit_arg = a.Int("limit", 1);
    if (!a.ok()) return ToolOutput::Error("read: " + a.error());
    auto resolved = ResolveToolPath(ctx, *path_arg);
    if (!resolved.ok()) return ToolOutput::Error(resolved.error().message);
    const ResolvedPath& path = *resolved;
    std::string shown = DisplayPath(ctx.cwd, path.abs);
    const long long offset = offset_arg.value_or(1);
    const long long limit = limit_arg.value_or(kDefaultLimit);

    std::error_code ec;
    fs::file_status st = fs::status(path.real, ec);
    if (fs::is_directory(st))
      return ToolOutput::Error(shown + " is a directory; use ls to list its entries");
    if (std::string special = SpecialFileMessage(path.real, shown); !special.empty())
      return ToolOutput::Error(special + "; read only reads regular files");
    bool via_client = ctx.services.files && ctx.services.files->CanReadTextFile();
    if (!fs::exists(st) && !via_client) return ToolOutput::Error("file not found: " + shown);

    if (fs::exists(st)) {
      if (auto out = ReadFromDisk(path, shown, offset, limit, via_client, ctx)) return *out;
    }
    auto text = ReadTextForTool(ctx, path, std::numeric_limits<uint64_t>::max());
    if (!text.ok()) return ToolOutput::Error("cannot read " + shown + ": " + text.error().message);
    return SliceText(*text, shown, path, offset, limit);
  }

 private:
  // The file read from disk: an image, or (unless the editor's copy is to be read instead) the
  // slice of its lines; nothing when the editor's copy is to be read.
  static std::optional<ToolOutput> ReadFromDisk(const ResolvedPath& path, const std::string& shown,
                                                long long offset, long long limit, bool via_client,
                                                ToolContext& ctx) {
    auto file = DiskFile::Open(path.real);
    if (!file.ok()) {
      if (via_client) return std::nullopt;
      return ToolOutput::Error("cannot read " + shown + ": " + file.error().message);
    }
    if (ctx.cancel.cancelled()) return Cancelled(shown);
    std::string head;
    auto got = file->ReadChunk(&head, kReadChunkBytes);
    if (!got.ok()) return ToolOutput::Error("cannot read " + shown + ": " + got.error().message);
    // Images are always read from disk: the editor's fs methods are text only.
    if (const char* mime = ImageMime(head))
      return ReadImage(*file, std::move(head), path, shown, mime, ctx.cancel);
    if (via_client) return std::nullopt;
    return StreamSlice(*file, std::move(head), shown, path, offset, limit, ctx);
  }

  // Lines offset..offset+limit-1 of a text held whole (the editor's copy).
  static ToolOutput SliceText(const std::string& text, const std::string& shown,
                              const ResolvedPath& path, long long offset, long long limit) {
    if (LooksBinary(text))
      return ToolOutput::Error(shown + " looks like a binary file (" + std::to_string(text.size()) +
                               " bytes); not shown");
    Window window(offset, limit);
    std::vector<std::string_view> lines = SplitLines(text);
    for (size_t i = 0; i < lines.size() && window.Wants(static_cast<long long>(i) + 1); ++i) {
      std::string_view line = lines[i];
      size_t length = line.size() - (!line.empty() && line.back() == '\r' ? 1 : 0);
      window.Add(static_cast<long long>(i) + 1, line.substr(0, kKeepBytes), length, true);
    }
    return window.Finish(shown, path, static_cast<long long>(lines.size()), text.size(), 0);
  }

  // How much of a line is kept: one byte past the cut, so Utf8Prefix sees the byte after it.
  static constexpr size_t kKeepBytes = kMaxLineBytes + 1;

  static ToolOutput Cancelled(const std::string& shown) {
    return ToolOutput::Error("read of " + shown + " was cancelled");
  }

  static ToolOutput ReadImage(DiskFile& file, std::string data, const ResolvedPath& path,
                              const std::string& shown, const char* mime,
                              const CancelToken& cancel) {
    if (file.size() > kMaxImageBytes)
      return ToolOutput::Error(shown + " is an image of " + std::to_string(file.size()) +
                               " bytes, more than the 10 MiB that can be shown");
    Status st = file.ReadRest(&data, kMaxImageBytes, cancel);
    if (!st.ok()) {
      if (st.error().code == ErrorCode::kCancelled) return Cancelled(shown);
      return ToolOutput::Error("cannot read " + shown + ": " + st.error().message);
    }
    ToolOutput out;
    out.content.push_back(ContentBlock::Text("Read image file " + shown + " [" + mime + ", " +
                                             std::to_string(data.size()) + " bytes]"));
    out.content.push_back(ContentBlock::Image(mime, Base64(data)));
    out.details["path"] = path.abs.string();
    out.details["mimeType"] = mime;
    out.details["bytes"] = Json::UInt64(data.size());
    return out;
  }

  // The numbered lines offset..offset+limit-1, fed one at a time, within the output byte cap.
  class Window {
   public:
    Window(long long offset, long long limit) : offset_(offset), limit_(limit), last_(offset - 1) {}

    // Whether line n (1-based) or a later one can still be shown.
    bool Wants(long long n) const { return !full_ && n < offset_ + limit_; }
    bool Shows(long long n) const { return Wants(n) && n >= offset_; }

    // Line n: `kept` is its start (all of it, or at least kKeepBytes), `length` its full length
    // without a final '\r'; `complete` false when reading stopped inside it.
    void Add(long long n, std::string_view kept, uint64_t length, bool complete) {
      if (!Shows(n)) return;
      std::string row;
      char num[32];
      std::snprintf(num, sizeof num, "%6lld\t", n);
      row += num;
      if (length > kMaxLineBytes || !complete) {
        std::string_view text = kept.substr(0, std::min<uint64_t>(length, kept.size()));
        text = text.substr(0, Utf8Prefix(text, kMaxLineBytes));
        // Reading may have stopped inside a character.
        if (!complete) text = text.substr(0, WholeUtf8(text));
        row.append(text);
        row += complete ? "… [line truncated: " + std::to_string(length) + " bytes]"
                        : "… [line truncated: more than " + std::to_string(length) + " bytes]";
        ++cut_lines_;
      } else {
        row.append(kept.substr(0, length));
      }
      row += '\n';
      if (body_.size() + row.size() > kMaxOutputBytes && n > offset_) {
        byte_capped_ = full_ = true;
        return;
      }
      body_ += row;
      last_ = n;
      if (!complete) full_ = true;
    }

    // total: the file's line count, or -1 when reading stopped before its end (after
    // `scanned` bytes of a file of `bytes`).
    ToolOutput Finish(const std::string& shown, const ResolvedPath& path, long long total,
                      uint64_t bytes, uint64_t scanned) {
      ToolOutput out;
      out.details["path"] = path.abs.string();
      // Without a line count, the size tells how much more there is.
      if (total >= 0)
        out.details["totalLines"] = Json::Int64(total);
      else
        out.details["bytes"] = Json::UInt64(bytes);
      if (total == 0) {
        out.content.push_back(ContentBlock::Text("(empty file)"));
        return out;
      }
      if (total >= 0 && offset_ > total)
        return ToolOutput::Error("offset " + std::to_string(offset_) + " is beyond the end of " +
                                 shown + " (" + std::to_string(total) + " lines)");
      bool more = total < 0 || last_ < total;
      std::string body = std::move(body_);
      if (more) {
        std::string of = total >= 0 ? " of " + std::to_string(total)
                                    : "; the file is " + ByteSize(bytes) +
                                          " and lines were not counted past the first " +
                                          ByteSize(scanned);
        body += "\n[Showing lines " + std::to_string(offset_) + "-" + std::to_string(last_) + of +
                (byte_capped_ ? " (output size limit)" : "") +
                ". Use offset=" + std::to_string(last_ + 1) + " to continue.]";
      } else if (!body.empty() && body.back() == '\n') {
        body.pop_back();
      }
      if (cut_lines_ > 0)
        body += "\n[" + std::to_string(cut_lines_) + " long line(s) truncated to " +
                std::to_string(kMaxLineBytes) + " bytes]";
      out.content.push_back(ContentBlock::Text(std::move(body)));
      out.details["startLine"] = Json::Int64(offset_);
      out.details["endLine"] = Json::Int64(last_);
      out.details["truncated"] = more;
      return out;
    }

   private:
    long long offset_;
    long long limit_;
    long long last_;  // last line shown, 1-based
    std::string body_;
    bool full_ = false;
    bool byte_capped_ = false;
    size_t cut_lines_ = 0;
  };

  // Where reading a file line by line stands, across chunks.
  struct LineCursor {
    long long line = 1;      // the line being read
    std::string kept;        // its start, while it is shown
    uint64_t length = 0;     // its length so far
    char last_byte = 0;      // its last byte so far
    uint64_t scanned = 0;    // bytes consumed
    uint64_t window_at = 0;  // where line `offset` starts
    bool in_window = false;

    // The length of the current line without a final '\r'.
    uint64_t LengthWithoutCr() const { return length - (last_byte == '\r' ? 1 : 0); }

    // Consumes one chunk: every line it ends goes to `window`, the unfinished one stays.
    void Scan(std::string_view chunk, Window& window, long long offset) {
      for (size_t pos = 0; pos < chunk.size();) {
        const char* nl =
            static_cast<const char*>(std::memchr(chunk.data() + pos, '\n', chunk.size() - pos));
        size_t end = nl ? static_cast<size_t>(nl - chunk.data()) : chunk.size();
        std::string_view part(chunk.data() + pos, end - pos);
        if (window.Shows(line) && kept.size() < kKeepBytes)
          kept.append(part.substr(0, kKeepBytes - kept.size()));
        length += part.size();
        if (!part.empty()) last_byte = part.back();
        if (!nl) break;
        window.Add(line, kept, LengthWithoutCr(), true);
        ++line;
        kept.clear();
        length = 0;
        last_byte = 0;
        pos = end + 1;
        if (!in_window && line == offset) {
          in_window = true;
          window_at = scanned + pos;
        }
      }
      scanned += chunk.size();
    }
  };

  static ToolOutput OffsetTooFar(long long offset, const std::string& shown, uint64_t size) {
    return ToolOutput::Error("offset " + std::to_string(offset) + " lies beyond the first " +
                             ByteSize(kMaxSkipBytes) + " of " + shown + " (" + ByteSize(size) +
                             "), which is as far as read looks; use grep, or bash with tail or "
                             "sed, on files this large");
  }

  // Reads the window from disk chunk by chunk, keeping only the start of each shown line, so
  // memory stays at a few chunks whatever the file's size. Lines before `offset` are skipped
  // over at most kMaxSkipBytes; from the start of the window, at most kMaxLookBytes are read
  // (to finish long lines and count the rest of the file for the "of N lines" note).
  static ToolOutput StreamSlice(DiskFile& file, std::string buffer, const std::string& shown,
                                const ResolvedPath& path, long long offset, long long limit,
                                const ToolContext& ctx) {
    std::string_view chunk = buffer;
    if (LooksBinary(chunk))
      return ToolOutput::Error(shown + " looks like a binary file (" + std::to_string(file.size()) +
                               " bytes); not shown");
    Window window(offset, limit);
    LineCursor at;
    at.in_window = offset == 1;
    for (;;) {
      at.Scan(chunk, window, offset);
      if (!at.in_window && at.scanned > kMaxSkipBytes)
        return OffsetTooFar(offset, shown, file.size());
      if (at.in_window && at.scanned - at.window_at > kMaxLookBytes) {
        // Stopped before the end: a shown line still being read is shown as far as it got.
        if (at.length > 0) window.Add(at.line, at.kept, at.length, false);
        return window.Finish(shown, path, -1, file.size(), at.scanned);
      }
      if (ctx.cancel.cancelled()) return Cancelled(shown);
      // The buffer is reused: no allocation or clearing per chunk.
      buffer.resize(kReadChunkBytes);
      auto got = file.Read(buffer.data(), buffer.size());
      if (!got.ok()) return ToolOutput::Error("cannot read " + shown + ": " + got.error().message);
      if (*got == 0) break;
      chunk = std::string_view(buffer.data(), *got);
    }
    // A last line without a newline still counts.
    if (at.length > 0) {
      window.Add(at.line, at.kept, at.LengthWithoutCr(), true);
      ++at.line;
    }
    return window.Finish(shown, path, at.line - 1, std::max<uint64_t>(file.size(), at.scanned),
                         at.scanned);
  }
};

}  // namespace

std::unique_ptr<Tool> MakeReadTool() { return std::make_unique<ReadTool>(); }

}  // namespace lousho::agent::tools
