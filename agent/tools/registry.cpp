// The built-in tool registry: names to factories.
#include "agent/tools/builtin_tools.h"
#include "agent/tools/task_tool.h"

namespace lousho::agent {

std::unique_ptr<Tool> MakeBuiltinTool(const std::string& name) {
  if (name == "read") return tools::MakeReadTool();
  if (name == "write") return tools::MakeWriteTool();
  if (name == "edit") return tools::MakeEditTool();
  if (name == "bash") return tools::MakeBashTool();
  if (name == "grep") return tools::MakeGrepTool();
  if (name == "find") return tools::MakeFindTool();
  if (name == "ls") return tools::MakeLsTool();
  if (name == "todo") return tools::MakeTodoTool();
  if (name == "ask") return tools::MakeAskTool();
  if (name == "switch_mode") return tools::MakeSwitchModeTool();
  if (name == "task") return tools::MakeTaskTool({});  // the host binds it to child sessions
  if (name == "bash_output") return tools::MakeBashOutputTool();
  if (name == "bash_kill") return tools::MakeBashKillTool();
  if (name == "fetch") return tools::MakeFetchTool();
  if (name == "apply_patch") return tools::MakeApplyPatchTool();
  return nullptr;
}

// apply_patch last: agents get it only by name or for the models trained on it
// (host/agent_builder.cpp).
const std::vector<std::string>& BuiltinToolNames() {
  static const std::vector<std::string> kNames = {
      "read", "write", "edit",        "bash",        "grep",      "find", "ls",
      "todo", "ask",   "switch_mode", "bash_output", "bash_kill", "task", "apply_patch"};
  return kNames;
}

const std::vector<std::string>& KnownToolNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names = BuiltinToolNames();
    names.emplace_back("fetch");  // off unless a spec lists it
    return names;
  }();
  return kNames;
}

}  // namespace lousho::agent
