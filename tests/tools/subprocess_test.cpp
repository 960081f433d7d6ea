// Tests for support/subprocess: real processes, groups, caps, timeouts and cancellation.
#include "support/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <thread>

namespace lousho {
namespace {

using Clock = std::chrono::steady_clock;

// A process is gone when kill(pid, 0) fails or it is a zombie waiting for its reaper.
bool ProcessGone(int pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// Waits (bounded, generous) for the process to disappear.
bool EventuallyGone(int pid) {
  auto until = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < until) {
    if (ProcessGone(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

SubprocessOptions Bash(const std::string& cmd) {
  SubprocessOptions o;
  o.argv = {"/bin/bash", "-c", cmd};
  return o;
}

TEST(SubprocessTest, CapturesMergedOutputAndExitCode) {
  auto r = RunSubprocess(Bash("echo out; echo err >&2; exit 3"));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->output, "out\nerr\n");
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->signal.has_value());
  EXPECT_FALSE(r->timed_out);
}

TEST(SubprocessTest, RunsInCwdWithEnv) {
  SubprocessOptions o = Bash("pwd; echo $LOUSHO_X");
  o.cwd = "/tmp";
  o.env = {{"LOUSHO_X", "yes"}};
  auto r = RunSubprocess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output, "/tmp\nyes\n");
}

TEST(SubprocessTest, ReportsSignal) {
  auto r = RunSubprocess(Bash("kill -9 $$"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->signal, SIGKILL);
  EXPECT_FALSE(r->exit_code.has_value());
}

TEST(SubprocessTest, KeepsTailWhenCapped) {
  SubprocessOptions o = Bash("for i in $(seq 1 20000); do echo line$i; done");
  o.max_output_bytes = 1000;
  auto r = RunSubprocess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->output.size(), 1000u);
  EXPECT_NE(r->output.find("line20000\n"), std::string::npos);
  EXPECT_GT(r->total_bytes, 100000u);
}

TEST(SubprocessTest, MissingProgramAndCwdAreErrors) {
  SubprocessOptions o;
  o.argv = {"/nonexistent/program"};
  EXPECT_FALSE(RunSubprocess(o).ok());
  SubprocessOptions c = Bash("true");
  c.cwd = "/nonexistent/dir";
  auto r = RunSubprocess(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/dir"), std::string::npos);
}

TEST(SubprocessTest, TimeoutKillsTheWholeGroup) {
  SubprocessOptions o = Bash("sleep 100 & echo $!; sleep 100");
  o.timeout_ms = 300;
  o.kill_grace_ms = 500;
  auto start = Clock::now();
  auto r = RunSubprocess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20));
  int bg = std::stoi(r->output);
  EXPECT_TRUE(EventuallyGone(bg)) << "background child " << bg << " survived";
  EXPECT_TRUE(EventuallyGone(r->pid));
}

TEST(SubprocessTest, TermIgnoredStillKilledAfterGrace) {
  SubprocessOptions o = Bash("trap '' TERM; sleep 100 & wait");
  o.timeout_ms = 200;
  o.kill_grace_ms = 200;
  auto r = RunSubprocess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_TRUE(EventuallyGone(r->pid));
}

TEST(SubprocessTest, CancelFromAnotherThreadReturnsPromptly) {
  CancelSource source;
  SubprocessOptions o = Bash("sleep 100 & echo $!; sleep 100");
  o.cancel = source.token();
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    source.Cancel();
  });
  auto start = Clock::now();
  auto r = RunSubprocess(o);
  canceller.join();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->cancelled);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20));
  EXPECT_TRUE(EventuallyGone(std::stoi(r->output)));
}

TEST(SubprocessTest, DoesNotWaitForBackgroundHoldingThePipe) {
  // The command exits at once; its background child keeps stdout open.
  SubprocessOptions o = Bash("sleep 100 & echo started");
  auto start = Clock::now();
  auto r = RunSubprocess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->output, "started\n");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20));
  kill(-r->pid, SIGKILL);
}

}  // namespace
}  // namespace lousho
