// The `bash_output` and `bash_kill` tools: a background job's new output, and its end
// (agent/tools/jobs.h holds the jobs).
#include <string>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/jobs.h"
#include "agent/tools/tool_util.h"
#include "support/regex.h"

namespace lousho::agent::tools {
namespace {

constexpr size_t kJobOutputLines = 2000;

std::string JobState(const JobInfo& j) {
  if (j.running) return j.id + " is running (pid " + std::to_string(j.pid) + ")";
  if (j.killed) return j.id + " was stopped";
  if (j.exit_code) return j.id + " exited with code " + std::to_string(*j.exit_code);
  return j.id + " has ended";
}

// The lines of `text` that `re` matches.
Result<std::string> MatchingLines(const std::string& text, const Regex& re) {
  std::string kept;
  for (std::string_view line : SplitLines(text)) {
    auto hit = re.Search(line);
    if (!hit.ok()) return hit.error();
    if (*hit) {
      kept.append(line);
      kept += '\n';
    }
  }
  return kept;
}

class BashOutputTool : public Tool {
 public:
  std::string name() const override { return "bash_output"; }
  std::string description() const override {
    return "Read the output a background job (started by bash with background: true) wrote "
           "since the last read, and whether it still runs. Optional filter: a regular "
           "expression; only the new lines that match are returned (the others are consumed "
           "too).";
  }
  Json::Value parameters() const override {
    return ObjectSchema({{"id", PropSchema("string", "The job id bash returned, e.g. job1")},
                         {"filter", PropSchema("string", "Regular expression over the lines")}},
                        {"id"});
  }
  ToolKind kind() const override { return ToolKind::kRead; }
  bool read_only() const override { return true; }
  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    return "output of " + Shorten(StringOr(args, "id"), 40);
  }
  std::string PermissionSubject(const Json::Value& args) const override {
    return StringOr(args, "id");
  }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    Args a(args);
    auto id = a.String("id", true);
    auto filter = a.String("filter", false);
    if (!a.ok()) return ToolOutput::Error("bash_output: " + a.error());
    if (!ctx.jobs) return ToolOutput::Error("bash_output: this session has no background jobs");
    std::optional<Regex> re;
    if (filter && !filter->empty()) {
      auto compiled = Regex::Compile(*filter);
      if (!compiled.ok())
        return ToolOutput::Error("bash_output: invalid filter: " + compiled.error().message);
      re = std::move(*compiled);
    }
    auto read = ctx.jobs->Read(*id);
    if (!read.ok()) return ToolOutput::Error("bash_output: " + read.error().message);
    std::string text = std::move(read->output);
    if (re) {
      auto kept = MatchingLines(text, *re);
      if (!kept.ok()) return ToolOutput::Error("bash_output: filter: " + kept.error().message);
      text = std::move(*kept);
    }
    if (ctx.on_output && !text.empty()) ctx.on_output(text, text);  // the editor's view
    bool cut = false;
    std::string body = text.empty() ? "(no new output)"
                                    : CutAndSave(ctx, "bash_output", text, kJobOutputLines, &cut);
    if (read->dropped > 0)
      body = "[" + ByteSize(read->dropped) + " of earlier output were not kept]\n" + body;
    body += "\n\n" + JobState(read->info);
    ToolOutput out = ToolOutput::Text(std::move(body));
    out.details["jobId"] = read->info.id;
    out.details["running"] = read->info.running;
    if (read->info.exit_code) out.details["exitCode"] = *read->info.exit_code;
    out.details["truncated"] = cut || read->dropped > 0;
    return out;
  }
};

class BashKillTool : public Tool {
 public:
  std::string name() const override { return "bash_kill"; }
  std::string description() const override {
    return "Stop a background job (started by bash with background: true) and everything it "
           "started.";
  }
  Json::Value parameters() const override {
    return ObjectSchema({{"id", PropSchema("string", "The job id bash returned, e.g. job1")}},
                        {"id"});
  }
  ToolKind kind() const override { return ToolKind::kOther; }
  // Only ends what this session's model started itself.
  bool read_only() const override { return true; }
  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    return "stop " + Shorten(StringOr(args, "id"), 40);
  }
  std::string PermissionSubject(const Json::Value& args) const override {
    return StringOr(args, "id");
  }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    Args a(args);
    auto id = a.String("id", true);
    if (!a.ok()) return ToolOutput::Error("bash_kill: " + a.error());
    if (!ctx.jobs) return ToolOutput::Error("bash_kill: this session has no background jobs");
    auto info = ctx.jobs->Kill(*id);
    if (!info.ok()) return ToolOutput::Error("bash_kill: " + info.error().message);
    ToolOutput out = ToolOutput::Text(JobState(*info));
    out.details["jobId"] = info->id;
    out.details["running"] = info->running;
    return out;
  }
};

}  // namespace

std::unique_ptr<Tool> MakeBashOutputTool() { return std::make_unique<BashOutputTool>(); }
std::unique_ptr<Tool> MakeBashKillTool() { return std::make_unique<BashKillTool>(); }

}  // namespace lousho::agent::tools
