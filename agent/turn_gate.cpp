// The session's one-run-at-a-time gate.
#include "agent/turn_gate.h"

namespace lousho::agent {

Result<std::shared_ptr<CancelSource>> TurnGate::Begin(bool cancellable) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closing_) return MakeError(ErrorCode::kSessionClosed, "the session is closing");
  if (busy_)
    return MakeError(ErrorCode::kSessionBusy, "a prompt is already running in this session");
  busy_ = true;
  if (cancellable) cancel_ = std::make_shared<CancelSource>();
  return cancel_;
}

void TurnGate::End() {
  std::lock_guard<std::mutex> lock(mu_);
  busy_ = false;
  cancel_.reset();
}

void TurnGate::Cancel(CancelCause cause) {
  std::shared_ptr<CancelSource> source;
  {
    std::lock_guard<std::mutex> lock(mu_);
    source = cancel_;
  }
  if (source) source->Cancel(cause);  // outside the lock: callbacks never run under it
}

void TurnGate::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closing_ = true;
}

bool TurnGate::busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return busy_;
}

}  // namespace lousho::agent
