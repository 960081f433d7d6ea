// The `todo` tool: the model's own plan, replacing the session's plan entries.
#include "agent/tools/builtin_tools.h"
#include "agent/tools/tool_util.h"

namespace lousho::agent::tools {
namespace {

class TodoTool : public Tool {
 public:
  std::string name() const override { return "todo"; }
  std::string description() const override {
    return "Keep your plan for the task: pass the complete list of todos each time (it replaces "
           "the previous one). Each todo has content, status (pending, in_progress, completed) "
           "and an optional priority (high, medium, low). Keep exactly one todo in_progress "
           "while working, and mark todos completed as soon as they are done.";
  }
  Json::Value parameters() const override {
    Json::Value status = PropSchema("string", "pending | in_progress | completed");
    status["enum"].append("pending");
    status["enum"].append("in_progress");
    status["enum"].append("completed");
    Json::Value priority = PropSchema("string", "high | medium | low (default medium)");
    priority["enum"].append("high");
    priority["enum"].append("medium");
    priority["enum"].append("low");
    Json::Value item = ObjectSchema({{"content", PropSchema("string", "What to do")},
                                     {"status", status},
                                     {"priority", priority}},
                                    {"content", "status"});
    Json::Value todos(Json::objectValue);
    todos["type"] = "array";
    todos["description"] = "The complete, updated list of todos";
    todos["items"] = item;
    return ObjectSchema({{"todos", todos}}, {"todos"});
  }
  ToolKind kind() const override { return ToolKind::kThink; }
  // It changes the session's plan, so it is not run in parallel with itself; the permission
  // policy still allows it everywhere (kThink), plan mode included.
  bool read_only() const override { return false; }
  std::string Title(const Json::Value& /*args*/, const ToolContext& /*ctx*/) const override {
    return "Update plan";
  }
  std::string PermissionSubject(const Json::Value& /*args*/) const override { return ""; }

  ToolOutput Run(const Json::Value& args, ToolContext& ctx) override {
    Args a(args);
    const Json::Value* todos = a.Array("todos", true);
    if (!a.ok()) return ToolOutput::Error("todo: " + a.error());
    std::vector<PlanEntry> entries;
    for (Json::ArrayIndex i = 0; i < todos->size(); ++i) {
      const std::string at = "todos[" + std::to_string(i) + "].";
      const Json::Value& t = ElementOrNull(*todos, i);
      if (!t.isObject())
        return ToolOutput::Error("todo: todos[" + std::to_string(i) + "]: expected object");
      Args e(t);
      auto content = e.String("content", true);
      auto status = e.String("status", false);
      auto priority = e.String("priority", false);
      if (!e.ok()) return ToolOutput::Error("todo: " + at + e.error());
      PlanEntry p;
      p.content = *content;
      p.status = status.value_or("pending");
      p.priority = priority.value_or("medium");
      if (p.status != "pending" && p.status != "in_progress" && p.status != "completed")
        return ToolOutput::Error("todo: " + at +
                                 "status: expected pending, in_progress or "
                                 "completed, got \"" +
                                 p.status + "\"");
      if (p.priority != "high" && p.priority != "medium" && p.priority != "low")
        return ToolOutput::Error("todo: " + at + "priority: expected high, medium or low, got \"" +
                                 p.priority + "\"");
      entries.push_back(std::move(p));
    }

    size_t done = 0, active = 0, pending = 0;
    std::string list;
    Json::Value details(Json::arrayValue);
    for (const auto& p : entries) {
      const char* mark = "[ ]";
      if (p.status == "completed") {
        mark = "[x]", ++done;
      } else if (p.status == "in_progress") {
        mark = "[>]", ++active;
      } else {
        ++pending;
      }
      list += std::string("\n") + mark + " " + p.content;
      Json::Value d;
      d["content"] = p.content;
      d["status"] = p.status;
      d["priority"] = p.priority;
      details.append(d);
    }
    std::string summary = entries.empty()
                              ? "Plan cleared"
                              : "Plan updated: " + std::to_string(entries.size()) + " todos (" +
                                    std::to_string(done) + " completed, " + std::to_string(active) +
                                    " in progress, " + std::to_string(pending) + " pending)" + list;
    ToolOutput out = ToolOutput::Text(std::move(summary));
    out.details["todos"] = details;
    if (ctx.plan) {
      *ctx.plan = std::move(entries);
      out.plan_changed = true;
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Tool> MakeTodoTool() { return std::make_unique<TodoTool>(); }

}  // namespace lousho::agent::tools
