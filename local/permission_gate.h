// `lousho run`'s answer to permission requests, with no one to ask: the calls the agent's policy
// would ask about run when an --allow pattern matches them (or with --yes), and are refused
// otherwise. A refusal is reported (never silent) and counted: it makes the run's exit code 3.
#pragma once

#include <json/json.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "agent/permissions.h"
#include "core/client_services.h"
#include "core/tool.h"
#include "support/status.h"

namespace lousho::local {

// An --allow / --deny flag: "TOOL" or "TOOL:PATTERN", TOOL a tool's name or a glob over names
// ("*", "mcp__github__*") and PATTERN as in the spec's permission rules ("git status*",
// "docs/**"; default "*"). kUsage when the tool part is empty.
Result<agent::PermissionRule> ParseRuleFlag(std::string_view text, agent::PermissionAction action);

// A call refused because it would have asked.
struct Refusal {
  std::string tool_call_id;
  std::string tool_name;
  std::string title;
  std::string subagent;    // a subagent's call: its name
  std::string suggestion;  // the --allow flag that would let it (and calls like it) run
};

struct GateOptions {
  std::vector<agent::PermissionRule> allow;  // --allow, in order
  bool yes = false;                          // --yes: every call that would ask runs
  std::filesystem::path cwd;                 // what file patterns are relative to
};

// Thread-safe (tool threads of the session and its subagents ask at once).
class PermissionGate : public agent::PermissionPrompter {
 public:
  // The tool a request names (the session's; null: unknown, then a built-in of that name is
  // tried). Each refusal is passed to `on_refusal` (from the asking thread).
  using ToolLookup = std::function<std::shared_ptr<agent::Tool>(const std::string& name)>;
  PermissionGate(GateOptions options, std::function<void(const Refusal&)> on_refusal);

  void SetToolLookup(ToolLookup lookup);
  agent::PermissionDecision RequestPermission(const std::string& session_id,
                                              const agent::PermissionRequest& request,
                                              const CancelToken& cancel) override;
  int refusals() const;

 private:
  std::shared_ptr<agent::Tool> FindTool(const std::string& name) const;

  const bool yes_;
  agent::PermissionPolicy allow_;  // the --allow rules, then "ask" for everything else
  std::function<void(const Refusal&)> on_refusal_;
  mutable std::mutex mu_;
  ToolLookup lookup_;  // guarded by mu_
  int refusals_ = 0;   // guarded by mu_
};

}  // namespace lousho::local
