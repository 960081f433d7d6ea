// Tests of the worker pool and strands: order, one task at a time, idle threads ending.
#include "support/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <vector>

namespace lousho {
namespace {

TEST(WorkerPoolTest, StrandRunsTasksInOrderOneAtATime) {
  WorkerPool pool;
  auto strand = Strand::Create(&pool);
  std::vector<int> seen;
  std::atomic<int> running{0};
  std::atomic<bool> overlap{false};
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(strand
                    ->Post([&, i] {
                      if (++running > 1) overlap = true;
                      seen.push_back(i);
                      --running;
                    })
                    .ok());
  }
  strand->WaitIdle();
  EXPECT_FALSE(overlap.load());
  ASSERT_EQ(seen.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(seen[i], i);
}

TEST(WorkerPoolTest, StrandsRunSideBySide) {
  WorkerPool pool;
  auto a = Strand::Create(&pool);
  auto b = Strand::Create(&pool);
  // Each task waits for the other strand's: they can only finish if both run at once.
  std::promise<void> a_started, b_started;
  auto af = a_started.get_future().share();
  auto bf = b_started.get_future().share();
  ASSERT_TRUE(a->Post([&] {
                 a_started.set_value();
                 bf.wait();
               }).ok());
  ASSERT_TRUE(b->Post([&] {
                 b_started.set_value();
                 af.wait();
               }).ok());
  a->WaitIdle();
  b->WaitIdle();
  SUCCEED();
}

TEST(WorkerPoolTest, ATaskMayDropItsStrandsLastReference) {
  WorkerPoolOptions o;
  o.keep_idle = 0;
  o.idle_timeout = std::chrono::milliseconds(1);
  WorkerPool pool(o);
  {
    auto strand = Strand::Create(&pool);
    std::promise<void> ran;
    // The task holds the last reference to its strand and drops it while running.
    auto holder = std::make_shared<std::shared_ptr<Strand>>(strand);
    ASSERT_TRUE(strand
                    ->Post([holder, &ran] {
                      holder->reset();
                      ran.set_value();
                    })
                    .ok());
    strand.reset();
    ran.get_future().wait();
  }
  pool.Drain();
  // The pool's destructor waits for its threads to end: reaching the end of the test is the check
  // (under ASan a strand freed while still running would be reported).
}

}  // namespace
}  // namespace lousho
