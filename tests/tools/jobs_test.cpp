// Tests for background jobs: bash `background: true` (and a trailing `&`), bash_output,
// bash_kill, the job table's limits and its end with the session.
#include "agent/tools/jobs.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <thread>

#include "agent/tools/builtin_tools.h"
#include "tests/tools/tool_test_util.h"

namespace lousho::agent {
namespace {

using testing::J;
using testing::TempWorkspace;
using testing::TextOf;
using Clock = std::chrono::steady_clock;

// Polls `done` until it holds, for at most 10 s (a bound, not a timing assertion).
bool Eventually(const std::function<bool()>& done) {
  const auto until = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

struct JobsFixture {
  TempWorkspace ws;
  tools::JobTable jobs;
  ToolContext ctx;
  std::unique_ptr<Tool> bash = tools::MakeBashTool();
  std::unique_ptr<Tool> output = tools::MakeBashOutputTool();
  std::unique_ptr<Tool> kill_tool = tools::MakeBashKillTool();

  explicit JobsFixture(tools::JobLimits limits = {}) : jobs(limits), ctx(ws.Context()) {
    ctx.jobs = &jobs;
  }
  std::string Start(const std::string& command) {
    Json::Value args(Json::objectValue);
    args["command"] = command;
    args["background"] = true;
    ToolOutput out = bash->Run(args, ctx);
    EXPECT_FALSE(out.is_error) << TextOf(out);
    return out.details["jobId"].asString();
  }
  // Reads until `text` has been seen (all reads joined).
  std::string ReadUntil(const std::string& id, const std::string& text) {
    std::string seen;
    Eventually([&] {
      seen += TextOf(output->Run(J(R"({"id":")" + id + R"("})"), ctx));
      return seen.find(text) != std::string::npos;
    });
    return seen;
  }
};

TEST(JobsTest, BackgroundReturnsAtOnceAndOutputIsReadOnce) {
  JobsFixture f;
  // The job waits for a file the test makes only after the call returned: the call cannot
  // have waited for the command.
  const std::string id =
      f.Start("echo ready; while [ ! -f flag ]; do sleep 0.02; done; echo finished; exit 3");
  ASSERT_EQ(id, "job1");
  EXPECT_NE(f.ReadUntil(id, "ready").find("is running"), std::string::npos);
  f.ws.Write("flag", "");
  std::string rest = f.ReadUntil(id, "exited with code 3");
  EXPECT_NE(rest.find("finished"), std::string::npos);
  EXPECT_EQ(rest.find("ready"), std::string::npos);  // read once only
  auto again = f.output->Run(J(R"({"id":"job1"})"), f.ctx);
  EXPECT_NE(TextOf(again).find("(no new output)"), std::string::npos);
  EXPECT_EQ(again.details["exitCode"].asInt(), 3);
  EXPECT_TRUE(f.output->Run(J(R"({"id":"job9"})"), f.ctx).is_error);
}

TEST(JobsTest, FilterKeepsMatchingLines) {
  JobsFixture f;
  const std::string id = f.Start("printf 'apple\\nbanana\\navocado\\n'");
  ASSERT_TRUE(Eventually([&] { return !f.jobs.List()[0].running; }));
  auto out = f.output->Run(J(R"({"id":")" + id + R"(","filter":"^a"})"), f.ctx);
  EXPECT_NE(TextOf(out).find("apple\navocado"), std::string::npos);
  EXPECT_EQ(TextOf(out).find("banana"), std::string::npos);
  EXPECT_TRUE(f.output->Run(J(R"({"id":")" + id + R"(","filter":"("})"), f.ctx).is_error);
}

TEST(JobsTest, KillEndsTheWholeTree) {
  JobsFixture f;
  const std::string id = f.Start("sleep 1000 & echo child $!; wait");
  std::string seen = f.ReadUntil(id, "child ");
  const int child = std::stoi(seen.substr(seen.find("child ") + 6));
  ASSERT_FALSE(testing::ProcessGone(child));
  auto out = f.kill_tool->Run(J(R"({"id":")" + id + R"("})"), f.ctx);
  EXPECT_FALSE(out.is_error) << TextOf(out);
  EXPECT_NE(TextOf(out).find("was stopped"), std::string::npos);
  EXPECT_TRUE(Eventually([&] { return testing::ProcessGone(child); }));
  EXPECT_TRUE(f.kill_tool->Run(J(R"({"id":"nope"})"), f.ctx).is_error);
}

TEST(JobsTest, TrailingAmpersandStartsAJob) {
  JobsFixture f;
  auto out = f.bash->Run(J(R"({"command":"echo bg-output  & "})"), f.ctx);
  EXPECT_EQ(out.details["jobId"].asString(), "job1");
  EXPECT_NE(f.ReadUntil("job1", "bg-output").find("bg-output"), std::string::npos);
  // Not a trailing `&`: runs in the foreground.
  auto fg = f.bash->Run(J(R"({"command":"true && echo fg"})"), f.ctx);
  EXPECT_EQ(TextOf(fg), "fg");
  EXPECT_EQ(f.jobs.List().size(), 1u);
}

TEST(JobsTest, EndAllStopsEveryJobAndRefusesNewOnes) {
  int pid = 0;
  {
    JobsFixture f;
    const std::string id = f.Start("sleep 1000 & echo child $!; wait");
    std::string seen = f.ReadUntil(id, "child ");
    pid = std::stoi(seen.substr(seen.find("child ") + 6));
    EXPECT_NE(f.jobs.Note().find("job1"), std::string::npos);
    f.jobs.EndAll();
    EXPECT_TRUE(testing::ProcessGone(pid));
    EXPECT_FALSE(f.jobs.Start("true", f.ws.root()).ok());
  }
  EXPECT_TRUE(testing::ProcessGone(pid));
}

TEST(JobsTest, RunningJobsAreCapped) {
  tools::JobLimits limits;
  limits.max_running = 1;
  limits.max_unread_bytes = 1000;
  JobsFixture f(limits);
  f.Start("head -c 100000 /dev/zero | tr '\\0' x; sleep 1000");
  Json::Value args = J(R"({"command":"true","background":true})");
  auto refused = f.bash->Run(args, f.ctx);
  EXPECT_TRUE(refused.is_error);
  EXPECT_NE(TextOf(refused).find("bash_kill"), std::string::npos);
  // Unread output is kept as its tail only.
  ASSERT_TRUE(Eventually([&] { return f.jobs.List()[0].total_bytes == 100000; }));
  auto out = f.output->Run(J(R"({"id":"job1"})"), f.ctx);
  EXPECT_TRUE(out.details["truncated"].asBool());
  EXPECT_NE(TextOf(out).find("of earlier output were not kept"), std::string::npos);
  EXPECT_LT(TextOf(out).size(), 3000u);
}

TEST(JobsTest, WithoutAJobTableBackgroundIsRefused) {
  TempWorkspace ws;
  ToolContext ctx = ws.Context();
  auto out = tools::MakeBashTool()->Run(J(R"({"command":"true","background":true})"), ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_TRUE(tools::MakeBashOutputTool()->Run(J(R"({"id":"job1"})"), ctx).is_error);
}

}  // namespace
}  // namespace lousho::agent
