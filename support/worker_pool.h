// Threads for session work: a pool that starts threads on demand and lets idle ones end, and a
// strand that runs one owner's tasks one at a time, in order, on it. Idle sessions hold no thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "support/status.h"

namespace lousho {

struct WorkerPoolOptions {
  size_t max_threads = 512;  // tasks beyond this wait for a free thread
  size_t keep_idle = 2;      // idle threads kept past the idle timeout
  std::chrono::milliseconds idle_timeout{10000};
};

// Thread-safe. The destructor waits for every posted task to finish.
class WorkerPool {
 public:
  explicit WorkerPool(WorkerPoolOptions options = {});
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues a task. Fails (and drops the task) only when it would need a new thread and none can
  // be started, with LOUSHO_RESOURCE_EXHAUSTED.
  Status Post(std::function<void()> task);
  // Blocks until no task is queued or running.
  void Drain();
  // The same for at most `timeout`; true when the pool is idle.
  bool DrainFor(std::chrono::milliseconds timeout);
  size_t threads() const;

 private:
  void Loop();

  WorkerPoolOptions options_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable idle_cv_;
  std::deque<std::function<void()>> tasks_;
  size_t threads_ = 0;
  size_t idle_ = 0;
  size_t running_ = 0;
  bool stopping_ = false;
};

// Runs tasks one at a time in the order posted, on a pool's threads. Thread-safe. Held by
// shared_ptr: while it has work it keeps itself alive, so a task may drop its owner's last
// reference. The pool must outlive it.
class Strand : public std::enable_shared_from_this<Strand> {
 public:
  static std::shared_ptr<Strand> Create(WorkerPool* pool) {
    return std::shared_ptr<Strand>(new Strand(pool));
  }
  Status Post(std::function<void()> task);
  // True while called from one of this strand's tasks.
  bool InTask() const;
  // Blocks until the strand has no task queued or running (never call from its own task).
  void WaitIdle();

 private:
  explicit Strand(WorkerPool* pool) : pool_(pool) {}
  void RunQueued();

  WorkerPool* pool_;
  mutable std::mutex mu_;
  std::condition_variable idle_cv_;
  std::deque<std::function<void()>> tasks_;
  bool scheduled_ = false;
  std::thread::id running_on_;
};

}  // namespace lousho
