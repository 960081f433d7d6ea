// Tests of the command line through the built binary: exit codes, stderr lines, --record,
// logging, the input line limit, exit on stdin EOF, and stop signals.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "support/json_util.h"

namespace lousho {
namespace {
namespace fs = std::filesystem;

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  double seconds = 0;
};

// Runs the binary with `input` on stdin; stdout and stderr captured through files.
RunResult RunLousho(const std::vector<std::string>& args, const std::string& input) {
  fs::path dir = fs::temp_directory_path() / ("lousho-cli-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "in") << input;
  // Session files go to the test's folder, never to ~/.lousho.
  std::string cmd = "LOUSHO_TEST_MODE=1 LOUSHO_HOME='" + (dir / "home").string() + "' '" +
                    std::string(LOUSHO_BINARY) + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " <'" + (dir / "in").string() + "' >'" + (dir / "out").string() + "' 2>'" +
         (dir / "err").string() + "'";
  auto start = std::chrono::steady_clock::now();
  int status = std::system(cmd.c_str());
  RunResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::stringstream o, e;
  o << std::ifstream(dir / "out").rdbuf();
  e << std::ifstream(dir / "err").rdbuf();
  r.out = o.str();
  r.err = e.str();
  fs::remove_all(dir);
  return r;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

const std::string kDemo = std::string(LOUSHO_SOURCE_DIR) + "/examples/demo";
const std::string kInit =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}})";

TEST(CliTest, VersionAndHelp) {
  RunResult v = RunLousho({"--version"}, "");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out, std::string("lousho ") + LOUSHO_VERSION + "\n");
  RunResult h = RunLousho({"--help"}, "");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("acp"), std::string::npos);
  EXPECT_NE(h.out.find("validate"), std::string::npos);
}

TEST(CliTest, UsageErrorsExitOneWithACode) {
  RunResult r = RunLousho({"acp", "--no-such-option"}, "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("LOUSHO_USAGE: ", 0), 0u) << r.err;
  EXPECT_TRUE(r.out.empty());
  RunResult none = RunLousho({}, "");
  EXPECT_EQ(none.exit_code, 1);
}

TEST(CliTest, BadSpecIsOneLineOnStderrAndNothingOnStdout) {
  fs::path p = fs::temp_directory_path() / ("lousho-bad-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(p) << "model: openai/gpt-4o\nmaxStep: 3\n";
  RunResult r = RunLousho({"acp", p.string()}, kInit + "\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(r.err, "LOUSHO_CONFIG_INVALID: " + p.string() +
                       ":2:1: unknown key 'maxStep' (did you mean 'maxSteps'?)\n");
  RunResult v = RunLousho({"validate", p.string()}, "");
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_EQ(v.err, r.err);
  fs::remove(p);
  RunResult missing = RunLousho({"acp", "/no/such/agent.yaml"}, "");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err.rfind("LOUSHO_CONFIG_NOT_FOUND: /no/such/agent.yaml", 0), 0u)
      << missing.err;
}

TEST(CliTest, MissingProviderKeyFailsSessionsWithAuthRequired) {
  // A key variable no environment has, so the check runs wherever the test does.
  fs::path p = fs::temp_directory_path() / ("lousho-key-" + std::to_string(getpid()) + ".yaml");
  std::ofstream(p)
      << "model: corp/m1\nproviders:\n  corp:\n    api: openai-chat\n"
         "    baseUrl: http://127.0.0.1:9/v1\n    apiKeyEnv: LOUSHO_TEST_NO_SUCH_KEY\n";
  std::string new_session =
      R"({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}})";
  RunResult r = RunLousho({"acp", p.string()}, kInit + "\n" + new_session + "\n");
  RunResult v = RunLousho({"validate", p.string()}, "");
  fs::remove(p);
  EXPECT_EQ(r.exit_code, 0);
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_TRUE((*ParseJson(lines[0])).isMember("result"));
  Json::Value err = (*ParseJson(lines[1]))["error"];
  EXPECT_EQ(err["code"].asInt(), -32000);
  EXPECT_EQ(err["data"]["code"].asString(), "LOUSHO_PROVIDER_AUTH");
  EXPECT_NE(err["message"].asString().find("LOUSHO_TEST_NO_SUCH_KEY"), std::string::npos);
  EXPECT_NE(r.err.find("LOUSHO_PROVIDER_AUTH"), std::string::npos) << r.err;
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("status: not ready: "), std::string::npos) << v.out;
  RunResult bad = RunLousho({"acp", kDemo, "--model", "nosuch/model"}, "");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("unknown provider 'nosuch'"), std::string::npos) << bad.err;
}

TEST(CliTest, ValidateAcceptsTheExamples) {
  RunResult r = RunLousho({"validate", kDemo}, "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The demo's 9 tools, and bash_output and bash_kill that bash brings.
  EXPECT_NE(r.out.find(": ok (agent 'demo', model script/demo, 11 tools)"), std::string::npos)
      << r.out;
}

TEST(CliTest, RecordMirrorsEveryLineBothWays) {
  fs::path rec = fs::temp_directory_path() / ("lousho-rec-" + std::to_string(getpid()) + ".txt");
  RunResult r = RunLousho({"acp", kDemo, "--record", rec.string()}, kInit + "\nnot json\n");
  EXPECT_EQ(r.exit_code, 0);
  std::stringstream ss;
  ss << std::ifstream(rec).rdbuf();
  fs::remove(rec);
  auto out_lines = Lines(r.out);
  ASSERT_EQ(out_lines.size(), 2u);
  EXPECT_EQ(Lines(ss.str()), (std::vector<std::string>{"> " + kInit, "< " + out_lines[0],
                                                       "> not json", "< " + out_lines[1]}));
}

TEST(CliTest, LogsGoToStderrOrTheLogFileNeverStdout) {
  RunResult r = RunLousho({"--log-level", "debug", "acp", kDemo}, kInit + "\n");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("lousho debug: request initialize"), std::string::npos) << r.err;
  for (const auto& l : Lines(r.out)) EXPECT_TRUE(ParseJson(l).ok()) << l;
  fs::path log = fs::temp_directory_path() / ("lousho-log-" + std::to_string(getpid()) + ".txt");
  RunResult f =
      RunLousho({"--log-level", "info", "--log-file", log.string(), "acp", kDemo}, kInit + "\n");
  std::stringstream ss;
  ss << std::ifstream(log).rdbuf();
  fs::remove(log);
  EXPECT_TRUE(f.err.empty()) << f.err;
  EXPECT_NE(ss.str().find("serving agent 'demo'"), std::string::npos) << ss.str();
}

TEST(CliTest, OverlongLineIsRefusedAndTheServerCarriesOn) {
  std::string big = R"({"jsonrpc":"2.0","id":9,"method":"initialize","params":{"x":")" +
                    std::string(5000, 'a') + "\"}}";
  RunResult r = RunLousho({"acp", kDemo, "--max-line-bytes", "1000"}, big + "\n" + kInit + "\n");
  EXPECT_EQ(r.exit_code, 0);
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  auto first = ParseJson(lines[0]);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)["error"]["code"].asInt(), -32600);
  EXPECT_TRUE((*first)["id"].isNull());
  EXPECT_NE((*first)["error"]["message"].asString().find("exceeds"), std::string::npos);
  EXPECT_EQ((*ParseJson(lines[1]))["id"].asInt(), 1);
}

TEST(CliTest, StdinEofDuringATurnCancelsItAndExitsPromptly) {
  std::string input =
      kInit + "\n" +
      R"({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}})" +
      "\n" +
      R"({"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"slow please"}]}})" +
      "\n";
  RunResult r = RunLousho({"acp", kDemo}, input);
  EXPECT_EQ(r.exit_code, 0);
  auto lines = Lines(r.out);
  ASSERT_FALSE(lines.empty());
  auto last = ParseJson(lines.back());
  ASSERT_TRUE(last.ok());
  EXPECT_EQ((*last)["id"].asInt(), 3);
  EXPECT_EQ((*last)["result"]["stopReason"].asString(), "cancelled");
  // The slow reply alone would take seconds; a generous bound still catches a missed cancel.
  EXPECT_LT(r.seconds, 3.0);
}

using Clock = std::chrono::steady_clock;

std::string ReadFile(const fs::path& p) {
  std::stringstream ss;
  ss << std::ifstream(p).rdbuf();
  return ss.str();
}

// Polls `done` every 20 ms for at most `limit`; true once it holds.
template <typename Fn>
bool WaitUntil(Fn done, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  auto until = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Gone, or a zombie its (new) parent has yet to reap.
bool ProcessGone(int pid) {
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

// lousho running in the background: stdin is a pipe we keep open (so only a signal can end
// it), stdout and stderr go to files in a fresh folder, which also serves as session cwd.
class LiveLousho {
 public:
  explicit LiveLousho(const std::string& spec_text) {
    dir_ = fs::temp_directory_path() /
           ("lousho-live-" + std::to_string(getpid()) + "-" + std::to_string(counter_++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::string spec = (dir_ / "agent.yaml").string();
    std::ofstream(spec) << spec_text;
    // Everything for the child is built before fork.
    std::vector<std::string> args = {LOUSHO_BINARY, "acp", spec};
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // The first of duplicate variables counts; session files stay in the test's folder.
    std::vector<std::string> env_strings = {"LOUSHO_TEST_MODE=1",
                                            "LOUSHO_HOME=" + (dir_ / "home").string()};
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    std::vector<char*> envp;
    envp.reserve(env_strings.size() + 1);
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string out = (dir_ / "out").string(), err = (dir_ / "err").string();
    int in[2];
    if (pipe2(in, O_CLOEXEC) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(in[0], 0);
      dup2(o, 1);
      dup2(e, 2);
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    close(in[0]);
    in_ = in[1];
  }
  ~LiveLousho() {
    if (in_ >= 0) close(in_);
    if (pid_ > 0 && !status_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    fs::remove_all(dir_);
  }

  void Send(const std::string& line) {
    std::string l = line + "\n";
    ASSERT_EQ(write(in_, l.data(), l.size()), static_cast<ssize_t>(l.size()));
  }
  std::vector<std::string> Out() const { return Lines(ReadFile(dir_ / "out")); }
  std::string Err() const { return ReadFile(dir_ / "err"); }
  bool WaitForLines(size_t n) {
    return WaitUntil([&] { return Out().size() >= n; });
  }
  // Waits (bounded) for the process to end; its wait status, or nullopt if it did not.
  std::optional<int> WaitForExit(std::chrono::milliseconds limit) {
    WaitUntil(
        [&] {
          int st = 0;
          if (waitpid(pid_, &st, WNOHANG) == pid_) status_ = st;
          return status_.has_value();
        },
        limit);
    return status_;
  }
  int pid() const { return pid_; }
  const fs::path& dir() const { return dir_; }

 private:
  static inline int counter_ = 0;
  fs::path dir_;
  pid_t pid_ = -1;
  int in_ = -1;
  std::optional<int> status_;
};

// A spec whose "bg" prompt runs a bash command that leaves three processes behind: one in the
// background of the command, one in a new session (setsid), and one orphaned by a subshell. It
// writes their pids to `pids` in the session folder, then waits for ever.
const std::string kBackgroundSpec = R"(name: procs
model: script/p
tools: [bash]
permissions:
  - {tool: bash, action: allow}
scripts:
  p:
    - match: "^bg"
      steps:
        - toolCalls:
            - name: bash
              arguments:
                command: "sleep 1000 & echo $! >p; setsid sleep 1000 & echo $! >>p; (sleep 1000 & echo $! >>p); mv p pids; wait"
        - {text: "Done.", chunkSize: 1000}
)";

std::vector<int> StartBackgroundTurn(LiveLousho& lousho) {
  lousho.Send(kInit);
  lousho.Send(R"({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":")" +
              lousho.dir().string() + R"(","mcpServers":[]}})");
  lousho.Send(
      R"({"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"bg"}]}})");
  fs::path pids_file = lousho.dir() / "pids";
  std::vector<int> pids;
  if (!WaitUntil([&] { return fs::exists(pids_file); })) return pids;
  for (const auto& l : Lines(ReadFile(pids_file))) pids.push_back(std::stoi(l));
  return pids;
}

TEST(CliTest, SigtermEndsTheTurnTheProcessesAndExitsZero) {
  LiveLousho lousho(kBackgroundSpec);
  ASSERT_GT(lousho.pid(), 0);
  std::vector<int> pids = StartBackgroundTurn(lousho);
  ASSERT_EQ(pids.size(), 3u) << lousho.Err();
  for (int pid : pids) ASSERT_FALSE(ProcessGone(pid));

  auto start = Clock::now();
  ASSERT_EQ(kill(lousho.pid(), SIGTERM), 0);
  auto status = lousho.WaitForExit(std::chrono::seconds(10));
  ASSERT_TRUE(status.has_value()) << "lousho did not exit after SIGTERM";
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(3));
  ASSERT_TRUE(WIFEXITED(*status)) << "killed by signal " << WTERMSIG(*status);
  EXPECT_EQ(WEXITSTATUS(*status), 0);

  // Every line is whole JSON, and the last answers the prompt as cancelled.
  auto lines = lousho.Out();
  ASSERT_FALSE(lines.empty());
  for (const auto& l : lines) EXPECT_TRUE(ParseJson(l).ok()) << l;
  auto last = ParseJson(lines.back());
  ASSERT_TRUE(last.ok());
  EXPECT_EQ((*last)["id"].asInt(), 3);
  EXPECT_EQ((*last)["result"]["stopReason"].asString(), "cancelled");
  for (int pid : pids)
    EXPECT_TRUE(WaitUntil([&] { return ProcessGone(pid); })) << "child " << pid << " survived";
}

TEST(CliTest, SigintAndSighupStopAnIdleServerLikeEndOfInput) {
  for (int sig : {SIGINT, SIGHUP, SIGTERM}) {
    LiveLousho lousho(kBackgroundSpec);
    ASSERT_GT(lousho.pid(), 0);
    lousho.Send(kInit);
    // Answered, so the handlers are in place and the reader is waiting on stdin.
    ASSERT_TRUE(lousho.WaitForLines(1)) << lousho.Err();
    ASSERT_EQ(kill(lousho.pid(), sig), 0);
    auto status = lousho.WaitForExit(std::chrono::seconds(5));
    ASSERT_TRUE(status.has_value()) << "no exit after signal " << sig;
    ASSERT_TRUE(WIFEXITED(*status)) << "signal " << sig << " killed it";
    EXPECT_EQ(WEXITSTATUS(*status), 0);
    EXPECT_EQ(lousho.Out().size(), 1u);
  }
}

TEST(CliTest, ProcessesEndEvenWhenLoushoIsKilledOutright) {
  // SIGKILL leaves lousho no chance to clean up; each command's keeper notices its control
  // pipe closing and ends the tree itself.
  LiveLousho lousho(kBackgroundSpec);
  ASSERT_GT(lousho.pid(), 0);
  std::vector<int> pids = StartBackgroundTurn(lousho);
  ASSERT_EQ(pids.size(), 3u) << lousho.Err();
  ASSERT_EQ(kill(lousho.pid(), SIGKILL), 0);
  ASSERT_TRUE(lousho.WaitForExit(std::chrono::seconds(5)).has_value());
  for (int pid : pids)
    EXPECT_TRUE(WaitUntil([&] { return ProcessGone(pid); })) << "child " << pid << " survived";
}

}  // namespace
}  // namespace lousho
