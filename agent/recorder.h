// The recorder: the only way an entry reaches a session's history, and every entry that does
// reaches the session file too (the History records each append through the file's recorder).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/history.h"
#include "core/events.h"
#include "support/status.h"

namespace lousho::agent {

struct Turn;

// Guards the history with the session's mutex: every method takes it, and the hooks run under
// it (so a hook must not call back into the recorder). Appends come from the session's worker,
// and from a door only while no turn runs (AddContext, SetLeaf).
class Recorder {
 public:
  // Called under the lock with every entry appended, and with the branch after the leaf moved.
  using EntryHook = std::function<void(const Entry&)>;
  using BranchHook = std::function<void(const std::vector<const Entry*>&)>;

  Recorder(std::mutex& mu, std::shared_ptr<HistoryRecorder> file);
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  void OnAppend(EntryHook hook);
  void OnBranch(BranchHook hook);

  // Replaces the tree with stored entries (nothing is written: the file holds them). Before the
  // session is shared.
  Status Seed(std::vector<Entry> entries, const std::string& leaf,
              std::vector<std::string>* repaired);
  // Appends at the leaf and records it; returns the entry's id.
  std::string Append(Entry entry);
  // A fresh entry id for a message not recorded yet: a streamed message gets it when it starts,
  // so its chunks carry the id its entry will have (the ACP messageId).
  std::string NewMessageId();
  // A message entry (timestamped now unless it is), with the id `id` when given.
  void AppendMessage(Message message, std::string id = {});
  // The same when `now` (called under the lock) says so; returns whether it did.
  bool AppendMessageIf(Message message, const std::function<bool()>& now);
  // Moves the leaf so that it lasts (History::BranchTo) to the entry `target` names (or fails
  // with), and calls the branch hooks, all in one lock.
  using BranchTarget = std::function<Result<std::string>(const History&)>;
  Status BranchTo(const BranchTarget& target);
  // Calls the branch hooks with the current branch (a seeded session restoring its state).
  void Restore();
  // Calls `fn` with the history under the lock: `fn` must not call into the session.
  void Read(const std::function<void(const History&)>& fn) const;

  // The session file: durable now (a turn's end), let go (the session closes).
  void Flush();
  void Close();
  // Emits what the file reports of saving (a failure, a recovery) as warnings; a cheap test when
  // there is nothing to tell.
  void TellSaving(const EventSink& sink);

 private:
  const Entry& AppendLocked(Entry entry);
  static Entry MessageEntry(Message message);

  std::mutex& mu_;
  History history_;
  std::shared_ptr<HistoryRecorder> file_;
  std::vector<EntryHook> on_append_;
  std::vector<BranchHook> on_branch_;
};

// Appends a message of the running prompt: recorded, and kept for the prompt's agent_end.
// Returns the prompt's copy (to emit).
const Message& RecordTurnMessage(Recorder& recorder, Turn& turn, Message message,
                                 std::string id = {});

}  // namespace lousho::agent
