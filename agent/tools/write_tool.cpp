// The `write` tool: create or overwrite a file, reporting the change as a diff.
#include <system_error>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/tool_util.h"
#include "core/paths.h"

namespace lousho::agent::tools {
namespace {

namespace fs = std::filesystem;

class WriteTool : public Tool {
 public:
  std::string name() const override { return "write"; }
  std::string description() const override {
    return "Write a file: creates it (and missing parent directories) or overwrites it "
           "entirely. Prefer edit for changing part of an existing file. At most 10 MiB; only "
           "regular files.";
  }
  Json::Value parameters() const override {
    return ObjectSchema({{"path", PropSchema("string",
                                             "Path to the file, relative to the "
                                             "working directory or absolute")},
                         {"content", PropSchema("string", "The complete new content")}},
                        {"path", "content"});
  }
  ToolKind kind() const override { return ToolKind::kEdit; }
  bool read_only() const override { return false; }
  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    return "Write " + PathSubject(args);
  }
  std::vector<ToolLocation> Locations(const Json::Value& args,
                                      const ToolContext& ctx) const override {
    std::string path = StringOr(args, "path");
    if (path.empty()) return {};
    return {ToolLocation{AbsolutePath(ctx.cwd, path).string(), 0}};
  }
  std::string PermissionSubject(const Json::Value& args) const override {
    return PathSubject(args);
  }

  std::vector<FileDiff> Preview(const Json::Value& args, const ToolContext& ctx) const override {
    ToolContext copy = ctx;
    Plan plan;
    if (!MakePlan(args, copy, &plan).empty()) return {};
    return {plan.diff};
  }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    Plan plan;
    std::string err = MakePlan(args, ctx, &plan);
    if (!err.empty()) return ToolOutput::Error(err);
    Status st = WriteTextForTool(ctx, plan.path, plan.diff.new_text);
    if (!st.ok())
      return ToolOutput::Error("cannot write " + plan.shown + ": " + st.error().message);
    size_t lines = SplitLines(plan.diff.new_text).size();
    ToolOutput out = ToolOutput::Text((plan.diff.old_text ? "Wrote " : "Created ") + plan.shown +
                                      " (" + std::to_string(plan.diff.new_text.size()) +
                                      " bytes, " + std::to_string(lines) + " lines)");
    out.diffs.push_back(plan.diff);
    out.details["path"] = plan.path.abs.string();
    out.details["bytes"] = Json::UInt64(plan.diff.new_text.size());
    out.details["created"] = !plan.diff.old_text.has_value();
    return out;
  }

 private:
  struct Plan {
    ResolvedPath path;
    std::string shown;
    FileDiff diff;
  };

  // Fills plan; returns an error message or "".
  static std::string MakePlan(const Json::Value& args, ToolContext& ctx, Plan* plan) {
    Args a(args);
    auto path_arg = a.String("path", true);
    auto content = a.String("content", true);
    if (!a.ok()) return "write: " + a.error();
    auto resolved = ResolveToolPath(ctx, *path_arg);
    if (!resolved.ok()) return resolved.error().message;
    plan->path = *resolved;
    plan->shown = DisplayPath(ctx.cwd, plan->path.abs);
    if (content->size() > kMaxTextFileBytes)
      return "write: content is " + ByteSize(content->size()) + ", more than the " +
             ByteSize(kMaxTextFileBytes) + " write accepts";
    std::error_code ec;
    fs::file_status st = fs::status(plan->path.real, ec);
    if (fs::is_directory(st)) return plan->shown + " is a directory";
    if (std::string special = SpecialFileMessage(plan->path.real, plan->shown); !special.empty())
      return special + "; write only writes regular files";
    // The old text is loaded for the diff, so a file too big to load is not replaced either.
    if (fs::is_regular_file(st)) {
      uintmax_t size = fs::file_size(plan->path.real, ec);
      if (!ec && size > kMaxTextFileBytes)
        return plan->shown + " is " + ByteSize(size) + ", more than the " +
               ByteSize(kMaxTextFileBytes) + " write replaces; use bash for files this large";
    }
    plan->diff.path = plan->path.abs.string();
    plan->diff.new_text = *content;
    if (fs::exists(st)) {
      auto old = ReadTextForTool(ctx, plan->path);
      if (!old.ok()) return "cannot read " + plan->shown + ": " + old.error().message;
      plan->diff.old_text = std::move(*old);
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<Tool> MakeWriteTool() { return std::make_unique<WriteTool>(); }

}  // namespace lousho::agent::tools
