// The session's mode, model and thinking level, and their restoration from a branch.
#include "agent/selection.h"

#include "agent/outbox.h"
#include "support/log.h"

namespace lousho::agent {

namespace {
event::ModelChanged ModelEvent(const ModelChoice& m) {
  return event::ModelChanged{m.provider_name, m.model_id, ThinkingLevelId(m.thinking)};
}

Entry ThinkingEntry(ThinkingLevel level) {
  Entry e;
  e.kind = EntryKind::kThinkingChange;
  e.more.Edit().thinking_level = ThinkingLevelId(level);
  return e;
}

Entry ModelEntry(const ModelChoice& model) {
  Entry e;
  e.kind = EntryKind::kModelChange;
  e.more.Edit().provider = model.provider_name;
  e.more.Edit().model_id = model.model_id;
  return e;
}
}  // namespace

Selection::Selection(std::mutex& mu, NoticeBoard& notices, std::shared_ptr<const AgentConfig> agent,
                     std::string session_id)
    : mu_(mu),
      notices_(notices),
      agent_(std::move(agent)),
      session_id_(std::move(session_id)),
      mode_(agent_->default_mode),
      model_(agent_->model) {}

PermissionMode Selection::mode() const {
  std::lock_guard<std::mutex> lock(mu_);
  return mode_;
}

Status Selection::SetMode(PermissionMode mode, std::function<void()> done) {
  return notices_.Push(std::move(done), [&](std::vector<Entry>* entries) -> Event {
    if (mode != mode_) {
      Entry e;
      e.kind = EntryKind::kModeChange;
      e.more.Edit().mode = PermissionModeId(mode);
      entries->push_back(std::move(e));
    }
    mode_ = mode;
    return event::ModeChanged{PermissionModeId(mode)};
  });
}

ModelChoice Selection::model() const {
  std::lock_guard<std::mutex> lock(mu_);
  return model_;
}

Status Selection::SetModel(ModelChoice model, std::function<void()> done) {
  if (!model.provider) return MakeError(ErrorCode::kModelUnknown, "the model has no provider");
  return notices_.Push(std::move(done), [&](std::vector<Entry>* entries) -> Event {
    entries->push_back(ModelEntry(model));
    if (model.thinking != model_.thinking) entries->push_back(ThinkingEntry(model.thinking));
    model_ = std::move(model);
    return ModelEvent(model_);
  });
}

Status Selection::SetThinking(ThinkingLevel level, std::function<void()> done) {
  return notices_.Push(std::move(done), [&](std::vector<Entry>* entries) -> Event {
    entries->push_back(ThinkingEntry(level));
    model_.thinking = level;
    return ModelEvent(model_);
  });
}

Status Selection::SelectModel(const std::string& id, std::function<void()> done) {
  const size_t slash = id.find('/');
  bool offered = false;
  for (const ModelOption& m : agent_->models) offered = offered || m.id() == id;
  const ModelChoice current = model();
  if (id == current.provider_name + "/" + current.model_id) offered = true;
  if (!offered || slash == std::string::npos)
    return MakeError(ErrorCode::kModelUnknown, "model '" + id + "' is not offered");
  if (!agent_->resolve_model)
    return MakeError(ErrorCode::kModelUnknown, "this agent cannot switch models");
  Result<ModelChoice> choice = agent_->resolve_model(id.substr(0, slash), id.substr(slash + 1));
  if (!choice.ok())
    return MakeError(ErrorCode::kModelUnknown,
                     "cannot use model '" + id + "': " + choice.error().message);
  ModelChoice chosen = std::move(*choice);
  return notices_.Push(std::move(done), [&](std::vector<Entry>* entries) -> Event {
    entries->push_back(ModelEntry(chosen));
    chosen.thinking = model_.thinking;  // the thinking level is its own choice
    model_ = std::move(chosen);
    return ModelEvent(model_);
  });
}

bool Selection::SupportsImages() const {
  std::lock_guard<std::mutex> lock(mu_);
  return model_.provider && model_.provider->SupportsImages();
}

// A mode the branch never set is the agent's default, not what the branch left behind had.
void Selection::RestoreLocked(const std::vector<const Entry*>& branch) {
  mode_ = agent_->default_mode;
  for (const Entry* e : branch)
    if (e->kind == EntryKind::kModeChange)
      if (auto mode = ParsePermissionMode(e->more->mode)) mode_ = *mode;
  RestoreModelLocked(branch);
}

// A session continues with the model and thinking level last chosen on its branch; a branch that
// chose none has the agent's, as the same branch read back from the file would.
void Selection::RestoreModelLocked(const std::vector<const Entry*>& branch) {
  const Entry* model = nullptr;
  const Entry* thinking = nullptr;
  for (const Entry* e : branch) {
    if (e->kind == EntryKind::kModelChange) model = e;
    if (e->kind == EntryKind::kThinkingChange) thinking = e;
  }
  ModelChoice chosen = agent_->model;
  auto is = [](const ModelChoice& m, const Entry* e) {
    return m.provider_name == e->more->provider && m.model_id == e->more->model_id;
  };
  if (model && is(model_, model)) {
    chosen = model_;  // already built
  } else if (model && !is(chosen, model)) {
    Result<ModelChoice> choice = MakeError(ErrorCode::kModelUnknown, "no model resolver");
    if (agent_->resolve_model)
      choice = agent_->resolve_model(model->more->provider, model->more->model_id);
    if (choice.ok()) {
      chosen = std::move(*choice);
    } else {
      log::Warn("session " + session_id_ + ": cannot restore model " + model->more->provider + "/" +
                model->more->model_id + " (" + choice.error().message + "); using " +
                chosen.provider_name + "/" + chosen.model_id);
    }
  }
  chosen.thinking =
      thinking ? ParseThinkingLevel(thinking->more->thinking_level) : agent_->model.thinking;
  model_ = std::move(chosen);
}

}  // namespace lousho::agent
