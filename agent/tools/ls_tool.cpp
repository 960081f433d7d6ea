// The `ls` tool: one directory's entries, sorted, directories marked with '/'.
#include <algorithm>
#include <system_error>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/tool_util.h"
#include "core/paths.h"

namespace lousho::agent::tools {
namespace {

namespace fs = std::filesystem;

class LsTool : public FolderTool {
 public:
  static constexpr long long kDefaultLimit = 500;

  std::string name() const override { return "ls"; }
  std::string description() const override {
    return "List a directory (default: the working directory): entries sorted by name, "
           "directories with a trailing '/', dotfiles included. Default limit 500 entries.";
  }
  Json::Value parameters() const override {
    Json::Value limit = PropSchema("integer", "Maximum number of entries (default 500)");
    limit["minimum"] = 1;
    return ObjectSchema(
        {{"path", PropSchema("string", "Directory to list (default: working directory)")},
         {"limit", limit}},
        {});
  }
  ToolKind kind() const override { return ToolKind::kRead; }
  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    std::string path = PathSubject(args);
    return "List " + (path.empty() ? std::string(".") : path);
  }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    Args a(args);
    auto path_arg = a.String("path", false);
    auto limit_arg = a.Int("limit", 1);
    if (!a.ok()) return ToolOutput::Error("ls: " + a.error());
    std::string given = path_arg.value_or(".");
    if (given.empty()) given = ".";
    auto resolved = ResolveToolPath(ctx, given);
    if (!resolved.ok()) return ToolOutput::Error(resolved.error().message);
    std::error_code ec;
    if (!fs::exists(resolved->real, ec)) return ToolOutput::Error("path not found: " + given);
    if (!fs::is_directory(resolved->real, ec))
      return ToolOutput::Error(given + " is not a directory; use read for files");
    std::vector<std::string> names;
    for (fs::directory_iterator it(resolved->real, ec), end; !ec && it != end; it.increment(ec)) {
      std::string n = it->path().filename().string();
      std::error_code dec;
      // Following symlinks here only decides the '/' suffix; nothing is read through them.
      if (it->is_directory(dec)) n += '/';
      names.push_back(std::move(n));
    }
    if (ec) return ToolOutput::Error("cannot list " + given + ": " + ec.message());
    std::sort(names.begin(), names.end());
    const size_t total = names.size();
    const long long limit = limit_arg.value_or(kDefaultLimit);
    bool truncated = static_cast<long long>(total) > limit;
    if (truncated) names.resize(static_cast<size_t>(limit));
    std::string body;
    for (const auto& n : names) body += n + "\n";
    if (!body.empty()) body.pop_back();
    if (total == 0) body = "(empty directory)";
    if (truncated)
      body += "\n[Showing " + std::to_string(limit) + " of " + std::to_string(total) +
              " entries. Raise limit to see more.]";
    ToolOutput out = ToolOutput::Text(std::move(body));
    out.details["count"] = Json::UInt64(total);
    out.details["truncated"] = truncated;
    return out;
  }
};

}  // namespace

std::unique_ptr<Tool> MakeLsTool() { return std::make_unique<LsTool>(); }

}  // namespace lousho::agent::tools
