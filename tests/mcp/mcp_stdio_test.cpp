// MCP servers over stdio that misbehave, as real processes (tests/mcp/servers/misbehaving.py):
// a server that logs to stdout, one that answers with garbage and never starts, one whose
// result is over the line limit. Each wait has a generous bound that fails the test (the code
// under test once hung for good here), never a sleep.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "agent/mcp/servers.h"
#include "support/json_util.h"

namespace lousho::agent::mcp {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::string kServer = std::string(LOUSHO_SOURCE_DIR) + "/tests/mcp/servers/misbehaving.py";

// Runs `fn` on a thread of its own and waits at most `limit` for it: false when it did not end
// (the thread is then left behind, as nothing can end it, and the test fails).
bool EndsWithin(std::chrono::seconds limit, std::function<void()> fn) {
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto st = std::make_shared<State>();
  std::thread t([st, fn = std::move(fn)] {
    fn();
    std::lock_guard<std::mutex> lock(st->mu);
    st->done = true;
    st->cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(st->mu);
  const bool done = st->cv.wait_for(lock, limit, [&] { return st->done; });
  lock.unlock();
  if (done) {
    t.join();
  } else {
    t.detach();
  }
  return done;
}

// A process is gone when kill(pid, 0) fails or it is a zombie waiting for its reaper.
bool ProcessGone(int pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

class McpStdioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lousho-mcp-stdio-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  config::McpServerSpec Spec(const std::string& name, std::vector<std::string> args) {
    config::McpServerSpec s;
    s.name = name;
    s.command = "python3";
    s.args = {kServer};
    s.args.insert(s.args.end(), args.begin(), args.end());
    s.args.push_back("--pid-file");
    s.args.push_back((dir_ / (name + ".pid")).string());
    return s;
  }
  // The server's pid, once it has written it (bounded).
  int Pid(const std::string& name) {
    const auto until = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < until) {
      std::ifstream f(dir_ / (name + ".pid"));
      int pid = 0;
      if (f >> pid && pid > 0) return pid;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return 0;
  }
  StartOptions Options(long start_ms, long call_ms) {
    StartOptions o;
    o.cwd = dir_;
    o.settings.start_timeout_ms = start_ms;
    o.settings.call_timeout_ms = call_ms;
    o.settings.max_restarts = 0;
    return o;
  }
  fs::path dir_;
};

// 20,000 plain lines on stdout before the server reads its stdin: each is dropped (not answered
// into the server's stdin, where the answers once filled the pipe and deadlocked both sides), and
// the server then starts, answers a call, and stops when the session closes.
TEST_F(McpStdioTest, ServerThatLogsToStdoutStartsAndStops) {
  auto servers = std::make_shared<std::shared_ptr<McpServers>>();
  auto spec = Spec("chatty", {"chatty", "20000"});
  auto options = Options(60000, 60000);
  ASSERT_TRUE(EndsWithin(std::chrono::seconds(90), [=] {
    *servers = McpServers::Start({spec}, options);
  })) << "the start hung";
  auto status = (*servers)->status();
  ASSERT_EQ(status.size(), 1u);
  ASSERT_TRUE(status[0].connected) << status[0].error;
  EXPECT_EQ(status[0].tools, 1u);
  const int pid = Pid("chatty");
  ASSERT_GT(pid, 0);
  auto client = (*servers)->Find("chatty");
  ASSERT_NE(client, nullptr);
  auto res = client->CallTool("echo", Json::Value(Json::objectValue), nullptr, CancelToken());
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(WriteJson(*res), R"({"content":[{"text":"echoed","type":"text"}]})");
  ASSERT_TRUE(EndsWithin(std::chrono::seconds(30), [=] { (*servers)->Close(); })) << "closing hung";
  EXPECT_TRUE(ProcessGone(pid));
}

// A server that answers everything with garbage never starts: at the start timeout it is
// stopped before anything waits for it, and closing the session then ends at once.
TEST_F(McpStdioTest, StartTimeoutStopsTheServer) {
  auto servers = std::make_shared<std::shared_ptr<McpServers>>();
  auto spec = Spec("garbage", {"nonjson"});
  // Long enough for python to start and write its pid, even on a busy machine.
  auto options = Options(5000, 60000);
  ASSERT_TRUE(EndsWithin(std::chrono::seconds(60), [=] {
    *servers = McpServers::Start({spec}, options);
  })) << "the start hung";
  const int pid = Pid("garbage");
  ASSERT_GT(pid, 0);
  auto status = (*servers)->status();
  ASSERT_EQ(status.size(), 1u);
  EXPECT_FALSE(status[0].connected);
  EXPECT_NE(status[0].error.find("did not start within 5000 ms"), std::string::npos)
      << status[0].error;
  EXPECT_TRUE(ProcessGone(pid)) << "the server outlived its start timeout";
  ASSERT_TRUE(EndsWithin(std::chrono::seconds(30), [=] { (*servers)->Close(); })) << "closing hung";
}

// A result line over the 64 MiB limit fails the call at once with an error that names the
// server, the tool and the limit, rather than waiting for the call timeout (here 10 minutes).
TEST_F(McpStdioTest, OverLongResultFailsTheCallAtOnce) {
  auto servers = std::make_shared<std::shared_ptr<McpServers>>();
  auto spec = Spec("huge", {"big", "70"});
  auto options = Options(30000, 600000);
  ASSERT_TRUE(
      EndsWithin(std::chrono::seconds(60), [=] { *servers = McpServers::Start({spec}, options); }));
  auto status = (*servers)->status();
  ASSERT_EQ(status.size(), 1u);
  ASSERT_TRUE(status[0].connected) << status[0].error;
  auto client = (*servers)->Find("huge");
  ASSERT_NE(client, nullptr);
  auto res = std::make_shared<Result<Json::Value>>(MakeError(ErrorCode::kUsage, "not called"));
  ASSERT_TRUE(EndsWithin(std::chrono::seconds(120), [=] {
    *res = client->CallTool("echo", Json::Value(Json::objectValue), nullptr, CancelToken());
  })) << "the call waited for its timeout";
  ASSERT_FALSE(res->ok());
  const std::string& m = res->error().message;
  EXPECT_EQ(res->error().code, ErrorCode::kToolTooLarge) << m;
  EXPECT_NE(m.find("MCP server 'huge'"), std::string::npos) << m;
  EXPECT_NE(m.find("tool 'echo' is too large"), std::string::npos) << m;
  EXPECT_NE(m.find("a message of 70.0 MiB"), std::string::npos) << m;
  EXPECT_NE(m.find("over the limit of 64 MiB"), std::string::npos) << m;
  // The connection goes on.
  auto again = client->Ping(CancelToken());
  EXPECT_TRUE(again.ok()) << again.error().message;
  ASSERT_TRUE(EndsWithin(std::chrono::seconds(30), [=] { (*servers)->Close(); }));
}

// A million one-letter content blocks (about 30 MB, within the line limit) are not parsed into
// gigabytes: the call fails at once, saying why.
TEST_F(McpStdioTest, ResultWithAMillionBlocksFailsTheCallAtOnce) {
  auto servers = std::make_shared<std::shared_ptr<McpServers>>();
  auto spec = Spec("many", {"many", "1000000"});
  auto options = Options(30000, 600000);
  ASSERT_TRUE(
      EndsWithin(std::chrono::seconds(60), [=] { *servers = McpServers::Start({spec}, options); }));
  auto client = (*servers)->Find("many");
  ASSERT_NE(client, nullptr);
  auto res = std::make_shared<Result<Json::Value>>(MakeError(ErrorCode::kUsage, "not called"));
  ASSERT_TRUE(EndsWithin(std::chrono::seconds(120), [=] {
    *res = client->CallTool("echo", Json::Value(Json::objectValue), nullptr, CancelToken());
  })) << "the call waited for its timeout";
  ASSERT_FALSE(res->ok());
  const std::string& m = res->error().message;
  EXPECT_EQ(res->error().code, ErrorCode::kToolTooLarge) << m;
  EXPECT_NE(m.find("MCP server 'many': the result of tool 'echo' is too large"), std::string::npos)
      << m;
  EXPECT_NE(m.find("more than 1000000 JSON items"), std::string::npos) << m;
  ASSERT_TRUE(EndsWithin(std::chrono::seconds(30), [=] { (*servers)->Close(); }));
}

}  // namespace
}  // namespace lousho::agent::mcp
