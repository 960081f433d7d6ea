// Tests of cancellation sources, tokens, causes and scoped callbacks.
#include "support/cancel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace lousho {
namespace {

TEST(CancelTest, DefaultTokenIsNeverCancelled) {
  CancelToken t;
  EXPECT_FALSE(t.cancelled());
  EXPECT_FALSE(t.WaitFor(1));
  EXPECT_EQ(t.cause(), CancelCause::kNone);
  bool ran = false;
  {
    ScopedCancelCallback cb(t, [&] { ran = true; });
  }
  EXPECT_FALSE(ran);
}

TEST(CancelTest, CallbacksRunOnceAndLateOnesRunAtOnce) {
  CancelSource src;
  int runs = 0;
  ScopedCancelCallback cb(src.token(), [&] { ++runs; });
  EXPECT_TRUE(src.Cancel());
  EXPECT_FALSE(src.Cancel());
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(src.token().cancelled());
  bool late = false;
  ScopedCancelCallback late_cb(src.token(), [&] { late = true; });
  EXPECT_TRUE(late);
}

TEST(CancelTest, FirstCauseIsKept) {
  CancelSource src;
  EXPECT_EQ(src.cause(), CancelCause::kNone);
  src.Cancel(CancelCause::kStreamRule);
  src.Cancel(CancelCause::kUser);
  EXPECT_EQ(src.token().cause(), CancelCause::kStreamRule);
  EXPECT_STREQ(CancelCauseName(src.cause()), "stream_rule");
}

TEST(CancelTest, RemovedCallbackDoesNotRun) {
  CancelSource src;
  bool ran = false;
  {
    ScopedCancelCallback cb(src.token(), [&] { ran = true; });
  }
  src.Cancel();
  EXPECT_FALSE(ran);
}

// The destructor of a callback's registration waits for a callback running on another thread,
// so the callback may use state that dies with the registration's scope.
TEST(CancelTest, DestructorWaitsForRunningCallback) {
  CancelSource src;
  std::atomic<bool> entered{false};
  std::atomic<bool> release{false};
  std::atomic<bool> finished{false};
  auto reg = std::make_unique<ScopedCancelCallback>(src.token(), [&] {
    entered = true;
    while (!release.load()) std::this_thread::yield();
    finished = true;
  });
  std::thread canceller([&] { src.Cancel(); });
  while (!entered.load()) std::this_thread::yield();
  std::thread releaser([&] { release = true; });
  reg.reset();  // returns only after the callback has finished
  EXPECT_TRUE(finished.load());
  releaser.join();
  canceller.join();
}

TEST(CancelTest, WaitForWakesOnCancelFromAnotherThread) {
  CancelSource src;
  std::thread t([&] { src.Cancel(); });
  // Without the wake-up this would sleep a full minute.
  EXPECT_TRUE(src.token().WaitFor(60000));
  t.join();
}

}  // namespace
}  // namespace lousho
