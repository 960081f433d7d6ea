// Stream rules at work in a session.
#include "agent/rule_watch.h"

#include "agent/outbox.h"
#include "agent/recorder.h"
#include "agent/turn.h"
#include "support/log.h"

namespace lousho::agent {

namespace {
// The pause between a stream rule's interruption and the retry: a user's cancel in it wins.
constexpr int kTtsrRetryDelayMs = 50;

Message HiddenRuleMessage(std::string text) {
  return Message::Custom("ttsr-injection", std::move(text), false);
}

std::vector<std::string> RuleNames(const std::vector<const rules::Rule*>& rules) {
  std::vector<std::string> names;
  names.reserve(rules.size());
  for (const auto* r : rules) names.push_back(r->name);
  return names;
}
}  // namespace

RuleWatch::RuleWatch(Emitter& emitter, Recorder& recorder)
    : emitter_(emitter), recorder_(recorder) {}

void RuleWatch::Load(const rules::AgentRules& agent, const std::filesystem::path& cwd) {
  rules::RuleSet set = rules::LoadSessionRules(agent, cwd);
  // The agent's own warnings were logged when it was built.
  for (size_t i = agent.warnings.size(); i < set.warnings.size(); ++i)
    log::Warn("stream rules: " + set.warnings[i]);
  if (set.rules.empty()) return;
  controller_ = std::make_unique<rules::Controller>(std::move(set), cwd, agent.home);
  // `once` outlives a restart: rules injected on this branch stay injected.
  recorder_.Read([&](const History& h) {
    for (const Entry* e : h.Branch())
      if (e->kind == EntryKind::kTtsrInjection) controller_->RestoreInjected(e->more->rules);
  });
}

void RuleWatch::ResetBuffers() {
  if (controller_) controller_->ResetBuffers();
}

void RuleWatch::OnTurnEnd() {
  if (controller_) controller_->OnTurnEnd();
}

void RuleWatch::TellWarnings() {
  if (!controller_) return;
  for (auto& w : controller_->TakeWarnings())
    emitter_.Emit(event::Warning{"stream-rules", std::move(w), "A stream rule was switched off"});
}

std::optional<StreamInterrupt> RuleWatch::Watch(const StreamDelta& d, int step) {
  if (!controller_) return std::nullopt;
  auto f = controller_->OnDelta(d);
  if (!f) return std::nullopt;
  if (!f->interrupt) {
    // A prose rule waits for the message to complete, silently; a tool rule is announced now
    // and rides on the call's result.
    if (f->source == rules::Source::kTool) {
      Announce(*f, step);
      Record(RuleNames(f->rules));
    }
    return std::nullopt;
  }
  Announce(*f, step);
  StreamInterrupt i;
  i.cause = CancelCause::kStreamRule;
  i.keep_partial = controller_->settings().context_mode == rules::ContextMode::kKeep;
  i.reason = rules::Controller::Reason(f->rules);
  i.silent = true;
  i.delay_ms = kTtsrRetryDelayMs;
  i.inject.push_back(HiddenRuleMessage(controller_->RenderInterrupt(f->rules)));
  i.ttsr_rules = RuleNames(f->rules);
  return i;
}

void RuleWatch::Announce(const rules::Firing& f, int step) {
  event::TtsrTriggered e;
  e.turn = step;
  e.interrupted = f.interrupt;
  e.source = rules::SourceId(f.source);
  e.tool_call_id = f.tool_call_id;
  e.id = "ttsr-" + std::to_string(++fired_);
  for (const rules::Rule* r : f.rules) {
    e.rules.push_back(r->name);
    event::TtsrRule d;
    d.name = r->name;
    d.path = controller_->ShownPath(*r);
    d.content = r->content;
    for (const auto& c : r->conditions) d.conditions.push_back(c.pattern);
    d.scope = r->scope;
    d.interrupt_mode =
        rules::InterruptModeId(r->interrupt_mode.value_or(controller_->settings().interrupt_mode));
    d.origin = r->origin;
    d.file = r->path;
    d.description = r->description;
    d.globs = r->globs;
    d.repeat_mode = rules::RepeatModeId(controller_->settings().repeat_mode);
    d.repeat_gap = controller_->settings().repeat_gap;
    e.details.push_back(std::move(d));
  }
  emitter_.Emit(e);
}

void RuleWatch::Record(const std::vector<std::string>& names) {
  Entry e;
  e.kind = EntryKind::kTtsrInjection;
  e.more.Edit().rules = names;
  recorder_.Append(std::move(e));
}

bool RuleWatch::InjectFollowUps(Turn& t) {
  if (!controller_) return false;
  auto rules = controller_->TakeFollowUps();
  if (rules.empty()) return false;
  emitter_.ShowMessage(
      t.step,
      RecordTurnMessage(recorder_, t, HiddenRuleMessage(controller_->RenderInterrupt(rules))));
  Record(RuleNames(rules));
  return true;
}

void RuleWatch::RemindInResult(const std::string& call_id, ToolOutput& out) {
  if (!controller_) return;
  // Rules that matched this call's arguments without interrupting: the model reads them first
  // in the result (the editor already saw them as a ttsr event).
  auto reminded = controller_->TakeToolReminders(call_id);
  if (!reminded.empty())
    out.content.insert(out.content.begin(),
                       ContentBlock::Text(controller_->RenderToolReminder(reminded)));
}

}  // namespace lousho::agent
