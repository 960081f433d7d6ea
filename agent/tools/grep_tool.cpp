// The `grep` tool: PCRE2 (JIT) search over the workspace, honouring .gitignore.
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/gitignore.h"
#include "agent/tools/tool_util.h"
#include "core/paths.h"
#include "support/glob.h"
#include "support/regex.h"

namespace lousho::agent::tools {
namespace {

namespace fs = std::filesystem;

constexpr long long kDefaultLimit = 100;
constexpr size_t kMaxLineBytes = 500;
constexpr uintmax_t kMaxFileBytes = 20UL * 1024 * 1024;
// What a search collects at most; the model gets its head and tail (CutAndSave), the whole of it
// in a saved file.
constexpr size_t kMaxOutputBytes = 16UL * 1024 * 1024;
constexpr size_t kMaxShownLines = 2000;

std::string ClipLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.size() <= kMaxLineBytes) return std::string(line);
  return std::string(line.substr(0, Utf8Prefix(line, kMaxLineBytes))) + "… [truncated]";
}

class GrepTool : public FolderTool {
 public:
  std::string name() const override { return "grep"; }
  std::string description() const override {
    return "Search file contents with a regular expression (PCRE2 syntax) below a directory "
           "(default: the working directory). Skips .git, binary files and files ignored by "
           ".gitignore. Output lines are `path:line: text`; context lines use `path-line- text`. "
           "Options: glob to filter file names (e.g. `*.cpp`, `src/**/*.h`), ignoreCase, literal "
           "(pattern is plain text), context (lines around each match), limit (default 100 "
           "matches).";
  }
  Json::Value parameters() const override {
    Json::Value context = PropSchema("integer", "Lines of context before and after each match");
    context["minimum"] = 0;
    Json::Value limit = PropSchema("integer", "Maximum number of matches (default 100)");
    limit["minimum"] = 1;
    return ObjectSchema(
        {{"pattern", PropSchema("string", "Regular expression (or text with literal=true)")},
         {"path", PropSchema("string",
                             "Directory or file to search (default: working "
                             "directory)")},
         {"glob", PropSchema("string", "Only search files matching this glob")},
         {"ignoreCase", PropSchema("boolean", "Case-insensitive search")},
         {"literal", PropSchema("boolean", "Treat the pattern as literal text")},
         {"context", context},
         {"limit", limit}},
        {"pattern"});
  }
  ToolKind kind() const override { return ToolKind::kSearch; }
  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    return SearchTitle("grep", args);
  }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    Args a(args);
    auto pattern = a.String("pattern", true);
    auto path_arg = a.String("path", false);
    auto glob_arg = a.String("glob", false);
    bool ignore_case = a.Bool("ignoreCase", false);
    bool literal = a.Bool("literal", false);
    auto context = a.Int("context", 0);
    auto limit_arg = a.Int("limit", 1);
    if (!a.ok()) return ToolOutput::Error("grep: " + a.error());
    if (pattern->empty()) return ToolOutput::Error("grep: pattern is empty");
    auto resolved = ResolveToolPath(ctx, path_arg.value_or("."));
    if (!resolved.ok()) return ToolOutput::Error(resolved.error().message);

    RegexOptions ro;
    ro.case_insensitive = ignore_case;
    ro.literal = literal;
    auto re = Regex::Compile(*pattern, ro);
    if (!re.ok())
      return ToolOutput::Error("grep: invalid regular expression: " + re.error().message);

    Search s{*re, ctx.cancel, context.value_or(0), limit_arg.value_or(kDefaultLimit)};
    std::error_code ec;
    fs::path cwd = ctx.cwd;
    std::string special = SpecialFileMessage(resolved->real, DisplayPath(cwd, resolved->abs));
    if (!special.empty()) return ToolOutput::Error(special + "; grep only searches regular files");
    if (fs::is_regular_file(resolved->real, ec)) {
      s.File(resolved->real, DisplayPath(cwd, resolved->abs));
    } else if (fs::is_directory(resolved->real, ec)) {
      SearchTree(&s, resolved->real, resolved->abs, glob_arg, ctx);
    } else {
      return ToolOutput::Error("path not found: " + *path_arg);
    }
    if (ctx.cancel.cancelled()) return ToolOutput::Error("grep was cancelled");
    if (!s.error.empty()) return ToolOutput::Error("grep: " + s.error);

    return Report(s, ctx);
  }

 private:
  struct Search;

  // Searches the files below `real` (shown through `abs`) that the glob, if any, lets through:
  // their path, or base name when it has no '/'.
  static void SearchTree(Search* s, const fs::path& real, const fs::path& abs,
                         const std::optional<std::string>& glob_arg, const ToolContext& ctx) {
    std::optional<Glob> filter;
    if (glob_arg && !glob_arg->empty()) filter.emplace(*glob_arg, GlobMode::kPath);
    bool basename_only = glob_arg && glob_arg->find('/') == std::string::npos;
    WalkOptions wo;
    wo.root = real;
    wo.workspace = ResolveRoot(ctx);
    wo.cancel = ctx.cancel;
    WalkTree(wo, [&](const fs::path& file, const std::string& rel, bool is_dir) {
      if (is_dir) return true;
      if (filter) {
        std::string_view name = rel;
        if (basename_only && name.rfind('/') != std::string_view::npos)
          name = name.substr(name.rfind('/') + 1);
        if (!filter->Match(name)) return true;
      }
      return s->File(file, DisplayPath(ctx.cwd, abs / rel));
    });
  }

  // The tool's answer: the lines found, or that none were, and why the search stopped early.
  static ToolOutput Report(const Search& s, ToolContext& ctx) {
    ToolOutput out;
    bool cut = false;
    std::string body = CutAndSave(ctx, "grep", s.out, kMaxShownLines, &cut);
    // Context groups end with a "--" separator; the last one separates nothing.
    if (body.size() >= 3 && body.compare(body.size() - 3, 3, "--\n") == 0)
      body.resize(body.size() - 3);
    if (!body.empty() && body.back() == '\n') body.pop_back();
    if (s.matches == 0) body = "No matches found";
    if (s.limit_hit)
      body += "\n[Stopped after " + std::to_string(s.limit) +
              " matches. Narrow the pattern or path, or raise limit.]";
    else if (s.bytes_hit)
      body += "\n[Output size limit reached after " + std::to_string(s.matches) +
              " matches. Narrow the pattern or path.]";
    out.content.push_back(ContentBlock::Text(std::move(body)));
    out.details["matches"] = Json::Int64(s.matches);
    out.details["files"] = Json::Int64(s.files_with_matches);
    out.details["truncated"] = s.limit_hit || s.bytes_hit || cut;
    return out;
  }

  static fs::path ResolveRoot(const ToolContext& ctx) {
    auto r = RealPath(ctx.cwd);
    return r.ok() ? *r : ctx.cwd;
  }

  struct Search {
    const Regex& re;
    const CancelToken& cancel;
    long long context;
    long long limit;
    std::string out{};
    long long matches = 0;
    long long files_with_matches = 0;
    bool limit_hit = false;
    bool bytes_hit = false;
    std::string error{};  // a matching error (a pattern limit), which stops the search

    // Whether line `index` of `shown` matches; nullopt after recording a matching error.
    std::optional<bool> Matches(std::string_view line, const std::string& shown, size_t index) {
      auto hit = re.Search(line);
      if (hit.ok()) return *hit;
      error = shown + ":" + std::to_string(index + 1) + ": " + hit.error().message;
      return std::nullopt;
    }

    // Returns false to stop the walk.
    bool File(const fs::path& real, const std::string& shown) {
      // FIFOs, devices and sockets are skipped (DiskFile refuses them), as are files over
      // kMaxFileBytes: neither is read at all.
      auto text = ReadDiskFile(real, kMaxFileBytes, cancel, false);
      if (!text.ok()) return !cancel.cancelled();
      if (LooksBinary(*text)) return true;
      const std::vector<std::string_view> lines = SplitLines(*text);
      long long printed_until = -1;  // index of the last line written, for context merging
      bool any = false;
      for (size_t i = 0; i < lines.size(); ++i) {
        if (i % 4096 == 4095 && cancel.cancelled()) return false;
        auto hit = Matches(lines[i], shown, i);
        if (!hit) return false;
        if (!*hit) continue;
        if (matches >= limit) {
          limit_hit = true;
          return false;
        }
        ++matches;
        any = true;
        if (!PrintMatch(lines, i, shown, &printed_until)) return false;
      }
      if (any) ++files_with_matches;
      if (any && context > 0) out += "--\n";
      return true;
    }

    // The matching line i with its context; false to stop the walk (a matching error, or the
    // output is over its limit).
    bool PrintMatch(const std::vector<std::string_view>& lines, size_t i, const std::string& shown,
                    long long* printed_until) {
      const auto at = static_cast<long long>(i);
      long long from = std::max<long long>(at - context, 0);
      from = std::max(from, *printed_until + 1);
      if (context > 0 && *printed_until >= 0 && from > *printed_until + 1) out += "--\n";
      for (long long j = from; j < at; ++j) PrintLine(lines, j, shown, '-');
      PrintLine(lines, at, shown, ':');
      *printed_until = at;
      if (!PrintTrailingContext(lines, i, shown, printed_until)) return false;
      if (out.size() <= kMaxOutputBytes) return true;
      bytes_hit = true;
      return false;
    }

    // `path:N: text` for a match, `path-N- text` for context.
    void PrintLine(const std::vector<std::string_view>& lines, long long j,
                   const std::string& shown, char mark) {
      out += shown + mark + std::to_string(j + 1) + mark + " " +
             ClipLine(lines[static_cast<size_t>(j)]) + "\n";
    }

    // Context after the match at line i, stopping before the next match (it prints itself);
    // false on a matching error.
    bool PrintTrailingContext(const std::vector<std::string_view>& lines, size_t i,
                              const std::string& shown, long long* printed_until) {
      const auto last =
          std::min(static_cast<long long>(i) + context, static_cast<long long>(lines.size()) - 1);
      for (long long j = static_cast<long long>(i) + 1; j <= last; ++j) {
        auto next = Matches(lines[static_cast<size_t>(j)], shown, static_cast<size_t>(j));
        if (!next) return false;
        if (*next) break;
        PrintLine(lines, j, shown, '-');
        *printed_until = j;
      }
      return true;
    }
  };
};

}  // namespace

std::unique_ptr<Tool> MakeGrepTool() { return std::make_unique<GrepTool>(); }

}  // namespace lousho::agent::tools
