// Stream rules, the engine's side: buffers per stream, matching on every delta, the eligibility
// gates, the repeat policy and the texts injected. Called by the session on its worker only.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/rules/loader.h"
#include "agent/rules/matcher.h"
#include "core/provider.h"

namespace lousho::agent::rules {

// Rules that matched on one delta and passed every gate.
struct Firing {
  Source source = Source::kText;
  bool interrupt = false;    // stop the stream now; else deferred (prose) or a tool reminder
  std::string tool_call_id;  // kTool
  std::string tool_name;     // kTool
  std::vector<const Rule*> rules;
};

// Whether a rule's scope and `globs` admit tool `tool` with these candidate paths (null: not
// known yet, so rules that need a path do not pass).
bool ScopeAdmitsTool(const Rule& r, const std::string& tool, const std::vector<std::string>* paths);
// Whether a match of `rule` on `source` stops the stream under `settings`.
bool Interrupts(const Rule& rule, Source source, const Settings& settings);

// What one rule says about one text, as `lousho rules test` shows it (no streaming, no repeat
// policy): the gate that stopped it, or the condition that matched.
struct Verdict {
  bool triggered = false;
  std::string condition;  // the matching condition, when triggered
  std::string why;        // when not triggered
};
Verdict Evaluate(const Rule& rule, Source source, const std::string& tool,
                 const std::vector<std::string>& paths, std::string_view text);

// Not thread-safe: one per session, used on the session's worker. Rules are compiled once (the
// RuleSet's regexes are shared); joined alternations are cached per set of conditions.
class Controller {
 public:
  Controller(RuleSet set, std::filesystem::path cwd, std::string home);

  const RuleSet& set() const { return set_; }
  const Settings& settings() const { return set_.settings; }

  // Clears every stream buffer: at each model request (turn) and each assistant message.
  void ResetBuffers();
  // One provider delta, before it leaves the engine. Matching rules are marked injected at once
  // (so a deferred one cannot queue twice); non-interrupting prose rules wait in the follow-up
  // queue, non-interrupting tool rules wait for that call's result.
  std::optional<Firing> OnDelta(const StreamDelta& d);
  // A turn (model request) ended: the after-gap counter advances.
  void OnTurnEnd() { ++turns_; }
  // Rules injected earlier in this session (a resumed one): they count as injected at turn 0.
  void RestoreInjected(const std::vector<std::string>& names);

  // Prose rules that matched without interrupting, to inject once the message completed.
  std::vector<const Rule*> TakeFollowUps();
  // Tool rules that matched call `call_id` without interrupting, to prepend to its result.
  std::vector<const Rule*> TakeToolReminders(const std::string& call_id);

  // The hidden message's text: one <system-interrupt> block per rule.
  std::string RenderInterrupt(const std::vector<const Rule*>& rules) const;
  // The reminder prepended to a tool result: one <system-reminder> block per rule.
  std::string RenderToolReminder(const std::vector<const Rule*>& rules) const;
  // "TTSR matched rule: a" / "TTSR matched rules: a, b".
  static std::string Reason(const std::vector<const Rule*>& rules);
  std::string ShownPath(const Rule& rule) const;
  bool injected(const std::string& name) const;

  // A rule whose condition could not be searched (it hit a matching limit: it backtracks too
  // much for its text) is switched off for the rest of the session, at its first failure: no
  // buffer searches it again. Each comes back here once, as the text that tells the user.
  std::vector<std::string> TakeWarnings();
  bool switched_off(const std::string& name) const;

 private:
  struct Buffer {
    Source source = Source::kText;
    std::string text;
    std::string call_id, tool_name;
    std::optional<ConditionSet> conditions;
    std::vector<bool> fired;  // per rule: already fired for this buffer
  };

  Buffer MakeBuffer(Source source, const std::string& tool_name);
  bool Repeatable(size_t rule) const;
  bool AdmitsTool(const Rule& r, const std::string& tool,
                  const std::vector<std::string>* paths) const;
  std::optional<Firing> Match(Buffer& b);
  std::optional<Firing> CheckFinalArgs(Buffer& b, const std::string& raw);
  std::optional<Firing> Fire(Buffer& b, const std::vector<size_t>& rules);
  // Marks a rule off and queues the warning; RemakeConditions then leaves it out of the streams.
  void SwitchOff(size_t rule, const std::string& condition, const Error& error);
  void RemakeConditions();

  RuleSet set_;
  std::filesystem::path cwd_;
  std::string home_;
  bool watches_thinking_ = false;
  std::vector<size_t> condition_rule_;                               // condition tag -> rule index
  std::vector<const Condition*> conditions_;                         // by tag
  std::map<std::string, std::vector<ConditionSet::Joined>> joined_;  // by tag list
  ConditionSet::JoinCache join_cache_;  // alternations by pattern, across tag lists
  struct State {
    bool injected = false;
    long long at = 0;  // turns_ when last injected
  };
  std::vector<State> state_;
  std::vector<bool> off_;  // per rule: switched off (SwitchOff)
  std::vector<std::string> warnings_;
  long long turns_ = 0;
  std::optional<Buffer> text_, thinking_;
  std::map<int, Buffer> tools_;  // by content index
  std::vector<const Rule*> follow_ups_;
  std::map<std::string, std::vector<const Rule*>> reminders_;
};

}  // namespace lousho::agent::rules
