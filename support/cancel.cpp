// Cancellation source and token.
#include "support/cancel.h"

#include <chrono>
#include <thread>

namespace lousho {

bool CancelToken::WaitFor(long ms) const {
  if (!state_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    return false;
  }
  std::unique_lock<std::mutex> lock(state_->mu);
  return state_->cv.wait_for(lock, std::chrono::milliseconds(ms),
                             [&] { return state_->cancelled.load(); });
}

int CancelToken::OnCancel(std::function<void()> fn) const {
  if (!state_) return -1;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->cancelled.load()) {
      int id = state_->next_id++;
      state_->callbacks.emplace_back(id, std::move(fn));
      return id;
    }
  }
  fn();
  return -1;
}

void CancelToken::RemoveCallback(int id) const {
  if (!state_ || id < 0) return;
  std::lock_guard<std::mutex> lock(state_->mu);
  auto& cbs = state_->callbacks;
  for (auto it = cbs.begin(); it != cbs.end(); ++it) {
    if (it->first == id) {
      cbs.erase(it);
      return;
    }
  }
}

void CancelSource::Cancel() {
  std::vector<std::pair<int, std::function<void()>>> cbs;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->cancelled.exchange(true)) return;
    cbs.swap(state_->callbacks);
  }
  state_->cv.notify_all();
  for (auto& [id, fn] : cbs) fn();
}

}  // namespace lousho
