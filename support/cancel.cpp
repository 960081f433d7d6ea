// Cancellation source, token and scoped callback on std::stop_source.
#include "support/cancel.h"

#include <chrono>
#include <thread>

namespace lousho {

const char* CancelCauseName(CancelCause cause) {
  switch (cause) {
    case CancelCause::kNone:
      return "none";
    case CancelCause::kUser:
      return "user";
    case CancelCause::kStreamRule:
      return "stream_rule";
    case CancelCause::kSteering:
      return "steering";
    case CancelCause::kShutdown:
      return "shutdown";
  }
  return "none";
}

bool CancelToken::WaitFor(long ms) const {
  if (!state_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return false;
  }
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait_for(lock, state_->source.get_token(), std::chrono::milliseconds(ms),
                      [] { return false; });
  return state_->source.stop_requested();
}

bool CancelSource::Cancel(CancelCause cause) {
  CancelCause none = CancelCause::kNone;
  // The cause is set before the stop is requested, so whoever sees the stop sees its cause.
  state_->cause.compare_exchange_strong(none, cause, std::memory_order_acq_rel);
  return state_->source.request_stop();
}

ScopedCancelCallback::ScopedCancelCallback(const CancelToken& token, std::function<void()> fn) {
  callback_.emplace(token.stop_token(), std::move(fn));
}

ScopedCancelCallback::~ScopedCancelCallback() = default;

LinkedCancelSource::LinkedCancelSource(const CancelToken& a, const CancelToken& b)
    : a_(a, [src = source_, a]() mutable { src.Cancel(a.cause()); }),
      b_(b, [src = source_, b]() mutable { src.Cancel(b.cause()); }) {}

}  // namespace lousho
