// Tests for the bash tool: local processes and delegation to editor terminals.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "agent/tools/builtin_tools.h"
#include "tests/tools/tool_test_util.h"

namespace lousho::agent {
namespace {

using testing::EventuallyGone;
using testing::FakeClient;
using testing::J;
using testing::TempWorkspace;
using testing::TextOf;
using Clock = std::chrono::steady_clock;

TEST(BashToolTest, RunsInCwdAndReportsExitCodes) {
  TempWorkspace ws;
  auto tool = tools::MakeBashTool();
  ToolContext ctx = ws.Context();
  auto ok = tool->Run(J(R"({"command":"pwd; echo err >&2"})"), ctx);
  EXPECT_FALSE(ok.is_error);
  EXPECT_EQ(TextOf(ok), ws.root().string() + "\nerr");
  EXPECT_EQ(ok.details["exitCode"].asInt(), 0);
  auto bad = tool->Run(J(R"({"command":"echo oops; exit 7"})"), ctx);
  EXPECT_TRUE(bad.is_error);
  EXPECT_NE(TextOf(bad).find("oops"), std::string::npos);
  EXPECT_NE(TextOf(bad).find("exited with code 7"), std::string::npos);
  auto quiet = tool->Run(J(R"({"command":"true"})"), ctx);
  EXPECT_EQ(TextOf(quiet), "(no output)");
  EXPECT_EQ(tool->kind(), ToolKind::kExecute);
  EXPECT_EQ(tool->PermissionSubject(J(R"({"command":"git status"})")), "git status");
  EXPECT_EQ(tool->Title(J(R"({"command":"echo hi\necho there"})"), ctx), "echo hi…");
}

TEST(BashToolTest, StreamsOutputToOnOutputWhileRunning) {
  TempWorkspace ws;
  auto tool = tools::MakeBashTool();
  ToolContext ctx = ws.Context();
  const std::string flag = (ws.root() / "flag").string();
  std::vector<std::string> seen;
  std::string deltas;
  ctx.on_output = [&](const std::string& so_far, const std::string& delta) {
    seen.push_back(so_far);
    deltas += delta;
    if (so_far.find("first") != std::string::npos) std::ofstream(flag) << "x";
  };
  auto out = tool->Run(J(R"({"command":"echo first; for i in $(seq 1 100); do [ -e flag ] && )"
                         R"(break; sleep 0.1; done; [ -e flag ] && echo seen"})"),
                       ctx);
  EXPECT_FALSE(out.is_error) << TextOf(out);
  EXPECT_EQ(TextOf(out), "first\nseen");
  ASSERT_FALSE(seen.empty());
  // The first piece at once (the command waited for it), the rest before the result.
  EXPECT_EQ(seen.front(), "first");
  EXPECT_EQ(seen.back(), "first\nseen");  // the output so far, as the result shows it
  EXPECT_EQ(deltas, "first\nseen\n");     // every byte once
}

TEST(BashToolTest, OutputIsCappedKeepingHeadAndTail) {
  TempWorkspace ws;
  tools::BashOptions opts;
  opts.max_output_lines = 100;
  auto tool = tools::MakeBashTool(opts);
  ToolContext ctx = ws.Context();
  auto out = tool->Run(J(R"({"command":"seq 1 5000"})"), ctx);
  std::string text = TextOf(out);
  // A fifth of the lines from the head, the rest from the tail.
  EXPECT_EQ(text.rfind("1\n2\n", 0), 0u);
  EXPECT_NE(text.find("\n20\n[Output truncated"), std::string::npos) << text;
  EXPECT_NE(text.find("(4900 lines)"), std::string::npos) << text;
  EXPECT_NE(text.find("\n5000"), std::string::npos);
  EXPECT_EQ(text.find("\n4920\n"), std::string::npos);
  EXPECT_NE(text.find("\n4921\n"), std::string::npos);
  auto big =
      tools::MakeBashTool()->Run(J(R"({"command":"head -c 200000 /dev/zero | tr '\\0' a"})"), ctx);
  EXPECT_LE(TextOf(big).size(), 51u * 1024);
  EXPECT_TRUE(big.details["truncated"].asBool());
}

TEST(BashToolTest, TimeoutKillsTheGroup) {
  TempWorkspace ws;
  tools::BashOptions opts;
  opts.kill_grace_ms = 300;
  auto tool = tools::MakeBashTool(opts);
  ToolContext ctx = ws.Context();
  auto start = Clock::now();
  auto out = tool->Run(J(R"({"command":"sleep 100 & echo $!; sleep 100","timeout":1})"), ctx);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(30));
  EXPECT_TRUE(out.is_error);
  std::string text = TextOf(out);
  EXPECT_NE(text.find("timed out after 1 seconds"), std::string::npos) << text;
  int bg = std::stoi(text);
  EXPECT_TRUE(EventuallyGone(bg));
}

TEST(BashToolTest, CancelReturnsPromptly) {
  TempWorkspace ws;
  auto tool = tools::MakeBashTool();
  ToolContext ctx = ws.Context();
  CancelSource source;
  ctx.cancel = source.token();
  // Cancel once the command has really started its child: it writes the child's pid first.
  std::thread t([&] {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < deadline && ws.Read("pid").find('\n') == std::string::npos)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    source.Cancel();
  });
  auto start = Clock::now();
  auto out = tool->Run(J(R"({"command":"sleep 100 & echo $! > pid; wait"})"), ctx);
  t.join();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(60));
  EXPECT_TRUE(out.is_error);
  EXPECT_NE(TextOf(out).find("cancelled"), std::string::npos);
  const std::string pid = ws.Read("pid");
  ASSERT_FALSE(pid.empty());
  EXPECT_TRUE(EventuallyGone(std::stoi(pid)));
}

TEST(BashToolTest, TimeoutEndsProcessesThatLeftTheGroup) {
  TempWorkspace ws;
  tools::BashOptions opts;
  opts.kill_grace_ms = 300;
  auto tool = tools::MakeBashTool(opts);
  ToolContext ctx = ws.Context();
  auto out =
      tool->Run(J(R"({"command":"setsid sleep 1000 & echo $!; sleep 1000","timeout":1})"), ctx);
  EXPECT_TRUE(out.details["timedOut"].asBool());
  int escaped = std::stoi(TextOf(out));
  EXPECT_TRUE(EventuallyGone(escaped)) << "setsid child " << escaped << " survived";
}

TEST(BashToolTest, BackgroundChildIsEndedWhenTheCallReturns) {
  TempWorkspace ws;
  auto tool = tools::MakeBashTool();
  ToolContext ctx = ws.Context();
  auto start = Clock::now();
  auto out = tool->Run(J(R"({"command":"sleep 1000 & echo $!"})"), ctx);
  // Bounded by the output drain and the kill grace, not by the child that holds the pipe.
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_FALSE(out.is_error) << TextOf(out);
  int bg = std::stoi(TextOf(out));
  EXPECT_TRUE(EventuallyGone(bg)) << "background child " << bg << " survived";
}

TEST(BashToolTest, DelegatesToEditorTerminal) {
  TempWorkspace ws;
  FakeClient client;
  client.has_terminal = true;
  client.terminal_exit_code = 2;
  auto tool = tools::MakeBashTool();
  ToolContext ctx = ws.Context();
  ctx.services = client.Services();
  std::string announced;
  ctx.on_terminal = [&](const std::string& id) { announced = id; };
  auto out = tool->Run(J(R"({"command":"make test"})"), ctx);
  EXPECT_EQ(out.terminal_id, "term-1");
  EXPECT_EQ(announced, "term-1");
  EXPECT_TRUE(out.is_error);
  EXPECT_NE(TextOf(out).find("hello from terminal"), std::string::npos);
  EXPECT_NE(TextOf(out).find("exited with code 2"), std::string::npos);
  TerminalRequest request = client.LastRequest();
  EXPECT_EQ(request.command, "/bin/bash");
  EXPECT_EQ(request.args, (std::vector<std::string>{"-c", "make test"}));
  EXPECT_EQ(request.cwd, ws.root().string());
  std::vector<std::string> expected = {"create term-1", "wait term-1", "output term-1",
                                       "release term-1"};
  EXPECT_EQ(client.Calls(), expected);
}

TEST(BashToolTest, TerminalTimeoutKillsAndReleases) {
  TempWorkspace ws;
  FakeClient client;
  client.has_terminal = true;
  client.terminal_hangs = true;
  auto tool = tools::MakeBashTool();
  ToolContext ctx = ws.Context();
  ctx.services = client.Services();
  auto out = tool->Run(J(R"({"command":"sleep 100","timeout":1})"), ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_NE(TextOf(out).find("timed out"), std::string::npos);
  std::vector<std::string> expected = {"create term-1", "wait term-1", "kill term-1",
                                       "output term-1", "release term-1"};
  EXPECT_EQ(client.Calls(), expected);
  EXPECT_EQ(client.created.load(), client.released.load());
}

TEST(BashToolTest, TerminalCancelKillsAndReleases) {
  TempWorkspace ws;
  FakeClient client;
  client.has_terminal = true;
  client.terminal_hangs = true;
  auto tool = tools::MakeBashTool();
  ToolContext ctx = ws.Context();
  ctx.services = client.Services();
  CancelSource source;
  ctx.cancel = source.token();
  std::thread t([&] {
    while (!client.waiting) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    source.Cancel();
  });
  auto start = Clock::now();
  auto out = tool->Run(J(R"({"command":"sleep 100"})"), ctx);
  t.join();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20));
  EXPECT_TRUE(out.is_error);
  EXPECT_NE(TextOf(out).find("cancelled"), std::string::npos);
  EXPECT_EQ(client.killed.load(), 1);
  EXPECT_EQ(client.created.load(), 1);
  EXPECT_EQ(client.released.load(), 1);
}

}  // namespace
}  // namespace lousho::agent
