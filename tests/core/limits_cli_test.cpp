// Tests of the built binary under process limits: the open-file limit sets the ACP door's session
// cap (with a clear error at the cap, and bash still working in the open sessions), both doors
// raise their soft limit, and the RPC door ends a running command after stdin closes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/json_util.h"

namespace lousho::limits_test {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string Slurp(const fs::path& p) {
  std::stringstream ss;
  ss << std::ifstream(p).rdbuf();
  return ss.str();
}

// Polls `done` every 20 ms for at most `limit`; true once it holds.
bool Eventually(const std::function<bool()>& done,
                std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto until = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Gone, or a zombie its (new) parent has yet to reap.
bool Gone(int pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

// "Max open files" of /proc/<pid>/limits: {soft, hard}.
std::pair<std::string, std::string> OpenFileLimits(int pid) {
  std::istringstream in(Slurp("/proc/" + std::to_string(pid) + "/limits"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream fields(line.substr(std::string("Max open files").size()));
    std::pair<std::string, std::string> out;
    fields >> out.first >> out.second;
    return out;
  }
  return {};
}

// The binary started with an open-file limit of {soft, hard}, stdin and stdout as pipes, stderr
// to a file; its cwd is a fresh folder (dir()).
class Lousho {
 public:
  Lousho(std::vector<std::string> args, rlim_t soft, rlim_t hard,
         std::vector<std::string> env = {}) {
    dir_ = fs::temp_directory_path() /
           ("lousho-limits-" + std::to_string(getpid()) + "-" + std::to_string(counter_++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    args.insert(args.begin(), LOUSHO_BINARY);
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // The first of duplicate variables counts; session files stay in the test's folder.
    env.push_back("LOUSHO_TEST_MODE=1");
    env.push_back("LOUSHO_HOME=" + (dir_ / "home").string());
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    std::vector<char*> envp;
    envp.reserve(env.size() + 1);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string err = (dir_ / "err").string();
    const std::string cwd = dir_.string();
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      rlimit lim{soft, hard};
      if (setrlimit(RLIMIT_NOFILE, &lim) != 0 || chdir(cwd.c_str()) != 0) _exit(126);
      int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(in[0], 0);
      dup2(out[1], 1);
      dup2(e, 2);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    in_ = in[1];
    out_ = out[0];
  }
  ~Lousho() {
    CloseInput();
    if (out_ >= 0) close(out_);
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    fs::remove_all(dir_);
  }
  Lousho(const Lousho&) = delete;
  Lousho& operator=(const Lousho&) = delete;

  int pid() const { return pid_; }
  const fs::path& dir() const { return dir_; }
  std::string Err() const { return Slurp(dir_ / "err"); }
  const std::vector<std::string>& lines() const { return lines_; }

  void Send(const std::string& line) {
    std::string l = line + "\n";
    ASSERT_EQ(write(in_, l.data(), l.size()), static_cast<ssize_t>(l.size()));
  }
  void CloseInput() {
    if (in_ >= 0) close(in_);
    in_ = -1;
  }
  // Reads stdout until a line `pred` accepts arrives (returned), stdout ends, or `limit` passes.
  std::optional<Json::Value> WaitFor(const std::function<bool(const Json::Value&)>& pred,
                                     std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    for (; next_ < lines_.size() || ReadMore(limit);) {
      while (next_ < lines_.size()) {
        auto j = ParseJson(lines_[next_++]);
        if (j.ok() && pred(*j)) return *j;
      }
    }
    return std::nullopt;
  }
  // Reads stdout to its end (the process exited: commands never hold lousho's stdout) within
  // `limit`, then reaps it; its wait status, or nullopt when stdout was still open.
  std::optional<int> WaitForExit(std::chrono::milliseconds limit) {
    while (ReadMore(limit)) {
    }
    if (!eof_) return std::nullopt;
    int status = 0;
    if (waitpid(pid_, &status, 0) != pid_) return std::nullopt;
    exited_ = true;
    return status;
  }

 private:
  // Waits up to `limit` for more output; false at its end or when nothing came in time.
  bool ReadMore(std::chrono::milliseconds limit) {
    if (eof_) return false;
    pollfd p{out_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(limit.count())) <= 0) return false;
    char buf[65536];
    ssize_t n = read(out_, buf, sizeof buf);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    partial_.append(buf, static_cast<size_t>(n));
    for (size_t nl; (nl = partial_.find('\n')) != std::string::npos;) {
      lines_.push_back(partial_.substr(0, nl));
      partial_.erase(0, nl + 1);
    }
    return true;
  }

  static inline int counter_ = 0;
  fs::path dir_;
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  bool eof_ = false;
  bool exited_ = false;
  std::string partial_;
  std::vector<std::string> lines_;
  size_t next_ = 0;
};

std::function<bool(const Json::Value&)> AnswerTo(int id) {
  return [id](const Json::Value& j) {
    return j.isMember("id") && j["id"].isInt() && j["id"].asInt() == id &&
           (j.isMember("result") || j.isMember("error"));
  };
}

std::string NewSession(int id, const fs::path& cwd) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"session/new","params":{"cwd":")" + cwd.string() + R"(","mcpServers":[]}})";
}

std::string Prompt(int id, const std::string& session, const std::string& text) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"session/prompt","params":{"sessionId":")" + session +
         R"(","prompt":[{"type":"text","text":")" + text + R"("}]}})";
}

size_t FilesUnder(const fs::path& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec))
    n += it->is_regular_file() ? 1 : 0;
  return n;
}

const char kSpec[] = R"({"name": "limits", "model": "script/l", "mode": "bypass", "maxSteps": 3,
  "scripts": {"l": [
    {"match": "^run", "steps": [
      {"toolCalls": [{"name": "bash", "arguments": {"command": "echo ran-in-bash; ulimit -n"}}]},
      {"text": "ran"}]},
    {"match": "^forever", "steps": [
      {"toolCalls": [{"name": "bash",
                      "arguments": {"command": "echo $$ >sleep.pid; exec sleep 100000"}}]},
      {"text": "never"}]},
    {"text": "You said: {{input}}"}]}})";

fs::path WriteSpec(const fs::path& dir) {
  fs::path p = dir / "agent.json";
  std::ofstream(p) << kSpec;
  return p;
}

// Started with a soft limit of 100 and a hard one of 200, the ACP door runs with 200 and so
// allows (200 - 64) / 16 = 8 sessions, not the 1024 default the 100 descriptors could never
// serve. The ninth session/new is refused with the door's session-limit error, which says where
// the cap comes from and what to do; the open sessions are all saved, and bash still runs in
// them, with the limit the user started lousho with.
TEST(LimitsCliTest, OpenFileLimitCapsSessionsAndBashStillRuns) {
  fs::path spec_dir =
      fs::temp_directory_path() / ("lousho-limits-spec-" + std::to_string(getpid()));
  fs::create_directories(spec_dir);
  const fs::path spec = WriteSpec(spec_dir);
  const fs::path sessions = spec_dir / "sessions";
  Lousho lousho({"acp", spec.string(), "--session-dir", sessions.string()}, 100, 200);
  ASSERT_GT(lousho.pid(), 0);
  lousho.Send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}})");
  ASSERT_TRUE(lousho.WaitFor(AnswerTo(1))) << lousho.Err();
  EXPECT_EQ(OpenFileLimits(lousho.pid()), std::make_pair(std::string("200"), std::string("200")));

  std::vector<std::string> ids;
  std::optional<Json::Value> refused;
  for (int i = 0; i < 10 && !refused; ++i) {
    lousho.Send(NewSession(100 + i, lousho.dir()));
    auto answer = lousho.WaitFor(AnswerTo(100 + i));
    ASSERT_TRUE(answer) << lousho.Err();
    if (answer->isMember("error")) {
      refused = answer;
    } else {
      ids.push_back((*answer)["result"]["sessionId"].asString());
    }
  }
  ASSERT_TRUE(refused) << "no session/new was refused";
  EXPECT_EQ(ids.size(), 8u);
  const Json::Value& err = (*refused)["error"];
  EXPECT_EQ(err["code"].asInt(), -32603);
  EXPECT_EQ(err["data"]["code"].asString(), "LOUSHO_SESSION_LIMIT");
  const std::string message = err["message"].asString();
  for (const char* part :
       {"Too many open sessions (limit 8)", "session/close", "open-file limit of 200", "ulimit -n"})
    EXPECT_NE(message.find(part), std::string::npos) << message;

  // Every open session gets a turn (and so its session file), then bash runs in the last one.
  for (size_t i = 0; i < ids.size(); ++i) {
    lousho.Send(Prompt(200 + static_cast<int>(i), ids[i], "hi"));
    auto done = lousho.WaitFor(AnswerTo(200 + static_cast<int>(i)));
    ASSERT_TRUE(done && done->isMember("result")) << lousho.Err();
  }
  lousho.Send(Prompt(300, ids.back(), "run it"));
  auto ran = lousho.WaitFor(AnswerTo(300));
  ASSERT_TRUE(ran && ran->isMember("result")) << lousho.Err();
  std::string bash_output;
  for (const auto& l : lousho.lines())
    if (l.find("ran-in-bash") != std::string::npos &&
        l.find("tool_call_update") != std::string::npos)
      bash_output += l;
  EXPECT_NE(bash_output.find(R"(ran-in-bash\n100)"), std::string::npos) << bash_output;
  EXPECT_EQ(bash_output.find("Too many open files"), std::string::npos) << bash_output;
  lousho.CloseInput();
  auto status = lousho.WaitForExit(std::chrono::seconds(20));
  ASSERT_TRUE(status) << "lousho did not exit at the end of input";
  EXPECT_EQ(FilesUnder(sessions), 8u);
  fs::remove_all(spec_dir);
}

// An explicit --max-sessions over what the limit allows is lowered to it, with a warning.
TEST(LimitsCliTest, MaxSessionsOverTheOpenFileLimitIsLowered) {
  fs::path spec_dir = fs::temp_directory_path() / ("lousho-limits-cap-" + std::to_string(getpid()));
  fs::create_directories(spec_dir);
  Lousho lousho({"acp", WriteSpec(spec_dir).string(), "--no-session", "--max-sessions", "500"}, 96,
                96);
  lousho.Send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}})");
  ASSERT_TRUE(lousho.WaitFor(AnswerTo(1))) << lousho.Err();
  // (96 - 64) / 16 = 2 sessions.
  for (int id : {2, 3}) {
    lousho.Send(NewSession(id, lousho.dir()));
    auto opened = lousho.WaitFor(AnswerTo(id));
    ASSERT_TRUE(opened && opened->isMember("result")) << lousho.Err();
  }
  lousho.Send(NewSession(4, lousho.dir()));
  auto third = lousho.WaitFor(AnswerTo(4));
  ASSERT_TRUE(third && third->isMember("error")) << lousho.Err();
  EXPECT_NE((*third)["error"]["message"].asString().find("(limit 2)"), std::string::npos)
      << WriteJson(*third);
  EXPECT_NE(lousho.Err().find("--max-sessions 500: the open-file limit of 96 allows 2 sessions"),
            std::string::npos)
      << lousho.Err();
  fs::remove_all(spec_dir);
}

// stdin closes while a bash tool runs a command that never ends: after the grace period
// (LOUSHO_RPC_EOF_GRACE_MS, short here) the turn is cancelled, the command killed, and lousho
// exits 0. The RPC door raised its open-file limit too.
TEST(LimitsCliTest, RpcEofCancelsAnEndlessCommandAfterTheGrace) {
  fs::path spec_dir = fs::temp_directory_path() / ("lousho-limits-rpc-" + std::to_string(getpid()));
  fs::create_directories(spec_dir);
  Lousho lousho({"--mode", "rpc", "--agent", WriteSpec(spec_dir).string(), "--no-session"}, 100,
                300, {"LOUSHO_RPC_EOF_GRACE_MS=300"});
  ASSERT_GT(lousho.pid(), 0);
  ASSERT_TRUE(lousho.WaitFor([](const Json::Value& j) { return StringOr(j, "type") == "ready"; }))
      << lousho.Err();
  EXPECT_EQ(OpenFileLimits(lousho.pid()), std::make_pair(std::string("300"), std::string("300")));
  lousho.Send(R"({"id":"p1","type":"prompt","message":"forever"})");
  const fs::path pid_file = lousho.dir() / "sleep.pid";
  ASSERT_TRUE(Eventually([&] { return !Slurp(pid_file).empty(); })) << lousho.Err();
  const int sleeper = std::stoi(Slurp(pid_file));
  ASSERT_FALSE(Gone(sleeper));

  lousho.CloseInput();
  // Generous: the bound proves it ends at all (the command alone would run for a day).
  auto status = lousho.WaitForExit(std::chrono::seconds(30));
  if (!status) kill(sleeper, SIGKILL);
  ASSERT_TRUE(status) << "lousho still running after stdin closed: " << lousho.Err();
  ASSERT_TRUE(WIFEXITED(*status)) << "killed by signal " << WTERMSIG(*status);
  EXPECT_EQ(WEXITSTATUS(*status), 0);
  EXPECT_TRUE(Eventually([&] { return Gone(sleeper); })) << "the command survived";
  EXPECT_NE(lousho.Err().find("cancelling the work still running"), std::string::npos)
      << lousho.Err();
  fs::remove_all(spec_dir);
}

// Work that ends within the grace still finishes and is reported after stdin closed.
TEST(LimitsCliTest, RpcEofLetsShortWorkFinish) {
  fs::path spec_dir = fs::temp_directory_path() / ("lousho-limits-end-" + std::to_string(getpid()));
  fs::create_directories(spec_dir);
  Lousho lousho({"--mode", "rpc", "--agent", WriteSpec(spec_dir).string(), "--no-session",
                 "--eof-grace-ms", "60000"},
                1024, 1024);
  ASSERT_TRUE(lousho.WaitFor([](const Json::Value& j) { return StringOr(j, "type") == "ready"; }))
      << lousho.Err();
  lousho.Send(R"({"id":"p1","type":"prompt","message":"run"})");
  lousho.CloseInput();
  auto end =
      lousho.WaitFor([](const Json::Value& j) { return StringOr(j, "type") == "agent_end"; });
  ASSERT_TRUE(end) << lousho.Err();
  EXPECT_NE(WriteJson(*end).find("ran-in-bash"), std::string::npos) << WriteJson(*end);
  auto status = lousho.WaitForExit(std::chrono::seconds(30));
  ASSERT_TRUE(status && WIFEXITED(*status)) << lousho.Err();
  EXPECT_EQ(WEXITSTATUS(*status), 0);
  fs::remove_all(spec_dir);
}

TEST(LimitsCliTest, HelpNamesTheLimits) {
  Lousho rpc({"--mode", "rpc", "--help"}, 1024, 1024);
  ASSERT_TRUE(rpc.WaitForExit(std::chrono::seconds(20)));
  std::string rpc_help;
  for (const auto& l : rpc.lines()) rpc_help += l + "\n";
  EXPECT_NE(rpc_help.find("--eof-grace-ms"), std::string::npos) << rpc_help;
  EXPECT_NE(rpc_help.find("LOUSHO_RPC_EOF_GRACE_MS"), std::string::npos) << rpc_help;
  Lousho acp({"acp", "--help"}, 1024, 1024);
  ASSERT_TRUE(acp.WaitForExit(std::chrono::seconds(20)));
  std::string acp_help;
  for (const auto& l : acp.lines()) acp_help += l + "\n";
  EXPECT_NE(acp_help.find("open-file limit"), std::string::npos) << acp_help;
}

}  // namespace
}  // namespace lousho::limits_test
