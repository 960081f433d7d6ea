// Stream rules, the engine's side: buffers, gates, repeat policy and the injected texts.
#include "agent/rules/controller.h"

#include <algorithm>

#include "support/json_util.h"
#include "support/log.h"
#include "support/text.h"

namespace lousho::agent::rules {
namespace fs = std::filesystem;

namespace {

// The text without an unfinished UTF-8 character at its end: held back until it is whole, as a
// JavaScript string never holds half a character.
std::string_view Whole(const std::string& text) {
  return std::string_view(text).substr(0, text.size() - IncompleteUtf8Tail(text));
}

bool AnyPathMatches(const Glob& g, const std::vector<std::string>& paths) {
  for (const auto& p : paths)
    if (g.Match(p) || g.Match(fs::path(p).filename().string())) return true;
  return false;
}

}  // namespace

bool ScopeAdmitsTool(const Rule& r, const std::string& tool,
                     const std::vector<std::string>* paths) {
  const std::string name = AsciiLower(tool);
  if (!r.glob_matchers.empty()) {
    if (!paths) return false;
    bool any = false;
    for (const auto& g : r.glob_matchers) any = any || AnyPathMatches(g, *paths);
    if (!any) return false;
  }
  for (const auto& t : r.tools) {
    if (!t.tool.empty() && t.tool != name) continue;
    if (!t.glob) return true;
    if (paths && AnyPathMatches(*t.glob, *paths)) return true;
  }
  return false;
}

bool Interrupts(const Rule& rule, Source source, const Settings& settings) {
  switch (rule.interrupt_mode.value_or(settings.interrupt_mode)) {
    case InterruptMode::kAlways:
      return true;
    case InterruptMode::kProseOnly:
      return source != Source::kTool;
    case InterruptMode::kToolOnly:
      return source == Source::kTool;
    case InterruptMode::kNever:
      return false;
  }
  return false;
}

Verdict Evaluate(const Rule& rule, Source source, const std::string& tool,
                 const std::vector<std::string>& paths, std::string_view text) {
  Verdict v;
  switch (source) {
    case Source::kText:
    case Source::kThinking:
      if (source == Source::kText ? !rule.text : !rule.thinking) {
        v.why = std::string("scope does not include ") + SourceId(source);
        return v;
      }
      if (!rule.glob_matchers.empty()) {
        v.why = "globs need a file path, and prose has none";
        return v;
      }
      break;
    case Source::kTool:
      if (!ScopeAdmitsTool(rule, tool, &paths)) {
        v.why = "scope or globs do not admit tool '" + tool + "'" +
                (paths.empty() ? " without a path" : " with these paths");
        return v;
      }
      break;
  }
  for (const auto& c : rule.conditions) {
    auto hit = c.regex.Search(text);
    if (!hit.ok()) {
      v.why = "condition '" + c.pattern + "': " + hit.error().message;
      return v;
    }
    if (*hit) {
      v.triggered = true;
      v.condition = c.pattern;
      return v;
    }
  }
  v.why = "no condition matches";
  return v;
}

Controller::Controller(RuleSet set, fs::path cwd, std::string home)
    : set_(std::move(set)), cwd_(std::move(cwd)), home_(std::move(home)) {
  state_.resize(set_.rules.size());
  off_.assign(set_.rules.size(), false);
  for (size_t i = 0; i < set_.rules.size(); ++i) {
    const Rule& r = set_.rules[i];
    if (r.thinking) watches_thinking_ = true;
    for (const auto& c : r.conditions) {
      condition_rule_.push_back(i);
      conditions_.push_back(&c);
    }
  }
  // Joins the text conditions now, when the session opens, rather than on the first delta.
  MakeBuffer(Source::kText, "");
}

bool Controller::injected(const std::string& name) const {
  for (size_t i = 0; i < set_.rules.size(); ++i)
    if (set_.rules[i].name == name) return state_[i].injected;
  return false;
}

void Controller::RestoreInjected(const std::vector<std::string>& names) {
  for (const auto& name : names)
    for (size_t i = 0; i < set_.rules.size(); ++i)
      if (set_.rules[i].name == name) state_[i] = State{true, 0};
}

bool Controller::Repeatable(size_t rule) const {
  const State& s = state_[rule];
  if (!s.injected) return true;
  switch (set_.settings.repeat_mode) {
    case RepeatMode::kOnce:
      return false;
    case RepeatMode::kAfterGap:
      return turns_ - s.at >= set_.settings.repeat_gap;
  }
  return false;
}

void Controller::ResetBuffers() {
  text_.reset();
  thinking_.reset();
  tools_.clear();
}

Controller::Buffer Controller::MakeBuffer(Source source, const std::string& tool_name) {
  Buffer b;
  b.source = source;
  b.tool_name = tool_name;
  b.fired.assign(set_.rules.size(), false);
  // The conditions of the rules that may fire on this stream now; the set (and its joined
  // alternation) changes only when a rule is injected or its gap passes.
  std::vector<ConditionSet::Item> items;
  std::string key = std::string(SourceId(source)) + ":";
  for (size_t tag = 0; tag < conditions_.size(); ++tag) {
    const size_t ri = condition_rule_[tag];
    const Rule& r = set_.rules[ri];
    if (off_[ri] || !Repeatable(ri)) continue;
    bool admits = false;
    switch (source) {
      case Source::kText:
        admits = r.text && r.glob_matchers.empty();  // text has no paths to pass `globs`
        break;
      case Source::kThinking:
        admits = r.thinking && r.glob_matchers.empty();
        break;
      case Source::kTool:
        admits = ScopeAdmitsTool(r, tool_name, nullptr);  // path-gated ones wait for the arguments
        break;
    }
    if (!admits) continue;
    items.push_back(ConditionSet::Item{conditions_[tag]->pattern, &conditions_[tag]->regex, tag});
    key += std::to_string(tag) + ",";
  }
  if (!items.empty()) {
    auto it = joined_.find(key);
    if (it == joined_.end())
      it = joined_.emplace(key, ConditionSet::Join(items, &join_cache_)).first;
    b.conditions.emplace(std::move(items), it->second);
  }
  return b;
}

std::optional<Firing> Controller::OnDelta(const StreamDelta& d) {
  switch (d.kind) {
    case DeltaKind::kText: {
      if (!text_) text_ = MakeBuffer(Source::kText, "");
      if (!text_->conditions) return std::nullopt;
      text_->text += d.text;
      return Match(*text_);
    }
    case DeltaKind::kThinking: {
      if (!watches_thinking_) return std::nullopt;
      if (!thinking_) thinking_ = MakeBuffer(Source::kThinking, "");
      if (!thinking_->conditions) return std::nullopt;
      thinking_->text += d.text;
      return Match(*thinking_);
    }
    case DeltaKind::kToolCallStart: {
      Buffer b = MakeBuffer(Source::kTool, d.name);
      b.call_id = d.id;
      tools_[d.index] = std::move(b);
      return std::nullopt;
    }
    case DeltaKind::kToolCallArgs: {
      auto it = tools_.find(d.index);
      if (it == tools_.end()) {
        it = tools_.emplace(d.index, MakeBuffer(Source::kTool, d.name)).first;
        it->second.call_id = d.id;
      }
      it->second.text += d.text;
      if (!it->second.conditions) return std::nullopt;
      return Match(it->second);
    }
    case DeltaKind::kToolCallEnd: {
      auto it = tools_.find(d.index);
      if (it == tools_.end()) {
        it = tools_.emplace(d.index, MakeBuffer(Source::kTool, d.name)).first;
        it->second.call_id = d.id;
      }
      // The end carries the whole arguments, or none (then the fragments are the whole).
      return CheckFinalArgs(it->second, d.text.empty() ? it->second.text : d.text);
    }
    case DeltaKind::kTextStart:
    case DeltaKind::kTextEnd:
    case DeltaKind::kThinkingStart:
    case DeltaKind::kThinkingEnd:
    case DeltaKind::kServerToolStart:  // the provider's own calls are not the model's output
    case DeltaKind::kServerToolEnd:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Firing> Controller::Match(Buffer& b) {
  std::vector<ConditionSet::Failure> failures;
  std::vector<size_t> tags = b.conditions->Update(Whole(b.text), &failures);
  for (const auto& f : failures)
    SwitchOff(condition_rule_[f.tag], conditions_[f.tag]->pattern, f.error);
  if (!failures.empty()) RemakeConditions();
  if (tags.empty()) return std::nullopt;
  std::vector<size_t> rules;
  for (size_t tag : tags) {
    const size_t ri = condition_rule_[tag];
    if (std::find(rules.begin(), rules.end(), ri) == rules.end()) rules.push_back(ri);
  }
  return Fire(b, rules);
}

void Controller::SwitchOff(size_t rule, const std::string& condition, const Error& error) {
  if (off_[rule]) return;
  off_[rule] = true;
  const Rule& r = set_.rules[rule];
  std::string text = "Stream rule '" + r.name + "' (" + ShownPath(r) +
                     ") is switched off for the rest of this session: its condition '" + condition +
                     "' could not be searched: " + error.message +
                     ". Once it is fixed, a new session uses the rule again.";
  log::Warn(text);
  warnings_.push_back(std::move(text));
}

void Controller::RemakeConditions() {
  // Every stream of this turn stops searching the rules switched off: their condition sets are
  // made again without them, so that the conditions joined with them are joined again (alone,
  // they would cost a search each per delta). A new set searches the text so far once; a rule
  // that fired on a stream does not fire there again.
  auto remake = [&](Buffer& b) {
    if (b.conditions) b.conditions = MakeBuffer(b.source, b.tool_name).conditions;
  };
  for (auto* b : {&text_, &thinking_})
    if (*b) remake(**b);
  for (auto& [index, b] : tools_) remake(b);
}

std::vector<std::string> Controller::TakeWarnings() {
  std::vector<std::string> out;
  out.swap(warnings_);
  return out;
}

bool Controller::switched_off(const std::string& name) const {
  for (size_t i = 0; i < set_.rules.size(); ++i)
    if (set_.rules[i].name == name) return off_[i];
  return false;
}

std::optional<Firing> Controller::CheckFinalArgs(Buffer& b, const std::string& raw) {
  // The parsed arguments, written back as compact JSON, are checked once more: the streamed
  // text may be escaped differently, some providers stream no fragments at all, and the paths
  // that path-gated rules need are known only now.
  auto parsed = ParseJson(raw.empty() ? "{}" : raw);
  const std::string text = parsed.ok() ? WriteJson(*parsed) : raw;
  std::vector<std::string> paths;
  if (parsed.ok()) paths = CandidatePaths(*parsed, cwd_);
  std::vector<size_t> rules;
  bool switched = false;
  for (size_t ri = 0; ri < set_.rules.size(); ++ri) {
    if (b.fired[ri] || off_[ri] || !Repeatable(ri) ||
        !ScopeAdmitsTool(set_.rules[ri], b.tool_name, &paths))
      continue;
    for (const auto& c : set_.rules[ri].conditions) {
      auto hit = c.regex.Search(text);
      if (!hit.ok()) {
        SwitchOff(ri, c.pattern, hit.error());
        switched = true;
        break;
      }
      if (*hit) {
        rules.push_back(ri);
        break;
      }
    }
  }
  if (switched) RemakeConditions();
  b.text = text;
  if (rules.empty()) return std::nullopt;
  return Fire(b, rules);
}

std::optional<Firing> Controller::Fire(Buffer& b, const std::vector<size_t>& rules) {
  // Gates: once per stream (the end re-check must not fire twice), not switched off, and the
  // repeat policy.
  std::vector<size_t> eligible;
  for (size_t ri : rules)
    if (!b.fired[ri] && !off_[ri] && Repeatable(ri)) eligible.push_back(ri);
  if (eligible.empty()) return std::nullopt;
  Firing f;
  f.source = b.source;
  f.tool_call_id = b.call_id;
  f.tool_name = b.tool_name;
  for (size_t ri : eligible) {
    b.fired[ri] = true;
    state_[ri] = State{true, turns_};
    const Rule& r = set_.rules[ri];
    f.rules.push_back(&r);
    f.interrupt = f.interrupt || Interrupts(r, b.source, set_.settings);
  }
  if (f.interrupt) return f;
  if (b.source == Source::kTool) {
    auto& queue = reminders_[b.call_id];
    queue.insert(queue.end(), f.rules.begin(), f.rules.end());
  } else {
    for (const Rule* r : f.rules)
      if (std::find(follow_ups_.begin(), follow_ups_.end(), r) == follow_ups_.end())
        follow_ups_.push_back(r);
  }
  return f;
}

std::vector<const Rule*> Controller::TakeFollowUps() {
  std::vector<const Rule*> out;
  out.swap(follow_ups_);
  return out;
}

std::vector<const Rule*> Controller::TakeToolReminders(const std::string& call_id) {
  auto it = reminders_.find(call_id);
  if (it == reminders_.end()) return {};
  std::vector<const Rule*> out = std::move(it->second);
  reminders_.erase(it);
  return out;
}

std::string Controller::ShownPath(const Rule& rule) const {
  return rules::ShownPath(rule.path, cwd_, home_);
}

std::string Controller::RenderInterrupt(const std::vector<const Rule*>& rules) const {
  std::string out;
  for (const Rule* r : rules) {
    if (!out.empty()) out += "\n\n";
    out += "<system-interrupt reason=\"rule_violation\" rule=\"" + r->name + "\" path=\"" +
           ShownPath(*r) +
           "\">\n"
           "Output interrupted: violated user-defined rule.\n"
           "Not prompt injection; coding agent enforcing project rules.\n"
           "MUST comply:\n\n" +
           r->content + "\n</system-interrupt>";
  }
  return out;
}

std::string Controller::RenderToolReminder(const std::vector<const Rule*>& rules) const {
  std::string out;
  for (const Rule* r : rules) {
    if (!out.empty()) out += "\n\n";
    out +=
        "<system-reminder reason=\"rule_violation\" rule=\"" + r->name + "\" path=\"" +
        ShownPath(*r) +
        "\">\n"
        "User-defined rule matched tool-call arguments. Rule configured not to interrupt "
        "\xE2\x86\x92 "
        "tool ran. MUST comply with the following instruction on subsequent tool calls and "
        "responses. NOT prompt injection \xE2\x80\x94 coding agent enforcing project rules.\n\n" +
        r->content + "\n</system-reminder>";
  }
  return out;
}

std::string Controller::Reason(const std::vector<const Rule*>& rules) {
  std::string names;
  for (const Rule* r : rules) names += (names.empty() ? "" : ", ") + r->name;
  return std::string(rules.size() == 1 ? "TTSR matched rule: " : "TTSR matched rules: ") + names;
}

}  // namespace lousho::agent::rules
