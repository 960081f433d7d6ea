// Tests for support/subprocess: real processes, groups, caps, timeouts and cancellation.
#include "support/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
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

// The command waits (bounded) for a file that only the output callback creates on seeing its
// first line: it can say "seen" only if output arrives while it runs.
TEST(SubprocessTest, StreamsOutputWhileTheCommandRuns) {
  const std::string flag = ::testing::TempDir() + "lousho-stream-flag-" + std::to_string(getpid());
  std::remove(flag.c_str());
  SubprocessOptions o =
      Bash("echo first; for i in $(seq 1 100); do [ -e '" + flag +
           "' ] && break; sleep 0.1; done; [ -e '" + flag + "' ] && echo seen || echo unseen");
  std::string streamed;
  o.on_output = [&](std::string_view chunk) {
    streamed.append(chunk);
    if (streamed.find("first\n") != std::string::npos) std::ofstream(flag) << "x";
  };
  auto r = RunSubprocess(o);
  std::remove(flag.c_str());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output, "first\nseen\n");
  EXPECT_EQ(streamed, r->output);
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

// The pids a command printed, one per line.
std::vector<int> Pids(const std::string& output) {
  std::vector<int> pids;
  std::istringstream in(output);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) pids.push_back(std::stoi(l));
  return pids;
}

TEST(SubprocessTest, DoesNotWaitForBackgroundHoldingThePipeAndEndsIt) {
  // The command exits at once; its background child keeps stdout open. The call returns after
  // the short drain and the child is already gone (reaped), not merely signalled.
  SubprocessOptions o = Bash("sleep 1000 & echo $!; exit 4");
  auto start = Clock::now();
  auto r = RunSubprocess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 4);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  auto pids = Pids(r->output);
  ASSERT_EQ(pids.size(), 1u) << r->output;
  EXPECT_TRUE(ProcessGone(pids[0])) << "background child " << pids[0] << " survived";
}

TEST(SubprocessTest, ProcessesThatLeftTheGroupAreGoneAfterATimeout) {
  // One child starts a new session (setsid); another is orphaned by a subshell that exits, so
  // neither is in the command's process group nor a child of the command any more.
  SubprocessOptions o = Bash(
      "setsid sleep 1000 & echo $!; (sleep 1000 & echo $!); (setsid sleep 1000 "
      ">/dev/null 2>&1 </dev/null & echo $!); sleep 1000");
  o.timeout_ms = 500;
  o.kill_grace_ms = 300;
  auto r = RunSubprocess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  auto pids = Pids(r->output);
  ASSERT_EQ(pids.size(), 3u) << r->output;
  for (int pid : pids) EXPECT_TRUE(ProcessGone(pid)) << "escaped child " << pid << " survived";
  EXPECT_TRUE(ProcessGone(r->pid));
}

TEST(SubprocessTest, DetachedDaemonIsEndedWhenTheCommandReturns) {
  // A double-forked daemon in its own session with its output redirected: the command exits 0
  // at once and nothing holds the pipe, yet the daemon is ended before the call returns.
  SubprocessOptions o = Bash("(setsid sleep 1000 >/dev/null 2>&1 </dev/null & echo $!)");
  auto start = Clock::now();
  auto r = RunSubprocess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  auto pids = Pids(r->output);
  ASSERT_EQ(pids.size(), 1u) << r->output;
  EXPECT_TRUE(ProcessGone(pids[0]));
}

TEST(SubprocessTest, BackgroundIgnoringTermIsKilledAfterTheGrace) {
  // The child says its pid only once its TERM trap is set, so the TERM it gets is ignored for
  // sure and only the KILL after the grace can end it.
  SubprocessOptions o = Bash(
      "read -r pid < <(trap '' TERM; echo $BASHPID; exec setsid sleep 1000 >/dev/null); "
      "echo $pid");
  o.kill_grace_ms = 300;
  auto r = RunSubprocess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0);
  auto pids = Pids(r->output);
  ASSERT_EQ(pids.size(), 1u) << r->output;
  EXPECT_TRUE(ProcessGone(pids[0]));
}

TEST(SubprocessTest, CancelKillsProcessesThatLeftTheGroup) {
  CancelSource source;
  SubprocessOptions o = Bash("setsid sleep 1000 & echo $!; (sleep 1000 & echo $!); wait");
  o.cancel = source.token();
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    source.Cancel();
  });
  auto r = RunSubprocess(o);
  canceller.join();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->cancelled);
  auto pids = Pids(r->output);
  ASSERT_EQ(pids.size(), 2u) << r->output;
  for (int pid : pids) EXPECT_TRUE(ProcessGone(pid)) << pid;
}

TEST(SubprocessTest, ConcurrentRunsKeepTheirOwnOutputAndStatus) {
  // Runs from several threads at once (sessions do that) each see their own output and
  // status, and none waits on another.
  std::vector<std::thread> threads;
  threads.reserve(4);
  std::vector<Result<SubprocessResult>> results(4, MakeError(ErrorCode::kSubprocess, "not run"));
  auto start = Clock::now();
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&results, i] {
      results[i] = RunSubprocess(
          Bash("echo run" + std::to_string(i) + "; exit " + std::to_string(i) + "; sleep 1000"));
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(results[i].ok());
    EXPECT_EQ(results[i]->output, "run" + std::to_string(i) + "\n");
    EXPECT_EQ(results[i]->exit_code, i);
  }
}

// A long-lived child: stdin and stdout as pipes, stderr kept as a tail.
TEST(ChildProcessTest, TalksOverStdioAndKeepsStderrTail) {
  ProcessOptions o;
  o.argv = {"/bin/sh", "-c", "echo starting >&2; while read l; do echo \"got $l\"; done"};
  auto p = ChildProcess::Start(o);
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_TRUE((*p)->WriteStdin("hello\n"));
  std::string out;
  char buf[64];
  while (out.find('\n') == std::string::npos) {
    ssize_t n = read((*p)->stdout_fd(), buf, sizeof buf);
    ASSERT_GT(n, 0);
    out.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(out, "got hello\n");
  (*p)->Stop();
  EXPECT_EQ((*p)->StderrTail(), "starting\n");
  EXPECT_TRUE(ProcessGone((*p)->pid()));
  EXPECT_FALSE((*p)->WriteStdin("late\n")) << "no SIGPIPE, just a failed write";
}

TEST(ChildProcessTest, StopEndsTheWholeTreeEvenWhenTermIsIgnored) {
  ProcessOptions o;
  o.kill_grace_ms = 200;
  // A background grandchild that ignores SIGTERM and left the group, and a parent that ignores
  // its stdin closing.
  o.argv = {"/bin/bash", "-c",
            "setsid bash -c 'trap \"\" TERM; echo $$; sleep 1000' & trap '' TERM; sleep 1000"};
  auto p = ChildProcess::Start(o);
  ASSERT_TRUE(p.ok()) << p.error().message;
  std::string out;
  char buf[64];
  while (out.find('\n') == std::string::npos) {
    ssize_t n = read((*p)->stdout_fd(), buf, sizeof buf);
    ASSERT_GT(n, 0);
    out.append(buf, static_cast<size_t>(n));
  }
  int grandchild = std::stoi(out);
  (*p)->Stop();
  EXPECT_TRUE(ProcessGone((*p)->pid()));
  EXPECT_TRUE(ProcessGone(grandchild));
}

// A command that never reads its stdin: writes are queued and return at once, up to the queue's
// limit (then refused, and stdin_full says so), and Stop ends it at once with writes pending.
// The writes run on a thread of their own so that a write that blocks fails the test (after a
// generous bound) instead of hanging it.
TEST(ChildProcessTest, WriteStdinNeverWaitsForACommandThatDoesNotRead) {
  ProcessOptions o;
  o.argv = {"/bin/sh", "-c", "exec sleep 1000"};
  o.stdin_queue_bytes = size_t{4} << 20;
  o.kill_grace_ms = 200;
  auto p = ChildProcess::Start(o);
  ASSERT_TRUE(p.ok()) << p.error().message;
  ChildProcess* child = p->get();
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int accepted = 0;
  int refused = 0;
  std::thread writer([&] {
    // 64 KiB lines: the pipe takes one, the queue 4 MiB; 100 of them are over both.
    const std::string line(64 * 1024 - 1, 'x');
    int yes = 0, no = 0;
    for (int i = 0; i < 100; ++i) {
      if (child->WriteStdin(line + "\n")) {
        ++yes;
      } else {
        ++no;
      }
    }
    std::lock_guard<std::mutex> lock(mu);
    accepted = yes;
    refused = no;
    done = true;
    cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return done; }))
        << "WriteStdin blocked on a command that does not read";
  }
  child->Stop();  // ends a blocked write too (the command is killed)
  writer.join();
  EXPECT_GE(accepted, 60);
  EXPECT_GT(refused, 0);
  EXPECT_TRUE(child->stdin_full());
  EXPECT_TRUE(ProcessGone(child->pid()));
  EXPECT_FALSE(child->WriteStdin("late\n"));
}

TEST(ChildProcessTest, MissingProgramIsAnError) {
  ProcessOptions o;
  o.argv = {"/nonexistent/server"};
  auto p = ChildProcess::Start(o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("cannot run /nonexistent/server"), std::string::npos);
}

}  // namespace
}  // namespace lousho
