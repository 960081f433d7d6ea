// The `find` tool: files by glob below a directory, honouring .gitignore.
#include <algorithm>
#include <system_error>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/gitignore.h"
#include "agent/tools/tool_util.h"
#include "core/paths.h"
#include "support/glob.h"

namespace lousho::agent::tools {
namespace {

namespace fs = std::filesystem;

constexpr long long kDefaultLimit = 1000;
// Collected before sorting; beyond this the walk stops (the notice says so).
constexpr size_t kMaxCollected = 100000;

class FindTool : public FolderTool {
 public:
  std::string name() const override { return "find"; }
  std::string description() const override {
    return "Find files by glob pattern below a directory (default: the working directory). "
           "A pattern without '/' matches file names at any depth (`*.h`); with '/' it matches "
           "the path relative to the search directory (`src/**/*.cpp`, `**/test_*.py`, `docs/**`). "
           "Supports *, ?, **, [abc] and {a,b}. Skips .git and .gitignored files. Results are "
           "sorted; directories end with '/'. Default limit 1000.";
  }
  Json::Value parameters() const override {
    Json::Value limit = PropSchema("integer", "Maximum number of results (default 1000)");
    limit["minimum"] = 1;
    return ObjectSchema(
        {{"pattern", PropSchema("string", "Glob pattern, e.g. `**/*.cpp` or `*.md`")},
         {"path", PropSchema("string", "Directory to search in (default: working directory)")},
         {"limit", limit}},
        {"pattern"});
  }
  ToolKind kind() const override { return ToolKind::kSearch; }
  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    return SearchTitle("Find", args);
  }

  // The entries below `real` (shown through `abs`) whose path, or base name when the pattern has
  // no '/', matches: at most kMaxCollected; returns whether there were more.
  static bool CollectMatches(const std::string& pat, const fs::path& real, const fs::path& abs,
                             ToolContext& ctx, std::vector<std::string>* found) {
    const Glob glob(pat, GlobMode::kPath);
    const bool basename_only = pat.find('/') == std::string::npos;
    bool capped = false;
    WalkOptions wo;
    wo.root = real;
    auto real_cwd = RealPath(ctx.cwd);
    wo.workspace = real_cwd.ok() ? *real_cwd : ctx.cwd;
    wo.cancel = ctx.cancel;
    WalkTree(wo, [&](const fs::path& /*abs*/, const std::string& rel, bool is_dir) {
      std::string_view subject = rel;
      if (basename_only && rel.rfind('/') != std::string::npos)
        subject = subject.substr(rel.rfind('/') + 1);
      if (!glob.Match(subject)) return true;
      std::string shown = DisplayPath(ctx.cwd, abs / rel);
      if (is_dir) shown += '/';
      found->push_back(std::move(shown));
      if (found->size() < kMaxCollected) return true;
      capped = true;
      return false;
    });
    return capped;
  }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    Args a(args);
    auto pattern = a.String("pattern", true);
    auto path_arg = a.String("path", false);
    auto limit_arg = a.Int("limit", 1);
    if (!a.ok()) return ToolOutput::Error("find: " + a.error());
    std::string pat = *pattern;
    while (pat.rfind("./", 0) == 0) pat.erase(0, 2);
    if (pat.empty()) return ToolOutput::Error("find: pattern is empty");
    auto resolved = ResolveToolPath(ctx, path_arg.value_or("."));
    if (!resolved.ok()) return ToolOutput::Error(resolved.error().message);
    std::error_code ec;
    if (!fs::is_directory(resolved->real, ec))
      return ToolOutput::Error("not a directory: " + path_arg.value_or("."));

    std::vector<std::string> found;
    const bool capped = CollectMatches(pat, resolved->real, resolved->abs, ctx, &found);
    if (ctx.cancel.cancelled()) return ToolOutput::Error("find was cancelled");
    std::sort(found.begin(), found.end());
    const long long limit = limit_arg.value_or(kDefaultLimit);
    const size_t total = found.size();
    bool truncated = static_cast<long long>(total) > limit;
    if (truncated) found.resize(static_cast<size_t>(limit));
    std::string body;
    for (const auto& f : found) body += f + "\n";
    if (!body.empty()) body.pop_back();
    if (total == 0) body = "No files found matching " + pat;
    if (truncated || capped)
      body += "\n[Showing " + std::to_string(found.size()) + " of " + (capped ? "more than " : "") +
              std::to_string(total) +
              " results. Use a more specific pattern or path, or raise limit.]";
    ToolOutput out = ToolOutput::Text(std::move(body));
    out.details["count"] = Json::UInt64(total);
    out.details["truncated"] = truncated || capped;
    return out;
  }
};

}  // namespace

std::unique_ptr<Tool> MakeFindTool() { return std::make_unique<FindTool>(); }

}  // namespace lousho::agent::tools
