// What the `task` tool asks of whoever can start child sessions (the host): run one subagent on
// a prompt and give back its final answer. The engine's tools know only this interface.
#pragma once

#include <string>
#include <vector>

#include "core/content.h"
#include "core/events.h"
#include "core/tool.h"
#include "support/status.h"

namespace lousho::agent {

// A subagent the model may choose, as the task tool describes it.
struct SubagentInfo {
  std::string name;
  std::string description;
};

// One task: the agent (empty: the general-purpose one), what it is asked, a short title.
struct SubagentTask {
  std::string agent;
  std::string prompt;
  std::string description;
};

// What a child session gave back.
struct SubagentAnswer {
  std::string agent;
  std::string text;  // its final answer, capped
  bool is_error = false;
  bool cancelled = false;
  Usage usage;               // every model call of the child
  std::string session_id;    // the child session's
  std::string session_file;  // where its history is saved; empty: not saved
  std::string stop_reason;   // end_turn | max_tokens | max_turn_requests | refusal | cancelled
  int tool_calls = 0;        // how many it made
};

// Thread-safe: tasks of one session may run side by side.
class Subagents {
 public:
  virtual ~Subagents() = default;
  virtual std::vector<SubagentInfo> List() const = 0;
  // Runs the task to its end (or until ctx.cancel fires: then the child is cancelled at once and
  // the answer says so). Progress goes to ctx.on_subagent. Fails only when no child could start
  // (an unknown agent, a model that cannot be built).
  virtual Result<SubagentAnswer> Run(const SubagentTask& task, const ToolContext& ctx) = 0;
};

// A subagent's tool calls (the latest 20) and the end of its text so far, as Markdown: what a
// door shows as the task call's content.
std::string SubagentSummary(const event::SubagentStep& step);

}  // namespace lousho::agent
