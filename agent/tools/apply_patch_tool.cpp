// The `apply_patch` tool: a V4A patch (agent/tools/v4a_patch.h) adding, updating, deleting and
// moving files, planned whole before anything is written and undone if a write fails.
#include <set>
#include <system_error>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/tool_util.h"
#include "agent/tools/v4a_patch.h"
#include "core/freeform_tool.h"
#include "core/paths.h"

namespace lousho::agent::tools {
namespace {

namespace fs = std::filesystem;

// One file's change: its text before (nullopt: it does not exist) and after (nullopt: removed).
struct FileChange {
  ResolvedPath path;
  std::string shown;
  std::optional<std::string> before;
  std::optional<std::string> after;
  char mark = 'M';  // A added, M modified, D deleted (a move is a D and an A)
};

struct PatchPlan {
  std::vector<FileChange> changes;
};

// Resolves a path of the patch, refusing one named twice.
std::string ResolvePatchPath(const std::string& path, ToolContext& ctx, std::set<fs::path>* seen,
                             FileChange* c) {
  auto resolved = ResolveToolPath(ctx, path);
  if (!resolved.ok()) return resolved.error().message;
  c->path = *resolved;
  c->shown = DisplayPath(ctx.cwd, c->path.abs);
  if (!seen->insert(c->path.real).second)
    return c->shown + " is named twice in the patch; put all its changes in one hunk";
  return {};
}

// Loads an existing regular file's text into c->before; returns an error message or "".
std::string LoadExisting(ToolContext& ctx, const char* op, FileChange* c) {
  std::error_code ec;
  const fs::file_status st = fs::status(c->path.real, ec);
  if (fs::is_directory(st)) return c->shown + " is a directory";
  if (std::string special = SpecialFileMessage(c->path.real, c->shown); !special.empty())
    return special + "; apply_patch only changes regular files";
  const bool via_client = ctx.services.files && ctx.services.files->CanReadTextFile();
  if (!fs::exists(st) && !via_client)
    return std::string(op) + " " + c->shown + ": file not found (use \"*** Add File: \")";
  auto text = ReadTextForTool(ctx, c->path);
  if (!text.ok()) return "cannot read " + c->shown + ": " + text.error().message;
  c->before = std::move(*text);
  return {};
}

// Checks that a file to be created does not exist yet.
std::string CheckAbsent(const FileChange& c, const char* op) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(c.path.abs, ec)) || fs::exists(c.path.real, ec))
    return std::string(op) + " " + c.shown +
           ": the file already exists (use \"*** Update File: \" to change it)";
  return {};
}

// The changes of one file operation of the patch.
std::string PlanFile(const FilePatch& f, ToolContext& ctx, std::set<fs::path>* seen,
                     PatchPlan* plan) {
  FileChange c;
  if (std::string err = ResolvePatchPath(f.path, ctx, seen, &c); !err.empty()) return err;
  if (f.op == PatchOp::kAdd) {
    if (std::string err = CheckAbsent(c, "Add File:"); !err.empty()) return err;
    c.after = f.contents;
    c.mark = 'A';
    plan->changes.push_back(std::move(c));
    return {};
  }
  const char* op = f.op == PatchOp::kDelete ? "Delete File:" : "Update File:";
  if (std::string err = LoadExisting(ctx, op, &c); !err.empty()) return err;
  if (f.op == PatchOp::kDelete) {
    c.mark = 'D';
    plan->changes.push_back(std::move(c));
    return {};
  }
  auto after = ApplyV4aChunks(*c.before, f.chunks, c.shown);
  if (!after.ok()) return after.error().message;
  if (f.move_to.empty()) {
    c.after = std::move(*after);
    plan->changes.push_back(std::move(c));
    return {};
  }
  FileChange to;
  if (std::string err = ResolvePatchPath(f.move_to, ctx, seen, &to); !err.empty()) return err;
  if (std::string err = CheckAbsent(to, "Move to:"); !err.empty()) return err;
  to.after = std::move(*after);
  to.mark = 'A';
  c.mark = 'D';
  plan->changes.push_back(std::move(c));
  plan->changes.push_back(std::move(to));
  return {};
}

// Parses the patch and computes every file's new text; returns an error message or "".
std::string PlanPatch(const Json::Value& args, ToolContext& ctx, PatchPlan* plan) {
  Args a(args);
  auto input = a.String("input", false);
  if (!input) input = a.String("patch", false);
  if (!a.ok()) return "apply_patch: " + a.error();
  if (!input) return "apply_patch: input: required (the patch text)";
  auto files = ParseV4aPatch(*input);
  if (!files.ok()) return "apply_patch: " + files.error().message;
  std::set<fs::path> seen;
  for (const FilePatch& f : *files) {
    std::string err = PlanFile(f, ctx, &seen, plan);
    if (!err.empty()) return err;
  }
  return {};
}

// Puts one file back as it was before the patch (best effort: the write already failed once).
void Restore(ToolContext& ctx, const FileChange& c) {
  std::error_code ec;
  if (c.before) {
    (void)WriteTextForTool(ctx, c.path, *c.before);
  } else {
    fs::remove(c.path.real, ec);
  }
}

Status ApplyChange(ToolContext& ctx, const FileChange& c) {
  if (c.after) return WriteTextForTool(ctx, c.path, *c.after);
  if (ctx.before_change) ctx.before_change(c.path.real, nullptr);  // the rewind's checkpoint
  std::error_code ec;
  if (!fs::remove(c.path.real, ec) || ec)
    return MakeError(ErrorCode::kToolIo, ec ? ec.message() : "the file is gone");
  return Status::Ok();
}

// Every path the patch changes, with the tool whose rules decide it: a new file (an added one,
// a move's destination) as `write`, a changed or removed one (a move's source) as `edit`.
std::vector<PermissionTarget> PatchTargets(const Json::Value& args) {
  std::vector<PermissionTarget> targets;
  auto files = ParseV4aPatch(StringOr(args, "input", StringOr(args, "patch")));
  if (!files.ok()) return targets;
  for (const FilePatch& f : *files) {
    targets.push_back({f.path, f.op == PatchOp::kAdd ? "write" : "edit"});
    if (!f.move_to.empty()) targets.push_back({f.move_to, "write"});
  }
  return targets;
}

std::vector<std::string> PatchPaths(const Json::Value& args) {
  std::vector<std::string> paths;
  for (PermissionTarget& t : PatchTargets(args)) paths.push_back(std::move(t.subject));
  return paths;
}

class ApplyPatchTool : public Tool {
 public:
  std::string name() const override { return "apply_patch"; }
  std::string description() const override {
    return "Add, update, delete and move files with one patch. The input is the patch text:\n"
           "*** Begin Patch\n"
           "*** Add File: path/new.txt\n"
           "+every line of the new file, each starting with +\n"
           "*** Update File: path/old.txt\n"
           "*** Move to: path/renamed.txt   (optional)\n"
           "@@ a line the change comes after, e.g. a function header   (optional)\n"
           " three lines of context before\n"
           "-a line removed\n"
           "+a line added\n"
           " three lines of context after\n"
           "*** Delete File: path/gone.txt\n"
           "*** End Patch\n"
           "Paths are relative to the working directory. Context and removed lines must match "
           "the file. Either every change applies or none does.";
  }
  // A freeform tool: where the API has custom tools the patch goes raw, under its grammar.
  Json::Value parameters() const override {
    Json::Value s = ObjectSchema(
        {{"input",
          PropSchema("string", "The whole patch, from \"*** Begin Patch\" to \"*** End Patch\"")}},
        {"input"});
    s[std::string(kFreeformGrammarKey)] = kV4aGrammar;
    return s;
  }
  ToolKind kind() const override { return ToolKind::kEdit; }
  bool read_only() const override { return false; }
  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    std::vector<std::string> paths = PatchPaths(args);
    if (paths.empty()) return "Apply patch";
    std::string title = "Patch " + paths[0];
    for (size_t i = 1; i < paths.size() && i < 3; ++i) title += ", " + paths[i];
    if (paths.size() > 3) title += " and " + std::to_string(paths.size() - 3) + " more";
    return title;
  }
  std::vector<ToolLocation> Locations(const Json::Value& args,
                                      const ToolContext& ctx) const override {
    std::vector<ToolLocation> out;
    for (const std::string& p : PatchPaths(args))
      out.push_back(ToolLocation{AbsolutePath(ctx.cwd, p).string(), 0});
    return out;
  }
  // The rules decide each path on its own (PermissionTargets); this is the first one, for what
  // only looks at one subject (hooks' matchers, logs).
  std::string PermissionSubject(const Json::Value& args) const override {
    std::vector<std::string> paths = PatchPaths(args);
    return paths.empty() ? std::string() : paths[0];
  }
  std::vector<PermissionTarget> PermissionTargets(const Json::Value& args) const override {
    return PatchTargets(args);
  }
  // A patch that cannot apply (a path outside the workspace, a hunk that does not match) fails
  // before the user is asked about it.
  std::string CheckBeforeAsking(const Json::Value& args, const ToolContext& ctx) const override {
    ToolContext copy = ctx;
    PatchPlan plan;
    return PlanPatch(args, copy, &plan);
  }
  std::vector<FileDiff> Preview(const Json::Value& args, const ToolContext& ctx) const override {
    ToolContext copy = ctx;
    PatchPlan plan;
    if (!PlanPatch(args, copy, &plan).empty()) return {};
    return Diffs(plan);
  }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    PatchPlan plan;
    std::string err = PlanPatch(args, ctx, &plan);
    if (!err.empty()) return ToolOutput::Error(err);
    for (size_t i = 0; i < plan.changes.size(); ++i) {
      const FileChange& c = plan.changes[i];
      Status st = ApplyChange(ctx, c);
      if (st.ok()) continue;
      for (size_t k = i; k-- > 0;) Restore(ctx, plan.changes[k]);
      return ToolOutput::Error("cannot " + std::string(c.after ? "write " : "delete ") + c.shown +
                               ": " + st.error().message + "; the patch was not applied");
    }
    std::string text = "Applied the patch:";
    Json::Value files(Json::arrayValue);
    for (const FileChange& c : plan.changes) {
      text += std::string("\n") + c.mark + " " + c.shown;
      Json::Value f(Json::objectValue);
      f["path"] = c.path.abs.string();
      f["change"] = std::string(1, c.mark);
      files.append(f);
    }
    ToolOutput out = ToolOutput::Text(text);
    out.diffs = Diffs(plan);
    out.details["files"] = files;
    return out;
  }

 private:
  static std::vector<FileDiff> Diffs(const PatchPlan& plan) {
    std::vector<FileDiff> diffs;
    for (const FileChange& c : plan.changes)
      diffs.push_back(FileDiff{c.path.abs.string(), c.before, c.after.value_or("")});
    return diffs;
  }
};

}  // namespace

std::unique_ptr<Tool> MakeApplyPatchTool() { return std::make_unique<ApplyPatchTool>(); }

}  // namespace lousho::agent::tools
