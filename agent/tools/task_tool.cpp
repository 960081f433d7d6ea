// The `task` tool: one call, one subagent run to its end.
#include "agent/tools/task_tool.h"

#include "agent/tools/tool_util.h"
#include "support/json_util.h"

namespace lousho::agent::tools {

namespace {

Json::Value TaskUsageJson(const Usage& u) {
  Json::Value j(Json::objectValue);
  j["input"] = static_cast<Json::Int64>(u.input);
  j["output"] = static_cast<Json::Int64>(u.output);
  j["cacheRead"] = static_cast<Json::Int64>(u.cache_read);
  j["cacheWrite"] = static_cast<Json::Int64>(u.cache_write);
  j["cost"] = u.cost;
  return j;
}

class TaskTool : public Tool {
 public:
  explicit TaskTool(TaskToolOptions options) : options_(std::move(options)) {
    description_ =
        "Hand a task to a subagent: it works in a session of its own (its own context, "
        "instructions and tools, the same files) and its final answer is this call's result. "
        "Use it for searches and investigations that would fill your context, or for "
        "independent pieces of work; several calls in one message run side by side. Give a "
        "complete, self-contained prompt: the subagent sees nothing of this conversation. Say "
        "what it should answer with.\n\nAgents (`agent`):";
    for (const auto& a : options_.agents) description_ += "\n- " + a.name + ": " + a.description;
  }

  std::string name() const override { return options_.name; }
  std::string description() const override { return description_; }
  Json::Value parameters() const override {
    return ObjectSchema(
        {{"prompt", PropSchema("string", "The task, complete and self-contained")},
         {"agent", PropSchema("string", "The agent to run (default: general-purpose)")},
         {"description",
          PropSchema("string", "A few words saying what the task is, for the title")}},
        {"prompt"});
  }
  ToolKind kind() const override { return ToolKind::kThink; }
  bool read_only() const override { return false; }
  int max_parallel() const override { return options_.max_parallel; }
  std::string Title(const Json::Value& args, const ToolContext& /*ctx*/) const override {
    std::string what = AsString(MemberOrNull(args, "description")).value_or("");
    if (what.empty()) {
      what = AsString(MemberOrNull(args, "prompt")).value_or("");
      if (what.size() > 60) what = what.substr(0, Utf8Prefix(what, 60)) + "…";
    }
    return "Task (" + AgentOf(args) + "): " + what;
  }
  std::string PermissionSubject(const Json::Value& args) const override { return AgentOf(args); }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    Args a(args);
    auto prompt = a.String("prompt", true);
    auto agent = a.String("agent", false);
    auto what = a.String("description", false);
    if (!a.ok()) return ToolOutput::Error(options_.name + ": " + a.error());
    if (prompt->empty()) return ToolOutput::Error(options_.name + ": `prompt` is empty");
    if (!options_.runner)
      return ToolOutput::Error(options_.name + ": subagents cannot be started here");
    SubagentTask task{agent.value_or(""), *prompt, what.value_or("")};
    Result<SubagentAnswer> answer = options_.runner->Run(task, ctx);
    if (!answer.ok()) return ToolOutput::Error(options_.name + ": " + answer.error().message);
    ToolOutput out = ToolOutput::Text(answer->text);
    out.is_error = answer->is_error;
    out.usage = answer->usage;
    Json::Value& d = out.details;
    d["agent"] = answer->agent;
    d["sessionId"] = answer->session_id;
    if (!answer->session_file.empty()) d["sessionFile"] = answer->session_file;
    d["stopReason"] = answer->stop_reason;
    d["toolCalls"] = answer->tool_calls;
    d["usage"] = TaskUsageJson(answer->usage);
    return out;
  }

 private:
  static std::string AgentOf(const Json::Value& args) {
    std::string agent = AsString(MemberOrNull(args, "agent")).value_or("");
    return agent.empty() ? "general-purpose" : agent;
  }

  TaskToolOptions options_;
  std::string description_;
};

}  // namespace

std::unique_ptr<Tool> MakeTaskTool(TaskToolOptions options) {
  return std::make_unique<TaskTool>(std::move(options));
}

}  // namespace lousho::agent::tools
