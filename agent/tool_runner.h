// The tool-call runner: runs an assistant message's tool calls (permissions first, read-only
// look-ups side by side, the rest in order), honours cancellation and the immediate interrupt
// mode, and records every call's result so that the history stays valid.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/hooks.h"
#include "agent/permissions.h"
#include "core/client_services.h"
#include "core/events.h"
#include "core/tool.h"

namespace lousho::agent {

class CheckpointStore;
class Emitter;
class InputQueues;
class Recorder;
class RuleWatch;
class SandboxGuard;
class Selection;
class TodoTracker;
class ToolSet;
struct Turn;

// Where the calls run.
struct ToolRunPlace {
  std::string session_id;
  std::filesystem::path cwd;
  std::vector<std::filesystem::path> roots;  // roots[0] == cwd
  ClientServices services;
  CheckpointStore* checkpoints = nullptr;        // [rewind] files kept before a call changes them
  SandboxGuard* sandbox = nullptr;               // [sandbox] commands' confinement; null: none
  tools::JobTable* jobs = nullptr;               // [jobs] the session's background jobs
  tools::SavedOutputs* saved_outputs = nullptr;  // [jobs] whole outputs cut for the model
};

// The parts a call touches. All outlive the runner.
struct ToolRunParts {
  ToolSet& tools;
  Selection& selection;  // the mode; the switch_mode tool changes it
  TodoTracker& todos;    // the todo tool's plan
  InputQueues& queues;   // steering that skips the remaining calls
  RuleWatch& rules;      // reminders in results
  Emitter& emitter;
  Recorder& recorder;
};

// Worker only.
class ToolCallRunner {
 public:
  // `rules`: the agent's permission rules (the policy also remembers the user's answers).
  ToolCallRunner(ToolRunParts parts, ToolRunPlace place, std::vector<PermissionRule> rules);
  ToolCallRunner(const ToolCallRunner&) = delete;
  ToolCallRunner& operator=(const ToolCallRunner&) = delete;

  // Runs the message's tool calls; false when the turn was cancelled meanwhile (every call still
  // has its result).
  bool Run(const Message& assistant, Turn& t);
  // The session's hooks (agent/hooks.h); null: none.
  void UseHooks(HookRunner* hooks) { hooks_ = hooks; }

 private:
  struct CallRun;

  bool RunOne(const ContentBlock& call, Turn& t);
  // How many calls from `first` on may run side by side: read-only look-ups the policy allows
  // without asking.
  size_t ParallelRun(const std::vector<const ContentBlock*>& calls, size_t first) const;
  bool RunParallel(const std::vector<const ContentBlock*>& calls, Turn& t);
  // The rules and the mode, then the editor: nullopt to run the call, else whether the turn goes
  // on (the call was completed).
  std::optional<bool> Permit(CallRun& run, const ContentBlock& call, Turn& t,
                             HookDecision hook = HookDecision::kNone);
  // Hooks: PreToolUse (nullopt: the call goes on, maybe `rewritten`), PostToolUse.
  std::optional<bool> PreToolHooks(CallRun& run, const ContentBlock& call, ContentBlock& rewritten,
                                   HookDecision& decision, Turn& t);
  void PostToolHooks(const ContentBlock& call, ToolOutput& out, Turn& t);
  bool Hooked(const std::string& tool) const;
  PermissionDecision Ask(const CallRun& run, const ContentBlock& call, const CancelToken& cancel);
  ToolOutput Execute(CallRun& run, const ContentBlock& call, Turn& t);
  ToolContext MakeContext(const CancelToken& cancel);
  CallRun Start(const ContentBlock& call, const std::shared_ptr<Tool>& tool, Turn& t);
  void Complete(CallRun& run, ToolOutput out, Turn& t);
  // Shows the steps of a subagent the call runs (the task tool) as the call's updates.
  void ShowSubagent(CallRun& run, Turn& t);
  void Fail(const std::vector<const ContentBlock*>& calls, size_t from, const char* why, Turn& t);

  ToolRunParts parts_;
  ToolRunPlace place_;
  PermissionPolicy policy_;
  HookRunner* hooks_ = nullptr;
  std::mutex subagent_mu_;   // one subagent step at a time (ShowSubagent)
  std::string calls_entry_;  // [rewind] the entry of the message whose calls run (checkpoints)
};

}  // namespace lousho::agent
