// Permission policy: rule parsing, subject matching (commands and paths), modes, memory.
#include "agent/permissions.h"

#include <algorithm>
#include <tuple>

#include "agent/tools/paths.h"
#include "support/glob.h"

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
  if (!v.isString()) return MakeError("LOUSHO_CONFIG_INVALID", path + ": expected string");
  auto a = ParsePermissionAction(v.asString());
  if (!a)
    return MakeError("LOUSHO_CONFIG_INVALID",
                     path + ": expected allow, ask or deny, got \"" + v.asString() + "\"");
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

struct CommandParts {
  std::vector<std::string> parts;
  bool substitution = false;  // $( ) or backticks: the parts do not show everything it runs
};

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// Splits a shell command on ; && || | & and newlines outside quotes. Good enough for matching
// rules; not a shell parser (heredocs, for example, are not understood).
CommandParts SplitCommand(std::string_view cmd) {
  CommandParts out;
  std::string cur;
  char quote = 0;
  auto flush = [&] {
    std::string t = Trim(cur);
    if (!t.empty()) out.parts.push_back(std::move(t));
    cur.clear();
  };
  for (size_t i = 0; i < cmd.size(); ++i) {
    char c = cmd[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
      cur += c;
      continue;
    }
    if (c == '\\' && i + 1 < cmd.size()) {
      cur += c;
      cur += cmd[++i];
      continue;
    }
    if (c == '`' || (c == '$' && i + 1 < cmd.size() && cmd[i + 1] == '(')) out.substitution = true;
    if (quote == '"') {
      if (c == '"') quote = 0;
      cur += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      cur += c;
      continue;
    }
    if (c == ';' || c == '\n' || c == '|' || c == '&') {
      // `>&2`, `2>&1`, `&>`: redirections, not separators.
      bool redirect = c == '&' && ((i > 0 && (cmd[i - 1] == '>' || cmd[i - 1] == '<')) ||
                                   (i + 1 < cmd.size() && cmd[i + 1] == '>'));
      if (!redirect) {
        flush();
        if (i + 1 < cmd.size() && (cmd[i + 1] == c)) ++i;  // && || ;;
        continue;
      }
    }
    cur += c;
  }
  flush();
  return out;
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

Result<std::vector<PermissionRule>> ParsePermissionRules(const Json::Value& value,
                                                         const std::string& path) {
  std::vector<PermissionRule> rules;
  if (value.isNull()) return rules;
  if (value.isArray()) {
    for (Json::ArrayIndex i = 0; i < value.size(); ++i) {
      const std::string at = path + "[" + std::to_string(i) + "]";
      const Json::Value& r = value[i];
      if (!r.isObject()) return MakeError("LOUSHO_CONFIG_INVALID", at + ": expected object");
      PermissionRule rule;
      for (const char* key : {"tool", "pattern"}) {
        const Json::Value& f = r[key];
        if (f.isNull()) continue;
        if (!f.isString() || f.asString().empty())
          return MakeError("LOUSHO_CONFIG_INVALID", at + "." + key + ": expected non-empty string");
        (std::string_view(key) == "tool" ? rule.tool : rule.pattern) = f.asString();
      }
      if (r["action"].isNull()) return MakeError("LOUSHO_CONFIG_INVALID", at + ".action: required");
      auto action = ReadAction(r["action"], at + ".action");
      if (!action.ok()) return action.error();
      rule.action = *action;
      for (const auto& key : r.getMemberNames())
        if (key != "tool" && key != "pattern" && key != "action")
          return MakeError("LOUSHO_CONFIG_INVALID", at + "." + key + ": unknown field");
      rules.push_back(std::move(rule));
    }
    return rules;
  }
  if (!value.isObject())
    return MakeError("LOUSHO_CONFIG_INVALID", path + ": expected a list or a map of rules");
  std::vector<std::string> tools = value.getMemberNames();
  std::stable_sort(tools.begin(), tools.end(), [](const std::string& a, const std::string& b) {
    return (a == "*") < (b == "*");
  });
  for (const auto& tool : tools) {
    const std::string at = path + "." + tool;
    const Json::Value& v = value[tool];
    if (v.isString()) {
      auto action = ReadAction(v, at);
      if (!action.ok()) return action.error();
      rules.push_back({tool, "*", *action});
      continue;
    }
    if (!v.isObject())
      return MakeError("LOUSHO_CONFIG_INVALID",
                       at + ": expected an action or a map of pattern to action");
    std::vector<std::string> patterns = v.getMemberNames();
    std::stable_sort(
        patterns.begin(), patterns.end(),
        [](const std::string& a, const std::string& b) { return Specificity(a) < Specificity(b); });
    for (const auto& pattern : patterns) {
      auto action = ReadAction(v[pattern], at + "." + pattern);
      if (!action.ok()) return action.error();
      rules.push_back({tool, pattern, *action});
    }
  }
  return rules;
}

PermissionPolicy::PermissionPolicy(std::vector<PermissionRule> rules, fs::path cwd)
    : rules_(std::move(rules)), cwd_(std::move(cwd)) {}

std::string PermissionPolicy::Subject(const Tool& tool, const Json::Value& args) const {
  std::string subject = tool.PermissionSubject(args);
  if (tool.kind() == ToolKind::kExecute || subject.empty()) return subject;
  // Path subjects: relative to cwd when inside it, so "docs/**" also covers absolute paths.
  if (!cwd_.empty()) {
    fs::path abs = AbsolutePath(cwd_, subject);
    if (IsWithin(abs, cwd_.lexically_normal())) return DisplayPath(cwd_, abs);
    return abs.string();
  }
  fs::path p = fs::path(subject).lexically_normal();
  return p.empty() ? subject : p.string();
}

std::optional<PermissionAction> PermissionPolicy::Match(const std::vector<PermissionRule>& rules,
                                                        const Tool& tool,
                                                        const std::string& subject,
                                                        std::string* matched_pattern) const {
  const bool command = tool.kind() == ToolKind::kExecute;
  const GlobMode mode = command ? GlobMode::kText : GlobMode::kPath;
  auto first_match = [&](const std::string& s) -> const PermissionRule* {
    for (const auto& r : rules) {
      if (r.tool != "*" && r.tool != tool.name()) continue;
      if (r.pattern == "*" || r.pattern == "**" || GlobMatch(r.pattern, s, mode)) return &r;
    }
    return nullptr;
  };
  const PermissionRule* whole = first_match(subject);
  if (!command) {
    if (!whole) return std::nullopt;
    if (matched_pattern) *matched_pattern = whole->pattern;
    return whole->action;
  }
  if (whole && whole->action == PermissionAction::kDeny) {
    if (matched_pattern) *matched_pattern = whole->pattern;
    return whole->action;
  }
  CommandParts split = SplitCommand(subject);
  auto catch_all = [](const PermissionRule* r) { return r->pattern == "*" || r->pattern == "**"; };
  // A rule matching the whole command applies as is when it is "*", a literal, or when the
  // command is a single simple command.
  if (whole && (catch_all(whole) || !HasGlobChars(whole->pattern) ||
                (split.parts.size() <= 1 && !split.substitution))) {
    if (matched_pattern) *matched_pattern = whole->pattern;
    return whole->action;
  }
  if (split.parts.size() <= 1 && !split.substitution) return std::nullopt;
  // Compound: each part decides; the strictest wins; any part without a rule leaves the whole
  // undecided.
  bool all_allow = !split.parts.empty();
  bool any_unmatched = false;
  for (const auto& part : split.parts) {
    const PermissionRule* r = first_match(part);
    if (!r) {
      any_unmatched = true;
      all_allow = false;
      continue;
    }
    if (r->action == PermissionAction::kDeny) {
      if (matched_pattern) *matched_pattern = r->pattern;
      return PermissionAction::kDeny;
    }
    if (r->action != PermissionAction::kAllow || (split.substitution && !catch_all(r)))
      all_allow = false;
  }
  if (all_allow) return PermissionAction::kAllow;
  if (!any_unmatched) return PermissionAction::kAsk;
  return std::nullopt;
}

PermissionAction PermissionPolicy::Decide(const Tool& tool, const Json::Value& args,
                                          Mode mode) const {
  return Evaluate(tool, args, mode).action;
}

PermissionVerdict PermissionPolicy::Evaluate(const Tool& tool, const Json::Value& args,
                                             Mode mode) const {
  const std::string subject = Subject(tool, args);
  std::string pattern;
  std::optional<PermissionAction> rule = Match(rules_, tool, subject, &pattern);
  if (rule == PermissionAction::kDeny)
    return {PermissionAction::kDeny,
            "denied by permission rule " + tool.name() + " \"" + pattern + "\""};
  std::optional<PermissionAction> remembered;
  {
    std::lock_guard<std::mutex> lock(mu_);
    remembered = Match(remembered_, tool, subject, nullptr);
  }
  if (remembered == PermissionAction::kDeny)
    return {PermissionAction::kDeny, "the user rejected " + tool.name() + " for this session"};

  const bool think = tool.kind() == ToolKind::kThink;
  switch (mode) {
    case PermissionMode::kPlan:
      // Leaving plan mode is the one change plan mode permits, and it is always asked for.
      if (tool.kind() == ToolKind::kSwitchMode) return {PermissionAction::kAsk, ""};
      if (!tool.read_only() && !think) return {PermissionAction::kDeny, "plan mode: read-only"};
      break;
    case PermissionMode::kBypass:
      return {PermissionAction::kAllow, ""};
    case PermissionMode::kDefault:
    case PermissionMode::kAcceptEdits:
      break;
  }
  if (rule == PermissionAction::kAllow) return {PermissionAction::kAllow, ""};
  if (remembered == PermissionAction::kAllow) return {PermissionAction::kAllow, ""};
  if (rule == PermissionAction::kAsk) return {PermissionAction::kAsk, ""};
  if (tool.read_only() || think) return {PermissionAction::kAllow, ""};
  if (mode == PermissionMode::kAcceptEdits && IsEditKind(tool.kind()))
    return {PermissionAction::kAllow, ""};
  return {PermissionAction::kAsk, ""};
}

void PermissionPolicy::Remember(const std::string& tool_name, const std::string& subject_pattern,
                                Action action) {
  if (action == PermissionAction::kAsk) return;
  std::lock_guard<std::mutex> lock(mu_);
  // Newest first: a later "always" answer overrides an earlier one for the same subject.
  remembered_.insert(remembered_.begin(), PermissionRule{tool_name, subject_pattern, action});
}

void PermissionPolicy::RememberAnswer(const Tool& tool, const Json::Value& args, Action action) {
  Remember(tool.name(), RememberPattern(tool, args), action);
}

std::string PermissionPolicy::RememberPattern(const Tool& tool, const Json::Value& args) const {
  std::string subject = Subject(tool, args);
  if (tool.kind() != ToolKind::kExecute) return subject.empty() ? "*" : EscapeGlob(subject);
  CommandParts split = SplitCommand(subject);
  if (split.parts.size() != 1 || split.substitution) return EscapeGlob(subject);
  const std::string& cmd = split.parts[0];
  // Words are split on blanks only; a quoted first word is kept exact.
  std::vector<std::string> words;
  size_t i = 0;
  while (i < cmd.size() && words.size() < 3) {
    size_t b = cmd.find_first_not_of(" \t", i);
    if (b == std::string::npos) break;
    size_t e = cmd.find_first_of(" \t", b);
    if (e == std::string::npos) e = cmd.size();
    words.push_back(cmd.substr(b, e - b));
    i = e;
  }
  if (words.empty()) return EscapeGlob(subject);
  std::string prefix = words[0];
  if (words.size() > 1 && IsSubcommand(words[1])) prefix += " " + words[1];
  return EscapeGlob(prefix) + "{, *}";
}

}  // namespace lousho::agent
