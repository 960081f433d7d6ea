// Permission policy: rule parsing, subject matching (commands and paths), modes, memory.
#include "agent/permissions.h"

#include <algorithm>
#include <tuple>

#include "core/paths.h"
#include "support/glob.h"
#include "support/json_util.h"
#include "support/shell_words.h"

namespace lousho::agent {

namespace fs = std::filesystem;

const char* PermissionActionName(PermissionAction action) {
  switch (action) {
    case PermissionAction::kAllow:
      return "allow";
    case PermissionAction::kAsk:
      return "ask";
    case PermissionAction::kDeny:
      return "deny";
  }
  return "ask";
}

std::optional<PermissionAction> ParsePermissionAction(std::string_view name) {
  if (name == "allow") return PermissionAction::kAllow;
  if (name == "ask") return PermissionAction::kAsk;
  if (name == "deny") return PermissionAction::kDeny;
  return std::nullopt;
}

const char* PermissionModeId(PermissionMode mode) {
  switch (mode) {
    case PermissionMode::kDefault:
      return "default";
    case PermissionMode::kAcceptEdits:
      return "accept-edits";
    case PermissionMode::kPlan:
      return "plan";
    case PermissionMode::kBypass:
      return "bypass";
  }
  return "default";
}

std::optional<PermissionMode> ParsePermissionMode(std::string_view id) {
  if (id == "default") return PermissionMode::kDefault;
  // The spec's ids, and the ones Claude Code's adapter uses (some clients send those).
  if (id == "accept-edits" || id == "acceptEdits") return PermissionMode::kAcceptEdits;
  if (id == "plan") return PermissionMode::kPlan;
  if (id == "bypassPermissions" || id == "bypass") return PermissionMode::kBypass;
  return std::nullopt;
}

namespace {

Result<PermissionAction> ReadAction(const Json::Value& v, const std::string& path) {
  auto s = AsString(v);
  if (!s) return MakeError(ErrorCode::kConfigInvalid, path + ": expected string");
  auto a = ParsePermissionAction(*s);
  if (!a)
    return MakeError(ErrorCode::kConfigInvalid,
                     path + ": expected allow, ask or deny, got \"" + *s + "\"");
  return *a;
}

// Lower sorts first: literal patterns, then longer globs, "*" last.
std::tuple<int, long> Specificity(const std::string& pattern) {
  if (pattern == "*" || pattern == "**") return {2, 0};
  return {HasGlobChars(pattern) ? 1 : 0, -static_cast<long>(pattern.size())};
}

std::string EscapeGlob(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}' || c == '\\' ||
        c == ',')
      out += '\\';
    out += c;
  }
  return out;
}

// No unescaped wildcard or brace: the pattern is one exact text (a remembered exact command).
bool IsLiteralPattern(std::string_view p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\') {
      ++i;
    } else if (p[i] == '*' || p[i] == '?' || p[i] == '[' || p[i] == '{') {
      return false;
    }
  }
  return true;
}

bool MatchText(const Glob& glob, const ShellText& text) {
  return text.known() ? glob.Match(text.pieces[0]) : glob.MatchSome(text.pieces);
}

bool IsSubcommand(std::string_view w) {
  if (w.empty()) return false;
  if (!(w[0] >= 'a' && w[0] <= 'z')) return false;
  for (char c : w)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

bool IsEditKind(ToolKind k) {
  switch (k) {
    case ToolKind::kEdit:
    case ToolKind::kDelete:
    case ToolKind::kMove:
      return true;
    case ToolKind::kRead:
    case ToolKind::kSearch:
    case ToolKind::kExecute:
    case ToolKind::kThink:
    case ToolKind::kFetch:
    case ToolKind::kSwitchMode:
    case ToolKind::kOther:
      return false;
  }
  return false;
}

}  // namespace

namespace {

// One rule of the list form: {tool?, pattern?, action}; `at` names it in errors.
Result<PermissionRule> ReadListRule(const Json::Value& r, const std::string& at) {
  if (!r.isObject()) return MakeError(ErrorCode::kConfigInvalid, at + ": expected object");
  PermissionRule rule;
  for (const char* key : {"tool", "pattern"}) {
    const Json::Value& f = MemberOrNull(r, key);
    if (f.isNull()) continue;
    auto s = AsString(f);
    if (!s || s->empty())
      return MakeError(ErrorCode::kConfigInvalid, at + "." + key + ": expected non-empty string");
    (std::string_view(key) == "tool" ? rule.tool : rule.pattern) = *s;
  }
  const Json::Value& given = MemberOrNull(r, "action");
  if (given.isNull()) return MakeError(ErrorCode::kConfigInvalid, at + ".action: required");
  auto action = ReadAction(given, at + ".action");
  if (!action.ok()) return action.error();
  rule.action = *action;
  for (const auto& key : MemberNames(r))
    if (key != "tool" && key != "pattern" && key != "action")
      return MakeError(ErrorCode::kConfigInvalid, at + "." + key + ": unknown field");
  return rule;
}

// The list form: rules in the order given.
Result<std::vector<PermissionRule>> ReadRuleList(const Json::Value& value,
                                                 const std::string& path) {
  std::vector<PermissionRule> rules;
  for (Json::ArrayIndex i = 0; i < value.size(); ++i) {
    auto rule = ReadListRule(ElementOrNull(value, i), path + "[" + std::to_string(i) + "]");
    if (!rule.ok()) return rule.error();
    rules.push_back(std::move(rule).value());
  }
  return rules;
}

// The rules of one tool in the map form (`v`: an action, or a map of pattern to action),
// appended to `rules` most specific pattern first.
Status ReadToolRules(const std::string& tool, const Json::Value& v, const std::string& at,
                     std::vector<PermissionRule>* rules) {
  if (v.isString()) {
    auto action = ReadAction(v, at);
    if (!action.ok()) return action.error();
    rules->push_back({tool, "*", *action});
    return Status::Ok();
  }
  if (!v.isObject())
    return MakeError(ErrorCode::kConfigInvalid,
                     at + ": expected an action or a map of pattern to action");
  std::vector<std::string> patterns = MemberNames(v);
  std::stable_sort(
      patterns.begin(), patterns.end(),
      [](const std::string& a, const std::string& b) { return Specificity(a) < Specificity(b); });
  for (const auto& pattern : patterns) {
    auto action = ReadAction(MemberOrNull(v, pattern), at + "." + pattern);
    if (!action.ok()) return action.error();
    rules->push_back({tool, pattern, *action});
  }
  return Status::Ok();
}

// The map form: tool -> action or pattern map; the "*" tool's rules come last.
Result<std::vector<PermissionRule>> ReadRuleMap(const Json::Value& value, const std::string& path) {
  std::vector<PermissionRule> rules;
  std::vector<std::string> tools = MemberNames(value);
  std::stable_sort(tools.begin(), tools.end(), [](const std::string& a, const std::string& b) {
    return (a == "*") < (b == "*");
  });
  for (const auto& tool : tools) {
    Status st = ReadToolRules(tool, MemberOrNull(value, tool), path + "." + tool, &rules);
    if (!st.ok()) return st.error();
  }
  return rules;
}

}  // namespace

Result<std::vector<PermissionRule>> ParsePermissionRules(const Json::Value& value,
                                                         const std::string& path) {
  if (value.isNull()) return std::vector<PermissionRule>();
  if (value.isArray()) return ReadRuleList(value, path);
  if (!value.isObject())
    return MakeError(ErrorCode::kConfigInvalid, path + ": expected a list or a map of rules");
  return ReadRuleMap(value, path);
}

PermissionPolicy::CompiledRule::CompiledRule(PermissionRule r)
    : rule(std::move(r)),
      catch_all(rule.pattern == "*" || rule.pattern == "**"),
      tool_glob(rule.tool != "*" && HasGlobChars(rule.tool)),
      tool_names(tool_glob ? Glob(rule.tool, GlobMode::kText) : Glob()),
      literal(IsLiteralPattern(rule.pattern)),
      text(rule.pattern, GlobMode::kText),
      path(rule.pattern, GlobMode::kPath) {}

bool PermissionPolicy::CompiledRule::AppliesTo(std::string_view tool_name) const {
  if (rule.tool == "*") return true;
  return tool_glob ? tool_names.Match(tool_name) : rule.tool == tool_name;
}

PermissionPolicy::PermissionPolicy(std::vector<PermissionRule> rules, fs::path cwd)
    : rules_(std::move(rules)), cwd_(std::move(cwd)) {
  compiled_.reserve(rules_.size());
  for (const auto& r : rules_) compiled_.emplace_back(r);
}

std::string PermissionPolicy::Subject(const Tool& tool, const Json::Value& args) const {
  std::string subject = tool.PermissionSubject(args);
  if (tool.kind() == ToolKind::kExecute || subject.empty()) return subject;
  return PathSubject(subject);
}

std::string PermissionPolicy::PathSubject(const std::string& subject) const {
  if (!cwd_.empty()) {
    fs::path abs = AbsolutePath(cwd_, subject);
    if (IsWithin(abs, cwd_.lexically_normal())) return DisplayPath(cwd_, abs);
    return abs.string();
  }
  fs::path p = fs::path(subject).lexically_normal();
  return p.empty() ? subject : p.string();
}

const PermissionPolicy::CompiledRule* PermissionPolicy::DecideCommand(
    const std::vector<CompiledRule>& rules, const Tool& tool, const ShellCommand& cmd) {
  for (const auto& r : rules) {
    if (!r.AppliesTo(tool)) continue;
    const bool could = r.catch_all || MatchText(r.text, cmd.written);
    if (r.rule.action == PermissionAction::kDeny) {
      if (could) return &r;
      for (const auto& view : cmd.peeled)
        if (MatchText(r.text, view)) return &r;
      continue;
    }
    // An allow or ask rule decides only when it matches every text the command may turn out
    // to be; one that matches just some of them leaves the command to later rules (a deny
    // rule among them wins) and then to the defaults.
    const bool every =
        r.catch_all || (cmd.written.known() ? could : r.text.MatchEvery(cmd.written.pieces));
    if (every) return &r;
  }
  return nullptr;
}

std::optional<PermissionAction> PermissionPolicy::Match(
    const std::vector<CompiledRule>& rules, const Tool& tool, const std::string& subject,
    const ShellScript* script, std::string* matched_pattern, std::string* unreadable) const {
  auto found = [&](const CompiledRule* r) -> std::optional<PermissionAction> {
    if (matched_pattern) *matched_pattern = r->rule.pattern;
    return r->rule.action;
  };
  if (!script) {
    const CompiledRule* r = FirstRule(rules, tool, subject, true);
    return r ? found(r) : std::nullopt;
  }
  // The command line as one text: a deny rule written for it ("*curl*|*sh*") denies, and an
  // exact rule (a remembered "always" for this very line) decides, once no part is denied.
  const CompiledRule* whole = FirstRule(rules, tool, subject, false);
  if (whole && whole->rule.action == PermissionAction::kDeny) return found(whole);
  std::vector<const CompiledRule*> decided;
  if (const CompiledRule* denied = DecideParts(rules, tool, *script, subject, &decided, unreadable))
    return found(denied);
  if (whole && whole->literal) return found(whole);
  return CombineParts(decided, *script);
}

const PermissionPolicy::CompiledRule* PermissionPolicy::FirstRule(
    const std::vector<CompiledRule>& rules, const Tool& tool, const std::string& subject,
    bool as_path) {
  for (const auto& r : rules) {
    if (!r.AppliesTo(tool)) continue;
    if (r.catch_all || (as_path ? r.path : r.text).Match(subject)) return &r;
  }
  return nullptr;
}

const PermissionPolicy::CompiledRule* PermissionPolicy::FirstPathRule(
    const std::vector<CompiledRule>& rules, std::string_view tool, std::string_view also,
    const std::string& subject) {
  for (const auto& r : rules) {
    if (!r.AppliesTo(tool) && (also.empty() || !r.AppliesTo(also))) continue;
    if (r.catch_all || r.path.Match(subject)) return &r;
  }
  return nullptr;
}

const PermissionPolicy::CompiledRule* PermissionPolicy::DecideParts(
    const std::vector<CompiledRule>& rules, const Tool& tool, const ShellScript& script,
    const std::string& subject, std::vector<const CompiledRule*>* decided,
    std::string* unreadable) {
  std::vector<const ShellCommand*> parts;
  ShellCommand raw;
  for (const auto& c : script.commands) parts.push_back(&c);
  if (parts.empty()) {
    raw.written.pieces = {subject};
    parts.push_back(&raw);
  }
  for (const ShellCommand* part : parts) {
    const CompiledRule* r = DecideCommand(rules, tool, *part);
    if (r && r->rule.action == PermissionAction::kDeny) {
      *unreadable = part->unreadable;
      return r;
    }
    decided->push_back(r);
  }
  return nullptr;
}

std::optional<PermissionAction> PermissionPolicy::CombineParts(
    const std::vector<const CompiledRule*>& decided, const ShellScript& script) {
  // Each part decides; the strictest wins; a part no rule decides leaves the whole undecided.
  // Substitutions and redirections are allowed only by a catch-all rule.
  const bool needs_catch_all = script.substitution || script.redirection;
  bool all_allow = true;
  for (const CompiledRule* r : decided) {
    if (!r) return std::nullopt;
    if (r->rule.action != PermissionAction::kAllow || (needs_catch_all && !r->catch_all))
      all_allow = false;
  }
  return all_allow ? PermissionAction::kAllow : PermissionAction::kAsk;
}

PermissionAction PermissionPolicy::Decide(const Tool& tool, const Json::Value& args,
                                          Mode mode) const {
  return Evaluate(tool, args, mode).action;
}

namespace {

// What the mode decides before the rules' allow and ask (plan denies, bypass allows); nullopt:
// the rules and the defaults decide.
std::optional<PermissionVerdict> ModeVerdict(const Tool& tool, PermissionMode mode) {
  const bool think = tool.kind() == ToolKind::kThink;
  switch (mode) {
    case PermissionMode::kPlan:
      // Leaving plan mode is the one change plan mode permits, and it is always asked for.
      if (tool.kind() == ToolKind::kSwitchMode)
        return PermissionVerdict{PermissionAction::kAsk, ""};
      if (!tool.read_only() && !think)
        return PermissionVerdict{PermissionAction::kDeny, "plan mode: read-only"};
      break;
    case PermissionMode::kBypass:
      return PermissionVerdict{PermissionAction::kAllow, ""};
    case PermissionMode::kDefault:
    case PermissionMode::kAcceptEdits:
      break;
  }
  return std::nullopt;
}

// The action of a rule found, if one was.
template <typename Rule>
std::optional<PermissionAction> ActionOf(const Rule* r) {
  return r ? std::optional<PermissionAction>(r->rule.action) : std::nullopt;
}

// Allow or ask, once no rule, answer or mode denies: a rule, then a remembered answer, then the
// defaults.
PermissionAction AllowOrAsk(const Tool& tool, PermissionMode mode,
                            std::optional<PermissionAction> rule,
                            std::optional<PermissionAction> remembered) {
  if (rule == PermissionAction::kAllow) return PermissionAction::kAllow;
  if (remembered == PermissionAction::kAllow) return PermissionAction::kAllow;
  if (rule == PermissionAction::kAsk) return PermissionAction::kAsk;
  const bool think = tool.kind() == ToolKind::kThink;
  if ((tool.read_only() || think) && !tool.asks_by_default()) return PermissionAction::kAllow;
  if (mode == PermissionMode::kAcceptEdits && IsEditKind(tool.kind()))
    return PermissionAction::kAllow;
  return PermissionAction::kAsk;
}

}  // namespace

PermissionVerdict PermissionPolicy::EvaluateTargets(const Tool& tool,
                                                    const std::vector<PermissionTarget>& targets,
                                                    Mode mode) const {
  struct Decided {
    std::optional<PermissionAction> rule;
    std::optional<PermissionAction> remembered;
  };
  std::vector<Decided> decided;
  for (const PermissionTarget& target : targets) {
    const std::string subject = PathSubject(target.subject);
    const CompiledRule* r = FirstPathRule(compiled_, tool.name(), target.rules_of, subject);
    if (r && r->rule.action == PermissionAction::kDeny)
      return {PermissionAction::kDeny, subject + ": denied by permission rule " + r->rule.tool +
                                           " \"" + r->rule.pattern + "\"; nothing was changed"};
    std::optional<PermissionAction> remembered;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const CompiledRule* m = FirstPathRule(remembered_, tool.name(), target.rules_of, subject);
      remembered = ActionOf(m);
    }
    if (remembered == PermissionAction::kDeny)
      return {PermissionAction::kDeny, subject +
                                           ": the user rejected changing it for this "
                                           "session; nothing was changed"};
    decided.push_back({ActionOf(r), remembered});
  }
  if (std::optional<PermissionVerdict> v = ModeVerdict(tool, mode)) return *v;
  for (const Decided& d : decided)
    if (AllowOrAsk(tool, mode, d.rule, d.remembered) != PermissionAction::kAllow)
      return {PermissionAction::kAsk, ""};
  return {PermissionAction::kAllow, ""};
}

PermissionVerdict PermissionPolicy::Evaluate(const Tool& tool, const Json::Value& args,
                                             Mode mode) const {
  if (std::vector<PermissionTarget> targets = tool.PermissionTargets(args); !targets.empty())
    return EvaluateTargets(tool, targets, mode);
  const std::string subject = Subject(tool, args);
  std::optional<ShellScript> script;
  if (tool.kind() == ToolKind::kExecute) script = ParseShell(subject);
  const ShellScript* parsed = script ? &*script : nullptr;
  std::string pattern;
  std::string unreadable;
  std::optional<PermissionAction> rule =
      Match(compiled_, tool, subject, parsed, &pattern, &unreadable);
  if (rule == PermissionAction::kDeny) {
    std::string reason = "denied by permission rule " + tool.name() + " \"" + pattern + "\"";
    // Denied on doubt: say why the command could not be read, and how to write it instead.
    if (!unreadable.empty())
      reason += ": bash could run a command matching it, because " + unreadable +
                "; write the command so that every command it runs is visible in it";
    return {PermissionAction::kDeny, reason};
  }
  std::optional<PermissionAction> remembered;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::string ignored;
    remembered = Match(remembered_, tool, subject, parsed, nullptr, &ignored);
  }
  if (remembered == PermissionAction::kDeny)
    return {PermissionAction::kDeny, "the user rejected " + tool.name() + " for this session"};

  if (std::optional<PermissionVerdict> v = ModeVerdict(tool, mode)) return *v;
  return {AllowOrAsk(tool, mode, rule, remembered), ""};
}

void PermissionPolicy::Remember(const std::string& tool_name, const std::string& subject_pattern,
                                Action action) {
  if (action == PermissionAction::kAsk) return;
  CompiledRule rule(PermissionRule{tool_name, subject_pattern, action});  // compiled unlocked
  std::lock_guard<std::mutex> lock(mu_);
  // Newest first: a later "always" answer overrides an earlier one for the same subject.
  remembered_.insert(remembered_.begin(), std::move(rule));
}

void PermissionPolicy::RememberAnswer(const Tool& tool, const Json::Value& args, Action action) {
  std::vector<PermissionTarget> targets = tool.PermissionTargets(args);
  for (const PermissionTarget& target : targets)
    Remember(tool.name(), EscapeGlob(PathSubject(target.subject)), action);
  if (targets.empty()) Remember(tool.name(), RememberPattern(tool, args), action);
}

std::string PermissionPolicy::RememberPattern(const Tool& tool, const Json::Value& args) const {
  std::string subject = Subject(tool, args);
  if (tool.kind() != ToolKind::kExecute) return subject.empty() ? "*" : EscapeGlob(subject);
  ShellScript script = ParseShell(subject);
  if (script.commands.size() != 1 || script.substitution || script.redirection || script.opaque)
    return EscapeGlob(subject);
  const ShellCommand& cmd = script.commands[0];
  // Assignments, wrappers and path-named commands are remembered exactly too: "FOO=1 git
  // status" must not become "FOO=1 git{, *}", nor "sudo ls" become "sudo ls{, *}".
  if (!cmd.written.known() || !cmd.peeled.empty() || cmd.words.empty()) return EscapeGlob(subject);
  auto plain = [](const std::string& w) {
    return !w.empty() && w.find_first_of(" \t\n") == std::string::npos;
  };
  if (!plain(cmd.words[0])) return EscapeGlob(subject);
  std::string prefix = cmd.words[0];
  if (cmd.words.size() > 1 && IsSubcommand(cmd.words[1])) prefix += " " + cmd.words[1];
  return EscapeGlob(prefix) + "{, *}";
}

}  // namespace lousho::agent
