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

#include "core/tool.h"
#include "support/glob.h"
#include "support/shell_words.h"
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
  std::string tool = "*";     // tool name, "*" for every tool, or a glob ("mcp__github__*")
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
// the rules are fixed (and their globs compiled) at construction, remembered answers are
// compiled when remembered and guarded by a mutex. Matching costs time linear in the subject
// (see Glob), so a megabyte-long command cannot stall a decision.
//
// Matching: a bash rule's pattern matches the command with `*` spanning anything ("git
// status*"); other tools' patterns are path globs over the path relative to `cwd` ("docs/**",
// "*.md" matches only top-level files).
//
// Commands are read as bash reads them (support/shell_words.h): split into simple commands on
// ; && || | & and newlines, into subshells, groups, if/while/for/case bodies, $( ), backticks,
// <( ) and >( ), and into the strings of `sh -c` (bash, zsh, ...), `eval`, `env -S`, `watch`
// and `find -exec`; each simple command's words after quote removal and backslashes, joined by
// single spaces ("g''it   \push" is "git push"). Then:
//  - Allow and ask rules see each simple command as written (leading assignments and wrappers
//    kept: "git status*" does not allow "sudo git status" nor "PAGER=x git status"). A
//    command matches one of them only if every text it may turn out to be matches: where a
//    part is only known when the shell runs ($VAR, $( ), a glob in the command name), "git *"
//    allows "git $X" but "git status*" does not.
//  - Deny rules also see each simple command with its leading assignments and wrappers peeled
//    off one by one (command, builtin, env, exec, nohup, setsid, time, nice, ionice, stdbuf,
//    timeout, sudo, doas, flock, xargs, busybox, taskset, chrt, prlimit, strace, runuser,
//    unshare, nsenter, chroot, ... see shell_words.cpp) and with a path-named command by its base
//    name ("/usr/bin/git push" as "git push"). Deny on doubt: a deny rule that matches any
//    text an unknown part could stand for denies ("git push*" denies "$X push", "eval \"$X\"",
//    "sh -c \"$X\"", "echo git push | sh", code bash evaluates from values the line may have
//    filled with code text, files the line writes and runs, and lines the reader cannot
//    follow, such as an unclosed quote or nesting deeper than kMaxShellDepth), unless an
//    earlier rule matches every text it could stand for (first match wins). The reason of
//    such a denial says why the line could not be read.
//  - A line is allowed only if every simple command in it is allowed; a deny rule (or
//    remembered deny) matching any of them denies the whole line, in every mode; a rule
//    matching the whole line as one text is also honoured when it denies, or when it is an
//    exact (wildcard-free) text such as a remembered answer.
//  - Lines with $( ), backticks, <( ), >( ) or a redirection are allowed only by a catch-all
//    rule ("*"), an exact rule for the line, or bypass mode: "git status*" does not allow
//    "git status > ~/.bashrc". Descriptor duplication and /dev/null (2>&1, >&-, >/dev/null,
//    &>/dev/null, </dev/null) are harmless and do not count; here-documents and here-strings
//    do.
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
  // A tool with PermissionTargets (apply_patch) is decided by EvaluateTargets.
  PermissionVerdict Evaluate(const Tool& tool, const Json::Value& args, Mode mode) const;
  // One decision for a call that changes several paths: each path is matched by the first rule
  // for the tool, for its `rules_of` tool ("write", "edit") or for every tool; a deny rule or a
  // remembered denial of any path denies the call (the reason names the path), then the mode
  // decides as for one subject (plan denies, bypass allows), then the call is allowed only if
  // every path is allowed (a rule, a remembered "always", acceptEdits for edit-kind tools) and
  // asked otherwise: once, for all of them.
  PermissionVerdict EvaluateTargets(const Tool& tool, const std::vector<PermissionTarget>& targets,
                                    Mode mode) const;

  // Records an "always" answer (kAllow or kDeny; kAsk is ignored) for the rest of the session.
  void Remember(const std::string& tool_name, const std::string& subject_pattern, Action action);
  // Remember(tool.name(), RememberPattern(tool, args), action).
  void RememberAnswer(const Tool& tool, const Json::Value& args, Action action);
  // The pattern an "always" answer to this call is remembered under:
  //  - bash: the command's first word, plus its second when that looks like a subcommand
  //    (lowercase letters, digits, '-'), then any arguments: "git status --short" ->
  //    `git status{, *}`, which matches "git status" and "git status <anything>" but not
  //    "git statusx" nor "git push" (words after quote removal: "'git' status" is remembered
  //    the same way). Compound commands, commands with substitutions, unknown parts ($VAR) or
  //    redirections, and commands with leading assignments, a wrapper (sudo, env, ...) or a
  //    path as their name are remembered exactly: generalizing them would allow too much.
  //  - file tools: the exact path relative to cwd; a tool with PermissionTargets remembers
  //    each of its paths exactly (RememberAnswer), so the answer covers those paths only.
  //  - others: "*".
  std::string RememberPattern(const Tool& tool, const Json::Value& args) const;

  const std::vector<PermissionRule>& rules() const { return rules_; }

 private:
  // A rule with its pattern compiled for both kinds of subject.
  struct CompiledRule {
    explicit CompiledRule(PermissionRule r);
    PermissionRule rule;
    bool AppliesTo(const Tool& tool) const { return AppliesTo(tool.name()); }
    bool AppliesTo(std::string_view tool_name) const;
    bool catch_all;   // "*" or "**"
    bool tool_glob;   // the tool name has wildcards ("mcp__github__*")
    Glob tool_names;  // when tool_glob
    bool literal;     // no wildcard: one exact text
    Glob text;        // for commands
    Glob path;        // for paths
  };

  // `script` is the parsed command for execute-kind tools, else null (a path subject).
  // `*unreadable`: when a deny rule decides on a part that could not be read, why it could not.
  std::optional<PermissionAction> Match(const std::vector<CompiledRule>& rules, const Tool& tool,
                                        const std::string& subject, const ShellScript* script,
                                        std::string* matched_pattern,
                                        std::string* unreadable) const;
  // The first rule for the tool whose pattern matches the subject as a path (as_path) or as a
  // command line, or null.
  static const CompiledRule* FirstRule(const std::vector<CompiledRule>& rules, const Tool& tool,
                                       const std::string& subject, bool as_path);
  // Decides each simple command of the script (the subject as one command when it has none)
  // into *decided; returns the rule that denies one of them (setting *unreadable), or null.
  static const CompiledRule* DecideParts(const std::vector<CompiledRule>& rules, const Tool& tool,
                                         const ShellScript& script, const std::string& subject,
                                         std::vector<const CompiledRule*>* decided,
                                         std::string* unreadable);
  // The line's action from its parts' rules, none of which denies: the strictest wins.
  static std::optional<PermissionAction> CombineParts(
      const std::vector<const CompiledRule*>& decided, const ShellScript& script);
  // The first rule that decides one simple command (see the class comment), or null.
  static const CompiledRule* DecideCommand(const std::vector<CompiledRule>& rules, const Tool& tool,
                                           const ShellCommand& cmd);
  // The first rule for `tool`, for `also` or for every tool whose path pattern matches.
  static const CompiledRule* FirstPathRule(const std::vector<CompiledRule>& rules,
                                           std::string_view tool, std::string_view also,
                                           const std::string& subject);
  std::string Subject(const Tool& tool, const Json::Value& args) const;
  // A path subject relative to cwd when inside it, so "docs/**" also covers absolute paths.
  std::string PathSubject(const std::string& subject) const;

  std::vector<PermissionRule> rules_;
  std::vector<CompiledRule> compiled_;  // rules_, compiled
  std::filesystem::path cwd_;
  mutable std::mutex mu_;
  std::vector<CompiledRule> remembered_;  // guarded by mu_
};

}  // namespace lousho::agent
