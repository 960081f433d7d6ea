// Explicit cancellation: a source owned by whoever may cancel, tokens passed to the work.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace lousho {

namespace internal {
struct CancelState {
  std::atomic<bool> cancelled{false};
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<int, std::function<void()>>> callbacks;
  int next_id = 0;
};
}  // namespace internal

// A read-only view of a cancellation source. Copyable; all methods thread-safe.
// A default-constructed token is never cancelled.
class CancelToken {
 public:
  CancelToken() = default;
  bool cancelled() const { return state_ && state_->cancelled.load(std::memory_order_acquire); }
  // Sleeps up to `ms` milliseconds; returns true when woken by cancellation.
  bool WaitFor(long ms) const;
  // Runs `fn` once on cancellation (at once if already cancelled). Returns an id for Remove.
  int OnCancel(std::function<void()> fn) const;
  void RemoveCallback(int id) const;

 private:
  friend class CancelSource;
  explicit CancelToken(std::shared_ptr<internal::CancelState> s) : state_(std::move(s)) {}
  std::shared_ptr<internal::CancelState> state_;
};

// Owns a cancellation flag. Thread-safe; Cancel may be called from any thread, any number of times.
class CancelSource {
 public:
  CancelSource() : state_(std::make_shared<internal::CancelState>()) {}
  CancelToken token() const { return CancelToken(state_); }
  void Cancel();
  bool cancelled() const { return state_->cancelled.load(); }

 private:
  std::shared_ptr<internal::CancelState> state_;
};

// RAII registration of a cancellation callback.
class ScopedCancelCallback {
 public:
  ScopedCancelCallback(const CancelToken& token, std::function<void()> fn)
      : token_(token), id_(token.OnCancel(std::move(fn))) {}
  ~ScopedCancelCallback() { token_.RemoveCallback(id_); }
  ScopedCancelCallback(const ScopedCancelCallback&) = delete;
  ScopedCancelCallback& operator=(const ScopedCancelCallback&) = delete;

 private:
  CancelToken token_;
  int id_;
};

}  // namespace lousho
