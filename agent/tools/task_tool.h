// The `task` tool: the model hands a piece of work to a subagent (a child session with its own
// instructions, model and tools) and gets back its final answer. The child sessions are the
// host's (core/subagents.h); this tool only describes the agents and turns a call into a task.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/subagents.h"
#include "core/tool.h"

namespace lousho::agent::tools {

struct TaskToolOptions {
  std::string name = "task";          // the name the model calls it by
  std::vector<SubagentInfo> agents;   // described to the model, in order
  int max_parallel = 4;               // calls of one message run side by side
  std::shared_ptr<Subagents> runner;  // null: the tool says subagents are not available here
};

std::unique_ptr<Tool> MakeTaskTool(TaskToolOptions options);

}  // namespace lousho::agent::tools
