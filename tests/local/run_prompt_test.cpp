// lousho run's engine side in-process, with a scripted model and real tools in a temp folder:
// the answer on stdout and one line per tool call on stderr, refusals (exit 3), --allow and
// --yes, --deny, plan mode, the limits (exit 4), a model error (exit 1), a cancel (exit 130),
// the --json lines, and --continue across two runs.
#include "local/run_prompt.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "local/json_events.h"
#include "support/json_util.h"

namespace lousho::local {
namespace {
namespace fs = std::filesystem;

// The script: each reply chosen by a word of the prompt.
constexpr char kRunSpec[] = R"(name: run-test
model: script/t
tools: [read, write, bash]
maxSteps: 3
scripts:
  t:
    - match: "writefile"
      steps:
        - text: "Writing."
          toolCalls: [{name: write, arguments: {path: out.txt, content: "written\n"}}]
        - text: "Done writing."
    - match: "readnotes"
      steps:
        - toolCalls: [{name: read, arguments: {path: notes.txt}}]
        - text: "The notes say alpha."
    - match: "loop"
      steps:
        - toolCalls: [{name: read, arguments: {path: notes.txt}}]
        - toolCalls: [{name: read, arguments: {path: notes.txt}}]
        - toolCalls: [{name: read, arguments: {path: notes.txt}}]
        - text: "never reached"
    - match: "long"
      text: "cut short"
      stopReason: max_tokens
    - match: "broken"
      error: {code: LOUSHO_PROVIDER_RATE_LIMITED, message: "rate limited"}
    - match: "slow"
      text: "one two three four five six seven eight nine ten eleven twelve"
      delayMs: 200
    - text: "You said: {{input}}"
)";

// A file the runner writes to, read back whole.
class Capture {
 public:
  Capture() : file_(std::tmpfile()) {}
  ~Capture() { std::fclose(file_); }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  FILE* file() const { return file_; }
  std::string Text() const {
    std::fflush(file_);
    std::rewind(file_);
    std::string out;
    char buf[4096];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, file_)) > 0) out.append(buf, n);
    return out;
  }

 private:
  FILE* file_;
};

struct RunResult {
  int code = -1;
  std::string out, err;
};

class RunPromptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lousho-run-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "ws");
    std::ofstream(dir_ / "agent.yaml") << kRunSpec;
    std::ofstream(dir_ / "ws/notes.txt") << "alpha\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunResult Run(const std::string& prompt, RunRequest request = {},
                std::vector<agent::PermissionRule> deny = {}, bool no_session = true) {
    host::HostOptions o = host::MakeHostOptions(
        {config::AgentSource::kArgument, (dir_ / "agent.yaml").string(), ""}, "",
        (dir_ / "sessions").string(), no_session,
        [](const std::string&) -> std::optional<std::string> { return std::nullopt; });
    o.rules_first = std::move(deny);
    host::SessionHost host(std::move(o));
    EXPECT_TRUE(host.Load().ok());
    request.prompt = prompt;
    request.cwd = dir_ / "ws";
    request.gate.cwd = dir_ / "ws";
    Capture out, err;
    RunResult r;
    r.code = RunPrompt(host, request, out.file(), err.file());
    r.out = out.Text();
    r.err = err.Text();
    return r;
  }

  fs::path dir_;
};

TEST_F(RunPromptTest, AnswersOnStdoutWithToolLinesOnStderr) {
  RunResult r = Run("readnotes please");
  EXPECT_EQ(r.code, kExitAnswered) << r.err;
  EXPECT_EQ(r.out, "The notes say alpha.\n");
  EXPECT_NE(r.err.find("✓ "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("notes.txt"), std::string::npos) << r.err;
}

TEST_F(RunPromptTest, ACallThatWouldAskIsRefusedAndReported) {
  RunResult r = Run("writefile now");
  EXPECT_EQ(r.code, kExitRefused);
  EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--allow 'write:out.txt'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "ws/out.txt"));
}

TEST_F(RunPromptTest, AnAllowFlagOrYesLetsItRun) {
  RunRequest allow;
  allow.gate.allow.push_back(*ParseRuleFlag("write:*.txt", agent::PermissionAction::kAllow));
  RunResult r = Run("writefile now", allow);
  EXPECT_EQ(r.code, kExitAnswered) << r.err;
  EXPECT_EQ(r.out, "Done writing.\n");
  EXPECT_TRUE(fs::exists(dir_ / "ws/out.txt"));
  fs::remove(dir_ / "ws/out.txt");
  RunRequest yes;
  yes.gate.yes = true;
  EXPECT_EQ(Run("writefile now", yes).code, kExitAnswered);
  EXPECT_TRUE(fs::exists(dir_ / "ws/out.txt"));
}

TEST_F(RunPromptTest, DenyRulesAndPlanModeRefuseWithoutAsking) {
  RunResult denied =
      Run("readnotes please", {}, {*ParseRuleFlag("read", agent::PermissionAction::kDeny)});
  EXPECT_EQ(denied.code, kExitAnswered);  // the model saw the denial and answered
  EXPECT_NE(denied.err.find("✗ "), std::string::npos) << denied.err;
  EXPECT_NE(denied.err.find("denied by permission rule"), std::string::npos) << denied.err;
  RunRequest plan;
  plan.mode = agent::PermissionMode::kPlan;
  plan.gate.yes = true;  // plan mode denies before anything is asked
  RunResult r = Run("writefile now", plan);
  EXPECT_EQ(r.code, kExitAnswered) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "ws/out.txt"));
  EXPECT_NE(r.err.find("plan mode"), std::string::npos) << r.err;
}

TEST_F(RunPromptTest, LimitsAndErrorsHaveTheirExitCodes) {
  EXPECT_EQ(Run("loop forever").code, kExitLimit);  // max_turn_requests (maxSteps: 3)
  EXPECT_EQ(Run("long answer").code, kExitLimit);   // max_tokens
  RunResult broken = Run("broken model");
  EXPECT_EQ(broken.code, kExitError);
  EXPECT_NE(broken.err.find("rate limited"), std::string::npos) << broken.err;
}

TEST_F(RunPromptTest, AStopSignalCancelsTheTurn) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "x", 1), 1);  // the signal arrived: cancelled once the prompt runs
  RunRequest request;
  request.stop_fd = fds[0];
  RunResult r = Run("slow please", request);
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_EQ(r.code, kExitCancelled);
  EXPECT_NE(r.err.find("cancelling"), std::string::npos) << r.err;
}

TEST_F(RunPromptTest, JsonLinesStartWithTheVersionAndEndWithTheResult) {
  RunRequest request;
  request.json = true;
  RunResult r = Run("writefile now", request);
  EXPECT_EQ(r.code, kExitRefused);
  std::istringstream lines(r.out);
  std::string line;
  std::vector<Json::Value> objects;
  while (std::getline(lines, line)) {
    auto parsed = ParseJson(line);
    ASSERT_TRUE(parsed.ok()) << line;
    objects.push_back(*parsed);
  }
  ASSERT_GE(objects.size(), 3u);
  EXPECT_EQ(objects.front()["type"].asString(), "start");
  EXPECT_EQ(objects.front()["version"].asInt(), kRunJsonVersion);
  EXPECT_EQ(objects.back()["type"].asString(), "result");
  EXPECT_EQ(objects.back()["exitCode"].asInt(), kExitRefused);
  EXPECT_EQ(objects.back()["stopReason"].asString(), "end_turn");
  EXPECT_EQ(objects.back()["refused"].asInt(), 1);
  std::map<std::string, int> types;
  for (const auto& o : objects) ++types[o["type"].asString()];
  EXPECT_EQ(types["permission_refused"], 1);
  EXPECT_EQ(types["tool_execution_start"], 1);
  EXPECT_GE(types["message_update"], 1);
  EXPECT_EQ(types["agent_end"], 1);
}

TEST_F(RunPromptTest, ContinueOpensTheNewestSessionOfTheFolder) {
  RunRequest json;
  json.json = true;
  RunResult first = Run("hello there", json, {}, /*no_session=*/false);
  ASSERT_EQ(first.code, kExitAnswered) << first.err;
  auto start1 = ParseJson(first.out.substr(0, first.out.find('\n')));
  ASSERT_TRUE(start1.ok());
  RunRequest again = json;
  again.choice.continue_newest = true;
  RunResult second = Run("hello again", again, {}, /*no_session=*/false);
  ASSERT_EQ(second.code, kExitAnswered) << second.err;
  auto start2 = ParseJson(second.out.substr(0, second.out.find('\n')));
  ASSERT_TRUE(start2.ok());
  EXPECT_EQ((*start2)["sessionId"], (*start1)["sessionId"]);
  EXPECT_FALSE((*start2)["sessionFile"].isNull());
  // By id too.
  RunRequest by_id = json;
  by_id.choice.session = (*start1)["sessionId"].asString();
  RunResult third = Run("hello by id", by_id, {}, /*no_session=*/false);
  auto start3 = ParseJson(third.out.substr(0, third.out.find('\n')));
  ASSERT_TRUE(start3.ok());
  EXPECT_EQ((*start3)["sessionFile"], (*start1)["sessionFile"]);
}

}  // namespace
}  // namespace lousho::local
