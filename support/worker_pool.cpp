// Worker pool and strands.
#include "support/worker_pool.h"

#include <system_error>

#include "support/log.h"

namespace lousho {

WorkerPool::WorkerPool(WorkerPoolOptions options) : options_(options) {}

WorkerPool::~WorkerPool() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return tasks_.empty() && running_ == 0; });
  stopping_ = true;
  work_cv_.notify_all();
  idle_cv_.wait(lock, [&] { return threads_ == 0; });
}

Status WorkerPool::Post(std::function<void()> task) {
  std::unique_lock<std::mutex> lock(mu_);
  const bool need_thread = idle_ <= tasks_.size() && threads_ < options_.max_threads;
  tasks_.push_back(std::move(task));
  if (need_thread) {
    try {
      std::thread(&WorkerPool::Loop, this).detach();
      ++threads_;
    } catch (const std::system_error& e) {
      if (threads_ == 0 || idle_ == 0) {
        tasks_.pop_back();
        log::Error(std::string("cannot start a worker thread: ") + e.what());
        return MakeError(ErrorCode::kResourceExhausted,
                         std::string("cannot start a worker thread: ") + e.what());
      }
    }
  }
  work_cv_.notify_one();
  return Status::Ok();
}

void WorkerPool::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ++idle_;
    const bool woke = work_cv_.wait_for(lock, options_.idle_timeout,
                                        [&] { return stopping_ || !tasks_.empty(); });
    --idle_;
    if (tasks_.empty() && (stopping_ || (!woke && idle_ >= options_.keep_idle))) break;
    if (tasks_.empty()) continue;
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    ++running_;
    lock.unlock();
    task();
    task = nullptr;  // the task's captures die before the pool counts it done
    lock.lock();
    --running_;
    if (tasks_.empty() && running_ == 0) idle_cv_.notify_all();
  }
  --threads_;
  // The last touch of the pool: its destructor may return as soon as this is seen.
  idle_cv_.notify_all();
}

void WorkerPool::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return tasks_.empty() && running_ == 0; });
}

bool WorkerPool::DrainFor(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_cv_.wait_for(lock, timeout, [&] { return tasks_.empty() && running_ == 0; });
}

size_t WorkerPool::threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return threads_;
}

Status Strand::Post(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  tasks_.push_back(std::move(task));
  if (scheduled_) return Status::Ok();
  Status st = pool_->Post([self = shared_from_this()] { self->RunQueued(); });
  if (!st.ok()) {
    tasks_.pop_back();
    return st;
  }
  scheduled_ = true;
  return Status::Ok();
}

void Strand::RunQueued() {
  std::unique_lock<std::mutex> lock(mu_);
  running_on_ = std::this_thread::get_id();
  while (!tasks_.empty()) {
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    task = nullptr;
    lock.lock();
  }
  running_on_ = std::thread::id();
  scheduled_ = false;
  idle_cv_.notify_all();
}

bool Strand::InTask() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_on_ == std::this_thread::get_id();
}

void Strand::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [&] { return !scheduled_; });
}

}  // namespace lousho
