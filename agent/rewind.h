// Rewind: moves a session back to before one of its user messages (a branch, as
// Branching::BranchFrom does) and puts back the files the agent changed after it, from the
// session's checkpoints (agent/checkpoints.h): write / edit / hook changes one by one, and the
// files a command changed in a git repository (agent/git_snapshot.h). A file that changed since
// the agent last left it (someone else edited it) is only overwritten when the user says so.
#pragma once

#include <string>
#include <vector>

#include "core/client_services.h"
#include "support/cancel.h"
#include "support/status.h"

namespace lousho::agent {

class CheckpointStore;
class Recorder;
class TurnGate;

struct RewindRequest {
  std::string entry_id;  // the user message to go back before
  bool restore_files = true;
  // The caller runs inside the session's run already (the /rewind command): the gate is not
  // claimed again.
  bool in_turn = false;
  // Puts the message's text back in the client's editor where it has one (Dialogs).
  bool prefill_editor = false;
  CancelToken cancel;
};

struct RewindOutcome {
  std::string entry_id;
  std::string text;                   // the message's text, to edit and send again
  std::vector<std::string> restored;  // files put back (or removed: they did not exist)
  std::vector<std::string> kept;      // changed outside the agent and left as they are
  std::vector<std::string> notes;     // what could not be restored, and why
};

// "Rewound to before "<gist>". Restored 2 files: ..." for a note to the user.
std::string DescribeRewind(const RewindOutcome& outcome);

// Thread-safe; blocks while it asks the user (never call it on a reader thread).
class Rewinder {
 public:
  // `store` null: the history moves, no file is restored.
  Rewinder(Recorder& recorder, TurnGate& gate, CheckpointStore* store, ClientServices services,
           std::string session_id);
  Rewinder(const Rewinder&) = delete;
  Rewinder& operator=(const Rewinder&) = delete;

  // Fails (nothing changed) on an id that is no user message of the current branch, while a
  // prompt runs (unless in_turn), on a corrupt checkpoint store, and when the user dismisses the
  // question (LOUSHO_CANCELLED).
  Result<RewindOutcome> Rewind(const RewindRequest& request);

 private:
  struct Plan;
  Result<Plan> MakePlan(const RewindRequest& request);
  // nullopt: cancelled; else whether to overwrite the files in `changed`.
  Result<bool> AskOverwrite(const std::vector<std::string>& changed, const CancelToken& cancel);

  Recorder& recorder_;
  TurnGate& gate_;
  CheckpointStore* store_;
  ClientServices services_;
  std::string session_id_;
};

}  // namespace lousho::agent
