// Tests of cancellation sources, tokens and callbacks.
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
  EXPECT_EQ(t.OnCancel([] {}), -1);
}

TEST(CancelTest, CallbacksRunOnceAndLateOnesRunAtOnce) {
  CancelSource src;
  int runs = 0;
  src.token().OnCancel([&] { ++runs; });
  src.Cancel();
  src.Cancel();
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(src.token().cancelled());
  bool late = false;
  src.token().OnCancel([&] { late = true; });
  EXPECT_TRUE(late);
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

TEST(CancelTest, WaitForWakesOnCancelFromAnotherThread) {
  CancelSource src;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    src.Cancel();
  });
  // Without the wake-up this would sleep a full minute.
  EXPECT_TRUE(src.token().WaitFor(60000));
  t.join();
}

}  // namespace
}  // namespace lousho
