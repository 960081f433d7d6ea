// Whether the session runs something (a prompt, a compaction, a branch move), whether it is
// closing, and the running prompt's cancellation.
#pragma once

#include <memory>
#include <mutex>

#include "support/cancel.h"
#include "support/status.h"

namespace lousho::agent {

// Guarded by the session's mutex; Cancel fires outside it (cancellation callbacks never run
// under the lock).
class TurnGate {
 public:
  explicit TurnGate(std::mutex& mu) : mu_(mu) {}
  TurnGate(const TurnGate&) = delete;
  TurnGate& operator=(const TurnGate&) = delete;

  // Claims the session for one run: LOUSHO_SESSION_CLOSED when it closes, LOUSHO_SESSION_BUSY
  // when something runs. The run's cancellation source (null for a run that is not cancelled).
  Result<std::shared_ptr<CancelSource>> Begin(bool cancellable = true);
  // Lets go of the session (the run ended, or never started).
  void End();
  // Cancels the running run, if any, with that cause. Returns at once.
  void Cancel(CancelCause cause);
  // Refuses every later run.
  void Close();
  bool busy() const;
  bool BusyLocked() const { return busy_; }  // the session's mutex held

 private:
  std::mutex& mu_;
  bool busy_ = false;
  bool closing_ = false;
  std::shared_ptr<CancelSource> cancel_;
};

}  // namespace lousho::agent
