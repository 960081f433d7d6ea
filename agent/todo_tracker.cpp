// The todo list and plan of a session.
#include "agent/todo_tracker.h"

#include "agent/outbox.h"
#include "agent/recorder.h"
#include "support/json_util.h"
#include "support/log.h"

namespace lousho::agent {

Json::Value TodoPhasesToJson(const std::vector<TodoPhase>& phases) {
  Json::Value out(Json::arrayValue);
  for (const auto& p : phases) {
    Json::Value phase(Json::objectValue);
    if (!p.id.empty()) phase["id"] = p.id;
    phase["name"] = p.name;
    Json::Value tasks(Json::arrayValue);
    for (const auto& t : p.tasks) {
      Json::Value task(Json::objectValue);
      if (!t.id.empty()) task["id"] = t.id;
      task["content"] = t.content;
      task["status"] = t.status;
      if (!t.blocker.empty()) task["blocker"] = t.blocker;
      tasks.append(task);
    }
    phase["tasks"] = tasks;
    out.append(phase);
  }
  return out;
}

std::vector<TodoPhase> TodoPhasesFromJson(const Json::Value& v) {
  std::vector<TodoPhase> out;
  if (!v.isArray()) return out;
  for (const auto& p : v) {
    TodoPhase phase;
    phase.id = StringOr(p, "id");
    phase.name = StringOr(p, "name");
    const Json::Value& tasks = MemberOrNull(p, "tasks");
    if (tasks.isArray())
      for (const auto& t : tasks) {
        TodoTask task;
        task.id = StringOr(t, "id");
        task.content = StringOr(t, "content");
        task.status = StringOr(t, "status", "pending");
        task.blocker = StringOr(t, "blocker");
        phase.tasks.push_back(std::move(task));
      }
    out.push_back(std::move(phase));
  }
  return out;
}

namespace {
Entry TodoPhasesEntry(const std::vector<TodoPhase>& phases) {
  Entry e;
  e.kind = EntryKind::kCustom;
  e.more.Edit().custom_type = kTodoPhasesEntryType;
  e.more.Edit().data = TodoPhasesToJson(phases);
  return e;
}

Entry PlanEntryOf(const std::vector<PlanEntry>& plan) {
  Entry e;
  e.kind = EntryKind::kCustom;
  e.more.Edit().custom_type = kPlanEntryType;
  e.more.Edit().data = Json::Value(Json::arrayValue);
  for (const auto& p : plan) {
    Json::Value item(Json::objectValue);
    item["content"] = p.content;
    item["priority"] = p.priority;
    item["status"] = p.status;
    e.more.Edit().data.append(item);
  }
  return e;
}

std::vector<PlanEntry> PlanFromJson(const Json::Value& data) {
  std::vector<PlanEntry> plan;
  for (const auto& p : data) {
    PlanEntry pe;
    pe.content = StringOr(p, "content");
    pe.priority = StringOr(p, "priority", "medium");
    pe.status = StringOr(p, "status", "pending");
    plan.push_back(std::move(pe));
  }
  return plan;
}
}  // namespace

TodoTracker::TodoTracker(std::mutex& mu, NoticeBoard& notices, Recorder& recorder,
                         std::string session_id)
    : mu_(mu), notices_(notices), recorder_(recorder), session_id_(std::move(session_id)) {}

void TodoTracker::Set(std::vector<TodoPhase> phases) {
  // Like a mode change: set now, recorded on the worker (after the running turn's current step).
  Status st = notices_.Push(nullptr, [&](std::vector<Entry>* entries) -> std::optional<Event> {
    entries->push_back(TodoPhasesEntry(phases));
    todos_ = std::move(phases);
    return std::nullopt;
  });
  if (!st.ok()) log::Warn("session " + session_id_ + ": todos not recorded: " + st.error().message);
}

std::vector<TodoPhase> TodoTracker::phases() const {
  std::lock_guard<std::mutex> lock(mu_);
  return todos_;
}

void TodoTracker::Replace(std::vector<TodoPhase> phases) {
  recorder_.Append(TodoPhasesEntry(phases));
  std::lock_guard<std::mutex> lock(mu_);
  todos_ = std::move(phases);
}

const std::vector<PlanEntry>& TodoTracker::RecordPlan() {
  recorder_.Append(PlanEntryOf(plan_));
  // The model's own plan is the todo list from now on.
  TodoPhase phase;
  phase.id = "phase-1";
  phase.name = "Todos";
  for (size_t i = 0; i < plan_.size(); ++i)
    phase.tasks.push_back(
        TodoTask{"task-" + std::to_string(i + 1), plan_[i].content, plan_[i].status, ""});
  Replace({std::move(phase)});
  return plan_;
}

TodoTracker::AtEnd TodoTracker::CheckAtEnd(bool auto_clear) {
  AtEnd out;
  size_t tasks = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& phase : todos_)
      for (const auto& task : phase.tasks) {
        ++tasks;
        if (task.open()) out.open.push_back(task);
      }
  }
  if (tasks > 0 && out.open.empty() && auto_clear) {
    Replace({});
    out.cleared = true;
  }
  return out;
}

Message TodoTracker::Reminder(const std::vector<TodoTask>& open) {
  std::string text = "<system-reminder>\nThese todos are still open:\n";
  for (const auto& task : open) text += "- [" + task.status + "] " + task.content + "\n";
  text +=
      "Go on with them, or update the todo list if they are done or no longer needed.\n"
      "</system-reminder>";
  return Message::Custom("todo-reminder", std::move(text), false);
}

// A plan or todo list the branch never set is empty, not what the branch left behind had.
void TodoTracker::RestoreLocked(const std::vector<const Entry*>& branch) {
  plan_.clear();
  todos_.clear();
  for (const Entry* e : branch) {
    if (e->kind != EntryKind::kCustom) continue;
    if (e->more->custom_type == kPlanEntryType) {
      plan_ = PlanFromJson(e->more->data);
    } else if (e->more->custom_type == kTodoPhasesEntryType) {
      todos_ = TodoPhasesFromJson(e->more->data);
    }
  }
}

}  // namespace lousho::agent
