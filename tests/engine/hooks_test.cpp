// Tests of the hook runner (agent/hooks.h) with real shell scripts in a temporary folder, and of
// reading hooks in Claude Code's shape (config/hooks_spec.h).
#include "agent/hooks.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "config/agent_spec.h"
#include "support/json_util.h"

namespace lousho::agent {
namespace {
namespace fs = std::filesystem;
using config::HookEvent;

std::string ReadText(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Waits (bounded) until `p` exists: the hook has got that far.
bool WaitForFile(const fs::path& p) {
  for (int i = 0; i < 3000; ++i) {
    std::error_code ec;
    if (fs::exists(p, ec)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

class HookRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lousho-hooks-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A group of one command for `event`.
  void Add(HookEvent event, const std::string& matcher, const std::string& command,
           long timeout_ms = 0) {
    config::HookGroup g;
    g.event = event;
    g.matcher = matcher;
    g.hooks.push_back(config::HookCommand{command, timeout_ms, "test.yaml"});
    spec_.groups.push_back(std::move(g));
  }
  std::unique_ptr<HookRunner> Make() {
    return std::make_unique<HookRunner>(
        spec_, HookPlace{"s1", dir_, "/tmp/s1.jsonl", nullptr, {}, nullptr},
        [this](const event::Warning& w) { told_.push_back(w); });
  }
  Json::Value Args(const std::string& command) {
    Json::Value a(Json::objectValue);
    a["command"] = command;
    return a;
  }

  fs::path dir_;
  config::HooksSpec spec_;
  std::vector<event::Warning> told_;
};

TEST_F(HookRunnerTest, ExitTwoDeniesWithStderrAndTheHookReadsTheCallOnStdin) {
  spec_.project = false;
  Add(HookEvent::kPreToolUse, "Bash", "cat > input.json; echo 'no rm here' >&2; exit 2");
  auto hooks = Make();
  HookVerdict v = hooks->BeforeTool("bash", "call-1", Args("rm -rf x"), CancelToken());
  EXPECT_EQ(v.decision, HookDecision::kDeny);
  EXPECT_EQ(v.reason, "no rm here");
  Result<Json::Value> in = ParseJson(ReadText(dir_ / "input.json"));
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(StringOr(*in, "hook_event_name"), "PreToolUse");
  EXPECT_EQ(StringOr(*in, "tool_name"), "bash");
  EXPECT_EQ(StringOr(*in, "tool_use_id"), "call-1");
  EXPECT_EQ(StringOr(MemberOrNull(*in, "tool_input"), "command"), "rm -rf x");
  EXPECT_EQ(StringOr(*in, "session_id"), "s1");
  EXPECT_EQ(StringOr(*in, "cwd"), dir_.string());
  EXPECT_EQ(StringOr(*in, "transcript_path"), "/tmp/s1.jsonl");
  EXPECT_TRUE(told_.empty()) << "a denial is an answer, not a failure";
}

TEST_F(HookRunnerTest, MatchersPickToolsByNameListOrPattern) {
  spec_.project = false;
  Add(HookEvent::kPreToolUse, "Edit|Write", "echo e >> edit.log");
  Add(HookEvent::kPreToolUse, "^gr.p$", "echo g >> grep.log");
  Add(HookEvent::kPreToolUse, "*", "echo a >> all.log");
  auto hooks = Make();
  EXPECT_TRUE(hooks->Has(HookEvent::kPreToolUse, "write"));
  EXPECT_FALSE(hooks->Has(HookEvent::kPostToolUse, "write"));
  for (const char* tool : {"write", "edit", "grep", "read"})
    (void)hooks->BeforeTool(tool, "c", Json::Value(Json::objectValue), CancelToken());
  EXPECT_EQ(ReadText(dir_ / "edit.log"), "e\ne\n");
  EXPECT_EQ(ReadText(dir_ / "grep.log"), "g\n");
  EXPECT_EQ(ReadText(dir_ / "all.log"), "a\na\na\na\n");
}

TEST_F(HookRunnerTest, JsonAnswersAllowAskDenyAndRewriteInOrder) {
  spec_.project = false;
  Add(HookEvent::kPreToolUse, "",
      R"(echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow",)"
      R"("updatedInput":{"command":"ls -la"}}}')");
  // The second hook sees the first one's rewrite, and asks.
  Add(HookEvent::kPreToolUse, "",
      R"(cat > second.json; echo '{"hookSpecificOutput":{"permissionDecision":"ask",)"
      R"("permissionDecisionReason":"check it"}}')");
  auto hooks = Make();
  HookVerdict v = hooks->BeforeTool("bash", "c", Args("ls"), CancelToken());
  EXPECT_EQ(v.decision, HookDecision::kAsk) << "ask is stronger than allow";
  EXPECT_EQ(v.reason, "check it");
  ASSERT_TRUE(v.updated_input.has_value());
  EXPECT_EQ(StringOr(*v.updated_input, "command"), "ls -la");
  Result<Json::Value> second = ParseJson(ReadText(dir_ / "second.json"));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(StringOr(MemberOrNull(*second, "tool_input"), "command"), "ls -la");
}

TEST_F(HookRunnerTest, TheOlderDecisionBlockDeniesAndStopsLaterHooks) {
  spec_.project = false;
  Add(HookEvent::kPreToolUse, "", R"(echo '{"decision":"block","reason":"old style"}')");
  Add(HookEvent::kPreToolUse, "", "touch later-ran");
  auto hooks = Make();
  HookVerdict v = hooks->BeforeTool("bash", "c", Args("ls"), CancelToken());
  EXPECT_EQ(v.decision, HookDecision::kDeny);
  EXPECT_EQ(v.reason, "old style");
  EXPECT_FALSE(fs::exists(dir_ / "later-ran"));
}

TEST_F(HookRunnerTest, PostToolUseAndPromptSubmitAddContext) {
  spec_.project = false;
  Add(HookEvent::kPostToolUse, "bash",
      R"(grep -q hello-out && echo '{"hookSpecificOutput":{"additionalContext":"saw hello-out"}}')");
  Add(HookEvent::kUserPromptSubmit, "", "echo 'plain text context'");
  auto hooks = Make();
  Json::Value response(Json::objectValue);
  response["content"] = "hello-out";
  HookVerdict post = hooks->AfterTool("bash", "c", Args("echo"), response, CancelToken());
  ASSERT_EQ(post.context.size(), 1u);
  EXPECT_EQ(post.context[0], "saw hello-out");
  HookVerdict prompt = hooks->PromptSubmitted("hi", CancelToken());
  ASSERT_EQ(prompt.context.size(), 1u);
  EXPECT_EQ(prompt.context[0], "plain text context");
  EXPECT_FALSE(prompt.block);
}

TEST_F(HookRunnerTest, PromptSubmitMayBlockWithAReason) {
  spec_.project = false;
  Add(HookEvent::kUserPromptSubmit, "",
      R"(grep -q secret && echo '{"decision":"block","reason":"no secrets"}' || true)");
  auto hooks = Make();
  HookVerdict v = hooks->PromptSubmitted("my secret key", CancelToken());
  EXPECT_TRUE(v.block);
  EXPECT_EQ(v.reason, "no secrets");
  EXPECT_FALSE(hooks->PromptSubmitted("harmless", CancelToken()).block);
}

TEST_F(HookRunnerTest, ATimedOutHookIsEndedWithItsChildrenAndToldOnce) {
  spec_.project = false;
  // The hook and a child it leaves behind write their pids, then wait for ever.
  Add(HookEvent::kPreToolUse, "", "sleep 300 & echo $! > child.pid; echo $$ > hook.pid; wait",
      1000);
  auto hooks = Make();
  HookVerdict v = hooks->BeforeTool("bash", "c", Args("ls"), CancelToken());
  EXPECT_EQ(v.decision, HookDecision::kNone) << "a failed hook is skipped";
  ASSERT_EQ(told_.size(), 1u);
  EXPECT_NE(told_[0].text.find("did not finish within 1 s"), std::string::npos) << told_[0].text;
  EXPECT_FALSE(told_[0].info);
  for (const char* f : {"hook.pid", "child.pid"}) {
    const int pid = std::stoi(ReadText(dir_ / f));
    EXPECT_NE(kill(pid, 0), 0) << f << " still runs";
  }
  (void)hooks->BeforeTool("bash", "c", Args("ls"), CancelToken());
  EXPECT_EQ(told_.size(), 1u) << "the same hook failing again is not told again";
}

TEST_F(HookRunnerTest, BadJsonAndOtherExitCodesAreFailuresSkipped) {
  spec_.project = false;
  Add(HookEvent::kPreToolUse, "bash", "echo '{\"decision\": '");
  Add(HookEvent::kPreToolUse, "read", "echo 'broken' >&2; exit 1");
  Add(HookEvent::kPreToolUse, "write",
      R"(echo '{"hookSpecificOutput":{"permissionDecision":"maybe"}}')");
  auto hooks = Make();
  EXPECT_EQ(hooks->BeforeTool("bash", "c", Args("ls"), CancelToken()).decision,
            HookDecision::kNone);
  EXPECT_EQ(hooks->BeforeTool("read", "c", Args("ls"), CancelToken()).decision,
            HookDecision::kNone);
  EXPECT_EQ(hooks->BeforeTool("write", "c", Args("ls"), CancelToken()).decision,
            HookDecision::kNone);
  ASSERT_EQ(told_.size(), 3u);
  EXPECT_NE(told_[0].text.find("invalid JSON"), std::string::npos) << told_[0].text;
  EXPECT_NE(told_[1].text.find("exited with code 1: broken"), std::string::npos) << told_[1].text;
  EXPECT_NE(told_[2].text.find("unknown permissionDecision 'maybe'"), std::string::npos);
}

TEST_F(HookRunnerTest, AHookThatCannotStartIsToldAndSkipped) {
  spec_.project = false;
  Add(HookEvent::kPreToolUse, "", "true");
  auto hooks = std::make_unique<HookRunner>(
      spec_, HookPlace{"s1", dir_ / "missing", "", nullptr, {}, nullptr},
      [this](const event::Warning& w) { told_.push_back(w); });
  EXPECT_EQ(hooks->BeforeTool("bash", "c", Args("ls"), CancelToken()).decision,
            HookDecision::kNone);
  ASSERT_EQ(told_.size(), 1u);
  EXPECT_NE(told_[0].text.find("cannot enter"), std::string::npos) << told_[0].text;
}

TEST_F(HookRunnerTest, CancellingThePromptEndsARunningHook) {
  spec_.project = false;
  Add(HookEvent::kPreToolUse, "", "touch started; sleep 300");
  auto hooks = Make();
  CancelSource source;
  std::thread canceller([&] {
    if (WaitForFile(dir_ / "started")) source.Cancel(CancelCause::kUser);
  });
  HookVerdict v = hooks->BeforeTool("bash", "c", Args("ls"), source.token());
  canceller.join();
  EXPECT_TRUE(v.cancelled);
  EXPECT_TRUE(told_.empty()) << "a cancel is not a failure";
  // Already cancelled: nothing runs.
  fs::remove(dir_ / "started");
  EXPECT_TRUE(hooks->BeforeTool("bash", "c", Args("ls"), source.token()).cancelled);
  EXPECT_FALSE(fs::exists(dir_ / "started"));
}

TEST_F(HookRunnerTest, HooksRunInTheSessionFolderWithTheirVariables) {
  spec_.project = false;
  Add(HookEvent::kSessionStart, "startup",
      "echo "
      "\"$PWD|$LOUSHO_PROJECT_DIR|$CLAUDE_PROJECT_DIR|$LOUSHO_SESSION_ID|$LOUSHO_HOOK_EVENT\"");
  auto hooks = Make();
  HookVerdict v = hooks->SessionStarted(false, CancelToken());
  const std::string d = fs::canonical(dir_).string();
  ASSERT_EQ(v.context.size(), 1u);
  EXPECT_EQ(v.context[0], d + "|" + dir_.string() + "|" + dir_.string() + "|s1|SessionStart");
  EXPECT_TRUE(hooks->SessionStarted(false, CancelToken()).context.empty()) << "once per session";
}

TEST_F(HookRunnerTest, StopSessionEndAndPreCompactGetTheirInput) {
  spec_.project = false;
  Add(HookEvent::kStop, "", "cat >> stop.json");
  Add(HookEvent::kPreCompact, "manual", "cat > compact.json");
  Add(HookEvent::kSessionEnd, "", "cat > end.json");
  auto hooks = Make();
  hooks->SessionEnded("close");
  EXPECT_FALSE(fs::exists(dir_ / "end.json")) << "no end without a start";
  (void)hooks->SessionStarted(true, CancelToken());
  (void)hooks->Stopping(true, CancelToken());
  hooks->BeforeCompact("auto", "", CancelToken());
  EXPECT_FALSE(fs::exists(dir_ / "compact.json")) << "the matcher names the trigger";
  hooks->BeforeCompact("manual", "keep the plan", CancelToken());
  hooks->SessionEnded("close");
  Result<Json::Value> stop = ParseJson(ReadText(dir_ / "stop.json"));
  ASSERT_TRUE(stop.ok());
  EXPECT_TRUE(BoolOr(*stop, "stop_hook_active", false));
  Result<Json::Value> compact = ParseJson(ReadText(dir_ / "compact.json"));
  ASSERT_TRUE(compact.ok());
  EXPECT_EQ(StringOr(*compact, "trigger"), "manual");
  EXPECT_EQ(StringOr(*compact, "custom_instructions"), "keep the plan");
  Result<Json::Value> end = ParseJson(ReadText(dir_ / "end.json"));
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(StringOr(*end, "reason"), "close");
}

TEST_F(HookRunnerTest, ProjectFilesAreReadInClaudeCodesShapeUnlessTurnedOff) {
  fs::create_directories(dir_ / ".claude");
  fs::create_directories(dir_ / ".lousho");
  std::ofstream(dir_ / ".lousho/hooks.json")
      << R"({"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"echo lousho"}]}]}})";
  std::ofstream(dir_ / ".claude/settings.json")
      << R"({"permissions":{},"hooks":{"SessionStart":[{"matcher":"startup","hooks":[)"
      << R"({"type":"command","command":"echo claude"}]}],)"
      << R"("Notification":[{"hooks":[{"type":"command","command":"notify-send hi"}]}]}})";
  std::ofstream(dir_ / ".claude/settings.local.json") << "{not json";
  auto hooks = Make();
  HookVerdict v = hooks->SessionStarted(false, CancelToken());
  EXPECT_EQ(v.context, (std::vector<std::string>{"lousho", "claude"}));
  ASSERT_EQ(told_.size(), 1u);
  EXPECT_TRUE(told_[0].info);
  EXPECT_NE(told_[0].text.find("Notification hooks are not run"), std::string::npos)
      << told_[0].text;
  EXPECT_NE(told_[0].text.find(".claude/settings.local.json: not a JSON object"), std::string::npos)
      << told_[0].text;

  spec_.project = false;
  auto off = Make();
  EXPECT_TRUE(off->SessionStarted(false, CancelToken()).context.empty());
}

TEST(HookSpecTest, UnknownEventsAndMalformedEntriesAreErrorsNamingTheirPlace) {
  auto parse = [](const std::string& text) {
    return config::ParseHookGroups(*ParseJson(text), "agent.yaml");
  };
  Result<config::ParsedHooks> typo = parse(R"({"PreTooluse":[]})");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("hooks.PreTooluse: unknown hook event"), std::string::npos);
  Result<config::ParsedHooks> no_command = parse(R"({"Stop":[{"hooks":[{"type":"command"}]}]})");
  ASSERT_FALSE(no_command.ok());
  EXPECT_NE(no_command.error().message.find("hooks.Stop[0].hooks[0]: missing 'command'"),
            std::string::npos);
  Result<config::ParsedHooks> bad_timeout =
      parse(R"({"Stop":[{"hooks":[{"command":"x","timeout":-1}]}]})");
  ASSERT_FALSE(bad_timeout.ok());
  Result<config::ParsedHooks> ok = parse(
      R"({"Stop":[{"hooks":[{"command":"x","timeout":1.5},{"type":"prompt","prompt":"?"}]}]})");
  ASSERT_TRUE(ok.ok());
  ASSERT_EQ(ok->groups.size(), 1u);
  ASSERT_EQ(ok->groups[0].hooks.size(), 1u);
  EXPECT_EQ(ok->groups[0].hooks[0].timeout_ms, 1500);
  EXPECT_EQ(ok->skipped.size(), 1u) << "a prompt hook is skipped, and said so";
}

TEST_F(HookRunnerTest, TheSpecsHooksBlockLoadsAndItsErrorsNameTheFile) {
  const fs::path spec = dir_ / "agent.yaml";
  std::ofstream(spec) << R"(model: script/echo
hooks:
  project: false
  timeout: 5
  PreToolUse:
    - matcher: "Bash"
      hooks:
        - {type: command, command: "exit 2", timeout: 2}
  Notification:
    - hooks: [{type: command, command: "notify-send x"}]
)";
  Result<config::AgentSpec> loaded = config::LoadAgentSpec(spec.string(), {});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const config::HooksSpec& hooks = loaded->hooks;
  EXPECT_FALSE(hooks.project);
  EXPECT_EQ(hooks.default_timeout_ms, 5000);
  ASSERT_EQ(hooks.groups.size(), 1u);
  EXPECT_EQ(hooks.groups[0].event, HookEvent::kPreToolUse);
  EXPECT_EQ(hooks.groups[0].matcher, "Bash");
  ASSERT_EQ(hooks.groups[0].hooks.size(), 1u);
  EXPECT_EQ(hooks.groups[0].hooks[0].command, "exit 2");
  EXPECT_EQ(hooks.groups[0].hooks[0].timeout_ms, 2000);
  EXPECT_EQ(hooks.groups[0].hooks[0].source, "agent.yaml");

  std::ofstream(spec) << "model: script/echo\nhooks:\n  PostToolUze: []\n";
  Result<config::AgentSpec> typo = config::LoadAgentSpec(spec.string(), {});
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().code, ErrorCode::kConfigInvalid);
  EXPECT_NE(
      typo.error().message.find(spec.string() + ":3:3: hooks.PostToolUze: unknown hook event"),
      std::string::npos)
      << typo.error().message;
  std::ofstream(spec) << "model: script/echo\nhooks:\n  project: maybe\n";
  Result<config::AgentSpec> bad = config::LoadAgentSpec(spec.string(), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("hooks.project: expected true or false"), std::string::npos);
}

}  // namespace
}  // namespace lousho::agent
