// The session's place in its history tree: its name, moving the leaf (branching) and the user
// messages one may branch from.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "agent/history.h"
#include "agent/rewind.h"
#include "support/status.h"

namespace lousho::agent {

class NoticeBoard;
class Recorder;
class TurnGate;

// A session name from a prompt: its first line, spaces collapsed, at most kMaxGistChars
// characters (cut at a word, with an ellipsis).
std::string PromptGist(const std::string& text);
inline constexpr size_t kMaxGistChars = 60;

// A user message of the current branch one may branch from.
struct BranchPoint {
  std::string entry_id;
  std::string text;
};

// Thread-safe (the session's mutex).
class Branching {
 public:
  // `rewinder` (may be null: Rewind fails) moves back with the files.
  Branching(std::mutex& mu, Recorder& recorder, NoticeBoard& notices, const TurnGate& gate,
            Rewinder* rewinder = nullptr);
  Branching(const Branching&) = delete;
  Branching& operator=(const Branching&) = delete;

  // The session's name (session_info entries); empty: none yet.
  std::string Name() const;
  // Names the session: records a session_info entry and emits SessionInfoChanged (on the worker,
  // before its next event). An empty or blank name is refused.
  [[nodiscard]] Status SetName(const std::string& name);
  // Moves the leaf to `entry_id` (empty: before the first entry); the next prompt continues from
  // there. The move is recorded (an empty branch_summary entry hanging off `entry_id`, which
  // becomes the leaf), so a session loaded from its file is where it was left; the mode, model,
  // plan, todos and name of the branch come back. Refused while a turn runs.
  [[nodiscard]] Status SetLeaf(const std::string& entry_id);
  // Branches before a user message: the leaf moves to its parent (recorded as SetLeaf does) and
  // the message's text is returned (to edit and send again). Refused while a turn runs or for
  // another kind of entry.
  Result<std::string> BranchFrom(const std::string& entry_id);
  // The user messages of the current branch, oldest first.
  std::vector<BranchPoint> UserMessages() const;
  // [rewind] Branches before a user message and puts back the files the agent changed after it
  // (agent/rewind.h). Blocks while the user is asked: never on a reader thread.
  Result<RewindOutcome> Rewind(const RewindRequest& request);

  // Hooks of the recorder (the session's mutex held): an appended entry may name the session; a
  // branch that names it renames it (one that does not keeps the name).
  void NoteLocked(const Entry& entry);
  void RestoreLocked(const std::vector<const Entry*>& branch);

 private:
  std::mutex& mu_;
  Recorder& recorder_;
  NoticeBoard& notices_;
  const TurnGate& gate_;
  Rewinder* rewinder_;
  std::string name_;
};

}  // namespace lousho::agent
