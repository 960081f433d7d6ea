// Subagents: the child sessions the `task` tool runs. A child is a Session on the same engine,
// with the chosen agent's instructions, model, thinking level, tools and permission rules; its
// steps reach the parent's editor as the task call's updates, its permission requests go to the
// parent's editor naming it, the parent's cancel cancels it at once, its history is saved in a
// file of its own beside the parent's (`<parent>.tasks/<id>.jsonl`), and only its final answer
// (capped) goes back to the parent's model.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "agent/session.h"
#include "config/agent_spec.h"
#include "core/subagents.h"
#include "support/worker_pool.h"

namespace lousho::host {

// The agents a session in `cwd` may start: the spec's `agents:`, the agent folder's `agents/`
// files, the project's `.lousho/agents/` files (the working folder, then the repository root),
// then the built-in general-purpose one; the first of a name wins. Files that cannot be used
// are skipped and told in `warnings`.
config::SubagentsSpec SubagentsFor(const config::AgentSpec* spec, const std::filesystem::path& cwd,
                                   std::vector<std::string>* warnings);

// The agents of the markdown files in `dir` (front matter and body; the file's name without
// `.md` when the front matter names none).
std::vector<config::SubagentSpec> LoadSubagentFiles(const std::filesystem::path& dir,
                                                    std::vector<std::string>* warnings);

// The folder of a session file's children (`<file without .jsonl>.tasks`).
std::filesystem::path SubagentFolder(const std::filesystem::path& session_file);
// Removes that folder (a deleted session's children); a failure is logged.
void RemoveSubagentFiles(const std::filesystem::path& session_file);

// Where a session's children run.
struct SubagentPlace {
  std::shared_ptr<const agent::AgentConfig> agent;  // the parent's
  std::shared_ptr<const config::SubagentsSpec> agents;
  agent::ClientServices services;  // the parent's
  WorkerPool* pool = nullptr;      // null: the process-wide pool
  std::string parent_file;         // the parent's session file; empty: children are not saved
  int depth = 1;                   // of the children started here
};

// Starts child sessions for one parent session. Thread-safe.
class SubagentRunner : public agent::Subagents {
 public:
  explicit SubagentRunner(SubagentPlace place);
  std::vector<agent::SubagentInfo> List() const override;
  Result<agent::SubagentAnswer> Run(const agent::SubagentTask& task,
                                    const agent::ToolContext& ctx) override;

 private:
  const config::SubagentSpec* Find(const std::string& name) const;
  std::filesystem::path ChildFile(const std::string& child_id) const;

  SubagentPlace place_;
};

// Gives `session` the task tool bound to child sessions, when its agent offers `task`. `place`
// holds the session's agent, services and pool; its agents and parent file are filled here.
void AttachSubagents(agent::Session& session, const config::AgentSpec* spec, SubagentPlace place);

}  // namespace lousho::host
