// Permission policy for tool calls: configured rules, modes, and "always" answers remembered
// for the session.
#pragma once

#include <json/json.h>

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/tool.h"
#include "support/status.h"

namespace lousho::agent {

enum class PermissionAction { kAllow, kAsk, kDeny };

enum class PermissionMode {
  kDefault,      // rules, then defaults: read-only tools allowed, edits and bash asked
  kAcceptEdits,  // edit-kind tools (write, edit, delete, move) allowed without asking; not bash
  kPlan,         // every tool that is not read-only is denied ("plan mode: read-only")
  kBypass,       // everything allowed, except what a deny rule or answer forbids
};

struct PermissionRule {
  std::string tool = "*";     // tool name, or "*" for every tool
  std::string pattern = "*";  // glob over the tool's PermissionSubject; "*" matches anything
  PermissionAction action = PermissionAction::kAsk;
};

struct PermissionVerdict {
  PermissionAction action = PermissionAction::kAsk;
  std::string reason;  // for kDeny: a message for the model, e.g. "plan mode: read-only"
};

const char* PermissionActionName(PermissionAction action);  // "allow" | "ask" | "deny"
std::optional<PermissionAction> ParsePermissionAction(std::string_view name);
// "default" | "accept-edits" | "plan" | "bypass": the ids of the spec's `mode` and of ACP modes.
const char* PermissionModeId(PermissionMode mode);
// Also accepts Claude Code's "acceptEdits" and "bypassPermissions".
std::optional<PermissionMode> ParsePermissionMode(std::string_view id);

// Reads rules from either form:
//   list: [{"tool": "bash", "pattern": "git status*", "action": "allow"}, ...]
//         (tool and pattern default to "*"); order is kept: first match wins.
//   map:  {"bash": {"git status*": "allow", "*": "ask"}, "write": {"docs/**": "allow"},
//          "grep": "allow"}
//         JSON objects have no order, so map rules are ordered most specific first: named tools
//         before "*", then within a tool literal patterns before globs, longer before shorter,
//         and "*" last.
// Errors name the offending path, e.g. "permissions[1].action: expected allow, ask or deny".
Result<std::vector<PermissionRule>> ParsePermissionRules(const Json::Value& value,
                                                         const std::string& path = "permissions");

// Decides whether a tool call may run. Thread-safe (several session workers may ask at once);
// the rules are fixed at construction, remembered answers are guarded by a mutex.
//
// Matching: a bash rule's pattern matches the command with `*` spanning anything ("git
// status*"); other tools' patterns are path globs over the path relative to `cwd` ("docs/**",
// "*.md" matches only top-level files). A command joined with ; && || | & or newlines matches a
// glob rule only if every part does (so "git status*: allow" does not allow "git status && rm
// -rf x"), and a deny rule matching any part denies the whole; commands with $( ) or backticks
// are never allowed by a glob rule other than "*".
//
// Order of decision: deny rule > remembered deny > mode (plan denies non-read-only tools
// except the plan tool itself, bypass allows) > allow/ask rule > remembered allow > defaults
// (read-only and think-kind tools allowed; edits allowed in acceptEdits; everything else asked).
class PermissionPolicy {
 public:
  using Action = PermissionAction;
  using Mode = PermissionMode;

  explicit PermissionPolicy(std::vector<PermissionRule> rules, std::filesystem::path cwd = {});

  Action Decide(const Tool& tool, const Json::Value& args, Mode mode) const;
  // Decide with a reason for denials.
  PermissionVerdict Evaluate(const Tool& tool, const Json::Value& args, Mode mode) const;

  // Records an "always" answer (kAllow or kDeny; kAsk is ignored) for the rest of the session.
  void Remember(const std::string& tool_name, const std::string& subject_pattern, Action action);
  // Remember(tool.name(), RememberPattern(tool, args), action).
  void RememberAnswer(const Tool& tool, const Json::Value& args, Action action);
  // The pattern an "always" answer to this call is remembered under:
  //  - bash: the command's first word, plus its second when that looks like a subcommand
  //    (lowercase letters, digits, '-'), then any arguments: "git status --short" ->
  //    `git status{, *}`, which matches "git status" and "git status <anything>" but not
  //    "git statusx" nor "git push". Compound commands and commands with substitutions are
  //    remembered exactly: generalizing them would allow too much.
  //  - file tools: the exact path relative to cwd.
  //  - others: "*".
  std::string RememberPattern(const Tool& tool, const Json::Value& args) const;

  const std::vector<PermissionRule>& rules() const { return rules_; }

 private:
  std::optional<PermissionAction> Match(const std::vector<PermissionRule>& rules, const Tool& tool,
                                        const std::string& subject,
                                        std::string* matched_pattern) const;
  std::string Subject(const Tool& tool, const Json::Value& args) const;

  std::vector<PermissionRule> rules_;
  std::filesystem::path cwd_;
  mutable std::mutex mu_;
  std::vector<PermissionRule> remembered_;  // guarded by mu_
};

}  // namespace lousho::agent
