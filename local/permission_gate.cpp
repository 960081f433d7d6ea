// The --allow / --deny flags and the gate that answers permission requests in `lousho run`.
#include "local/permission_gate.h"

#include <utility>

namespace lousho::local {
namespace {

// The --allow rules, then one that asks about everything else: a call no flag names is refused
// even when the tool is read-only (the agent's policy asked about it for a reason).
std::vector<agent::PermissionRule> GateRules(std::vector<agent::PermissionRule> allow) {
  allow.push_back({"*", "*", agent::PermissionAction::kAsk});
  return allow;
}

// The flag's text for a rule: "TOOL" when its pattern is "*", else "TOOL:PATTERN".
std::string RuleFlagText(const std::string& tool, const std::string& pattern) {
  return pattern == "*" ? tool : tool + ":" + pattern;
}

}  // namespace

Result<agent::PermissionRule> ParseRuleFlag(std::string_view text, agent::PermissionAction action) {
  const size_t colon = text.find(':');
  agent::PermissionRule rule;
  rule.action = action;
  rule.tool = std::string(text.substr(0, colon));
  if (colon != std::string_view::npos) rule.pattern = std::string(text.substr(colon + 1));
  if (rule.tool.empty() || rule.pattern.empty())
    return MakeError(ErrorCode::kUsage, "'" + std::string(text) +
                                            "': expected TOOL or TOOL:PATTERN (e.g. read, "
                                            "'bash:git status*', 'write:docs/**')");
  return rule;
}

PermissionGate::PermissionGate(GateOptions options, std::function<void(const Refusal&)> on_refusal)
    : yes_(options.yes),
      allow_(GateRules(std::move(options.allow)), std::move(options.cwd)),
      on_refusal_(std::move(on_refusal)) {}

void PermissionGate::SetToolLookup(ToolLookup lookup) {
  std::lock_guard<std::mutex> lock(mu_);
  lookup_ = std::move(lookup);
}

std::shared_ptr<agent::Tool> PermissionGate::FindTool(const std::string& name) const {
  ToolLookup lookup;
  {
    std::lock_guard<std::mutex> lock(mu_);
    lookup = lookup_;
  }
  std::shared_ptr<agent::Tool> tool = lookup ? lookup(name) : nullptr;
  if (!tool) tool = agent::MakeBuiltinTool(name);  // a subagent's tool the session lacks
  return tool;
}

agent::PermissionDecision PermissionGate::RequestPermission(const std::string& /*session_id*/,
                                                            const agent::PermissionRequest& request,
                                                            const CancelToken& cancel) {
  if (cancel.cancelled()) return agent::PermissionDecision::kCancelled;
  if (yes_) return agent::PermissionDecision::kAllowOnce;
  const std::shared_ptr<agent::Tool> tool = FindTool(request.tool_name);
  if (tool && allow_.Decide(*tool, request.raw_input, agent::PermissionMode::kDefault) ==
                  agent::PermissionAction::kAllow)
    return agent::PermissionDecision::kAllowOnce;
  Refusal refusal;
  refusal.tool_call_id = request.tool_call_id;
  refusal.tool_name = request.tool_name;
  refusal.title = request.title.empty() ? request.tool_name : request.title;
  refusal.subagent = request.subagent;
  refusal.suggestion =
      "--allow '" +
      RuleFlagText(request.tool_name,
                   tool ? allow_.RememberPattern(*tool, request.raw_input) : std::string("*")) +
      "'";
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++refusals_;
  }
  if (on_refusal_) on_refusal_(refusal);
  return agent::PermissionDecision::kRejectOnce;
}

int PermissionGate::refusals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refusals_;
}

}  // namespace lousho::local
