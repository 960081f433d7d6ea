// Explicit cancellation on C++20 stop tokens: a source owned by whoever may cancel, tokens passed
// to the work, and a cause that tells the work why it was stopped.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>

namespace lousho {

// Why work was stopped. A stream rule or a steering message stops a model stream and the turn
// goes on; the user and shutdown end the turn.
enum class CancelCause { kNone, kUser, kStreamRule, kSteering, kShutdown };

const char* CancelCauseName(CancelCause cause);

namespace internal {
struct CancelState {
  std::stop_source source;
  std::atomic<CancelCause> cause{CancelCause::kNone};
  std::mutex mu;  // only for WaitFor's sleep
  std::condition_variable_any cv;
};
}  // namespace internal

// A read-only view of a cancellation source. Copyable; all methods thread-safe.
// A default-constructed token is never cancelled.
class CancelToken {
 public:
  CancelToken() = default;
  bool cancelled() const { return state_ && state_->source.stop_requested(); }
  // The first cause given to Cancel; kNone while not cancelled.
  CancelCause cause() const {
    return state_ ? state_->cause.load(std::memory_order_acquire) : CancelCause::kNone;
  }
  // Sleeps up to `ms` milliseconds; returns true when woken by cancellation.
  bool WaitFor(long ms) const;
  std::stop_token stop_token() const {
    return state_ ? state_->source.get_token() : std::stop_token();
  }

 private:
  friend class CancelSource;
  explicit CancelToken(std::shared_ptr<internal::CancelState> s) : state_(std::move(s)) {}
  std::shared_ptr<internal::CancelState> state_;
};

// Owns a cancellation flag. Thread-safe; Cancel may be called from any thread, any number of
// times; the first call's cause is kept.
class CancelSource {
 public:
  CancelSource() : state_(std::make_shared<internal::CancelState>()) {}
  CancelToken token() const { return CancelToken(state_); }
  // Returns true for the call that cancelled (false when already cancelled).
  bool Cancel(CancelCause cause = CancelCause::kUser);
  bool cancelled() const { return state_->source.stop_requested(); }
  CancelCause cause() const { return state_->cause.load(std::memory_order_acquire); }

 private:
  std::shared_ptr<internal::CancelState> state_;
};

// Runs `fn` once when the token is cancelled (at once, on this thread, when it already is).
// The destructor unregisters it and, when the callback is running on another thread, waits for
// it to return (std::stop_callback), so `fn` may safely use whatever outlives this object. A
// callback must not destroy its own ScopedCancelCallback, and must not take a lock that is held
// while the ScopedCancelCallback is destroyed.
class ScopedCancelCallback {
 public:
  ScopedCancelCallback(const CancelToken& token, std::function<void()> fn);
  ~ScopedCancelCallback();
  ScopedCancelCallback(const ScopedCancelCallback&) = delete;
  ScopedCancelCallback& operator=(const ScopedCancelCallback&) = delete;

 private:
  std::optional<std::stop_callback<std::function<void()>>> callback_;
};

// A source that also fires when either of two tokens does, with that token's cause: one token
// for work that ends on whichever comes first (a step finished, or the user cancelled).
class LinkedCancelSource {
 public:
  LinkedCancelSource(const CancelToken& a, const CancelToken& b);
  CancelToken token() const { return source_.token(); }
  bool Cancel(CancelCause cause = CancelCause::kUser) { return source_.Cancel(cause); }

 private:
  CancelSource source_;  // before the callbacks: they are unregistered first
  ScopedCancelCallback a_;
  ScopedCancelCallback b_;
};

}  // namespace lousho
