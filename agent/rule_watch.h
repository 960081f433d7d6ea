// The session's stream rules (TTSR) at work: watching each delta, announcing and recording what
// fired, and injecting what a rule says (at once, after the message, or in a tool's result).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/rules/controller.h"
#include "agent/stream_control.h"
#include "core/tool.h"

namespace lousho::agent {

class Emitter;
class Recorder;
struct Turn;

// Worker only (but set(), fixed once loaded). Inactive (every call a no-op) when the session
// registered no rule: then a delta costs one pointer test.
class RuleWatch {
 public:
  RuleWatch(Emitter& emitter, Recorder& recorder);
  RuleWatch(const RuleWatch&) = delete;
  RuleWatch& operator=(const RuleWatch&) = delete;

  // Reads the project's rules beside the agent's (once: a session sees the rules of when it
  // opened); rules injected on the current branch stay injected. Before the session is shared.
  void Load(const rules::AgentRules& agent, const std::filesystem::path& cwd);
  bool active() const { return controller_ != nullptr; }
  const rules::RuleSet* set() const { return controller_ ? &controller_->set() : nullptr; }

  // A model request starts / one of its deltas arrives (an interrupt stops the stream) / the
  // stream ended (rules switched off during it are told now) / the request and its calls ended.
  void ResetBuffers();
  std::optional<StreamInterrupt> Watch(const StreamDelta& d, int step);
  void TellWarnings();
  void OnTurnEnd();
  // Injects the prose rules that matched without interrupting; true when it did.
  bool InjectFollowUps(Turn& t);
  // Prepends the reminders of rules that matched call `call_id`'s arguments to its result.
  void RemindInResult(const std::string& call_id, ToolOutput& out);
  // Records a ttsr_injection entry naming the rules.
  void Record(const std::vector<std::string>& names);

 private:
  void Announce(const rules::Firing& f, int step);

  Emitter& emitter_;
  Recorder& recorder_;
  std::unique_ptr<rules::Controller> controller_;
  int fired_ = 0;  // for TtsrTriggered ids
};

}  // namespace lousho::agent
