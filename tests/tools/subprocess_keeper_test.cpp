// Tests for support/subprocess: the keeper's own signals (a branch of its loop of its own since
// the issue-19 split).
#include <gtest/gtest.h>
#include <signal.h>

#include "support/subprocess.h"

namespace lousho {
namespace {

TEST(SubprocessKeeperTest, SigtermToTheKeeperEndsTheTree) {
  // The command's parent is the keeper: told to end by SIGTERM, it ends the command's tree at
  // once, long before the timeout (which only bounds the test if that branch is broken).
  SubprocessOptions o;
  o.argv = {"/bin/sh", "-c", "kill -TERM $PPID; sleep 30; echo survived"};
  o.timeout_ms = 20000;
  auto r = RunSubprocess(o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->signal, SIGTERM);
  EXPECT_EQ(r->output.find("survived"), std::string::npos);
}

}  // namespace
}  // namespace lousho
