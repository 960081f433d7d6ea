// The `read` tool: line-numbered file slices, images as image blocks.
#include <cstdio>
#include <system_error>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/paths.h"
#include "agent/tools/tool_util.h"

namespace lousho::agent::tools {
namespace {

namespace fs = std::filesystem;

constexpr long long kDefaultLimit = 2000;
constexpr size_t kMaxLineBytes = 2000;
constexpr size_t kMaxOutputBytes = 50UL * 1024;
constexpr uintmax_t kMaxImageBytes = 10UL * 1024 * 1024;

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
    std::string path = StringArg(args, "path");
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

    std::error_code ec;
    fs::file_status st = fs::status(path.real, ec);
    if (fs::is_directory(st))
      return ToolOutput::Error(shown + " is a directory; use ls to list its entries");
    bool via_client = ctx.client && ctx.client->CanReadTextFile();
    if (!fs::exists(st) && !via_client) return ToolOutput::Error("file not found: " + shown);

    if (fs::is_regular_file(st)) {
      // Images are always read from disk: the editor's fs methods are text only.
      std::string head;
      if (FILE* f = std::fopen(path.real.c_str(), "rb")) {
        char buf[16];
        size_t n = std::fread(buf, 1, sizeof buf, f);
        head.assign(buf, n);
        std::fclose(f);
      }
      if (const char* mime = ImageMime(head)) return ReadImage(path, shown, mime);
    }

    auto text = ReadTextForTool(ctx, path);
    if (!text.ok()) return ToolOutput::Error("cannot read " + shown + ": " + text.error().message);
    if (LooksBinary(*text))
      return ToolOutput::Error(shown + " looks like a binary file (" +
                               std::to_string(text->size()) + " bytes); not shown");
    return Slice(*text, shown, path, offset_arg.value_or(1), limit_arg.value_or(kDefaultLimit));
  }

 private:
  static ToolOutput ReadImage(const ResolvedPath& path, const std::string& shown,
                              const char* mime) {
    std::error_code ec;
    uintmax_t size = fs::file_size(path.real, ec);
    if (ec) return ToolOutput::Error("cannot read " + shown + ": " + ec.message());
    if (size > kMaxImageBytes)
      return ToolOutput::Error(shown + " is an image of " + std::to_string(size) +
                               " bytes, more than the 10 MiB that can be shown");
    auto data = ReadDiskFile(path.real);
    if (!data.ok()) return ToolOutput::Error(data.error().message);
    ToolOutput out;
    out.content.push_back(ContentBlock::Text("Read image file " + shown + " [" + mime + ", " +
                                             std::to_string(size) + " bytes]"));
    out.content.push_back(ContentBlock::Image(mime, Base64(*data)));
    out.details["path"] = path.abs.string();
    out.details["mimeType"] = mime;
    out.details["bytes"] = Json::UInt64(size);
    return out;
  }

  static ToolOutput Slice(const std::string& text, const std::string& shown,
                          const ResolvedPath& path, long long offset, long long limit) {
    std::vector<std::string_view> lines = SplitLines(text);
    const long long total = static_cast<long long>(lines.size());
    ToolOutput out;
    out.details["path"] = path.abs.string();
    out.details["totalLines"] = Json::Int64(total);
    if (total == 0) {
      out.content.push_back(ContentBlock::Text("(empty file)"));
      return out;
    }
    if (offset > total)
      return ToolOutput::Error("offset " + std::to_string(offset) + " is beyond the end of " +
                               shown + " (" + std::to_string(total) + " lines)");
    std::string body;
    long long last = offset - 1;  // last line shown, 1-based
    bool byte_capped = false;
    size_t cut_lines = 0;
    for (long long i = offset - 1; i < total && i < offset - 1 + limit; ++i) {
      std::string_view line = lines[static_cast<size_t>(i)];
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      std::string row;
      char num[32];
      std::snprintf(num, sizeof num, "%6lld\t", i + 1);
      row += num;
      if (line.size() > kMaxLineBytes) {
        row.append(line.substr(0, Utf8Prefix(line, kMaxLineBytes)));
        row += "… [line truncated: " + std::to_string(line.size()) + " bytes]";
        ++cut_lines;
      } else {
        row.append(line);
      }
      row += '\n';
      if (body.size() + row.size() > kMaxOutputBytes && i > offset - 1) {
        byte_capped = true;
        break;
      }
      body += row;
      last = i + 1;
    }
    if (last < total) {
      body += "\n[Showing lines " + std::to_string(offset) + "-" + std::to_string(last) + " of " +
              std::to_string(total) + (byte_capped ? " (output size limit)" : "") +
              ". Use offset=" + std::to_string(last + 1) + " to continue.]";
    } else if (!body.empty() && body.back() == '\n') {
      body.pop_back();
    }
    if (cut_lines > 0)
      body += "\n[" + std::to_string(cut_lines) + " long line(s) truncated to " +
              std::to_string(kMaxLineBytes) + " bytes]";
    out.content.push_back(ContentBlock::Text(std::move(body)));
    out.details["startLine"] = Json::Int64(offset);
    out.details["endLine"] = Json::Int64(last);
    out.details["truncated"] = last < total;
    return out;
  }
};

}  // namespace

std::unique_ptr<Tool> MakeReadTool() { return std::make_unique<ReadTool>(); }

}  // namespace lousho::agent::tools
