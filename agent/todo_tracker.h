// The session's todo list (in phases) and the todo tool's plan: set, recorded in the history,
// restored when a branch is loaded, and looked at when a prompt would end.
#pragma once

#include <json/json.h>

#include <mutex>
#include <string>
#include <vector>

#include "agent/history.h"
#include "core/tool.h"

namespace lousho::agent {

class NoticeBoard;
class Recorder;

Json::Value TodoPhasesToJson(const std::vector<TodoPhase>& phases);
// Lenient: fields of the wrong type are left at their defaults.
std::vector<TodoPhase> TodoPhasesFromJson(const Json::Value& v);

// What the engine does with open todos when a prompt would end (off unless a door asks).
struct TodoSettings {
  bool reminders = false;   // remind the model of open todos and ask it again
  int max_reminders = 3;    // per prompt
  bool auto_clear = false;  // clear the list when every task is done
};

// The todo list is guarded by the session's mutex; the plan is the worker's (the todo tool
// writes it in place).
class TodoTracker {
 public:
  TodoTracker(std::mutex& mu, NoticeBoard& notices, Recorder& recorder, std::string session_id);
  TodoTracker(const TodoTracker&) = delete;
  TodoTracker& operator=(const TodoTracker&) = delete;

  // Replaces the list at once; recorded on the worker (after the running turn's current step).
  void Set(std::vector<TodoPhase> phases);
  std::vector<TodoPhase> phases() const;

  // The todo tool's plan (worker only).
  std::vector<PlanEntry>* plan() { return &plan_; }
  // The tool changed the plan: it is recorded and becomes the todo list. Returns the plan.
  // Worker only.
  const std::vector<PlanEntry>& RecordPlan();

  // A prompt would end: the open tasks (in order), or, when every task is done and `auto_clear`
  // is set, the list is cleared (recorded) and `cleared` is true. Worker only.
  struct AtEnd {
    bool cleared = false;
    std::vector<TodoTask> open;
  };
  AtEnd CheckAtEnd(bool auto_clear);
  // The hidden message reminding the model of `open`.
  static Message Reminder(const std::vector<TodoTask>& open);

  // The plan and the list last recorded on `branch` (none: empty). The session's mutex held.
  void RestoreLocked(const std::vector<const Entry*>& branch);

 private:
  void Replace(std::vector<TodoPhase> phases);  // records, then sets (worker)

  std::mutex& mu_;
  NoticeBoard& notices_;
  Recorder& recorder_;
  std::string session_id_;
  std::vector<TodoPhase> todos_;
  std::vector<PlanEntry> plan_;
};

}  // namespace lousho::agent
