// Tests of the hooks' wiring in a session (agent/hooks.h): the offline model, real tools, real
// hook scripts, and the model's requests as the provider received them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>

#include "agent/providers/script_provider.h"
#include "agent/session.h"
#include "support/json_util.h"

namespace lousho::agent {
namespace {
namespace fs = std::filesystem;
using config::HookEvent;

// The script model, keeping the text of every request's messages ("role[/custom]: text").
class RecordingModel : public Provider {
 public:
  explicit RecordingModel(config::Script script) : inner_(std::move(script)) {}
  Result<ModelResponse> Stream(const ModelRequest& request, const DeltaCallback& on_delta,
                               const CancelToken& cancel, const RetryHooks& retry) override {
    std::vector<std::string> seen;
    for (const Message& m : request.messages) {
      std::string role = m.role == Role::kUser        ? "user"
                         : m.role == Role::kAssistant ? "assistant"
                                                      : "tool";
      if (m.is_custom()) role += "/" + m.custom_type;
      seen.push_back(role + ": " + m.TextContent());
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(std::move(seen));
    }
    return inner_.Stream(request, on_delta, cancel, retry);
  }
  bool SupportsImages() const override { return true; }
  long long ContextWindow() const override { return 200000; }
  std::vector<std::vector<std::string>> Requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  ScriptProvider inner_;
  std::mutex mu_;
  std::vector<std::vector<std::string>> requests_;
};

class AskRecorder : public PermissionPrompter {
 public:
  PermissionDecision RequestPermission(const std::string&, const PermissionRequest& req,
                                       const CancelToken&) override {
    std::lock_guard<std::mutex> lock(mu_);
    asked_.push_back(req.tool_name);
    return PermissionDecision::kAllowOnce;
  }
  std::vector<std::string> Asked() {
    std::lock_guard<std::mutex> lock(mu_);
    return asked_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> asked_;
};

config::ScriptStep Say(std::string text, std::vector<config::ScriptToolCall> calls = {}) {
  config::ScriptStep s;
  s.text = std::move(text);
  s.tool_calls = std::move(calls);
  s.chunk_size = 1000;
  return s;
}

config::ScriptToolCall Call(std::string name,
                            const std::vector<std::pair<std::string, std::string>>& kv) {
  config::ScriptToolCall c;
  c.name = std::move(name);
  for (const auto& [k, v] : kv) c.arguments[k] = v;
  return c;
}

bool Contains(const std::vector<std::string>& lines, const std::string& part) {
  for (const auto& l : lines)
    if (l.find(part) != std::string::npos) return true;
  return false;
}

class HookSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lousho-hook-session-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "notes.txt") << "alpha\nbeta\n";
    hooks_.project = false;
  }
  void TearDown() override {
    if (session_) session_->WaitIdle();
    session_.reset();
    fs::remove_all(dir_);
  }
  void Hook(HookEvent event, const std::string& matcher, const std::string& command) {
    config::HookGroup g;
    g.event = event;
    g.matcher = matcher;
    g.hooks.push_back(config::HookCommand{command, 0, "agent.yaml"});
    hooks_.groups.push_back(std::move(g));
  }
  void Make(std::vector<config::ScriptStep> steps) {
    config::Script script;
    script.name = "t";
    script.replies = {config::ScriptReply{"", std::move(steps)}};
    model_ = std::make_shared<RecordingModel>(script);
    auto agent = std::make_shared<AgentConfig>();
    agent->model.provider = model_;
    agent->max_steps = 6;
    agent->hooks = hooks_;
    for (const char* t : {"read", "write", "bash"}) agent->tools.push_back(MakeBuiltinTool(t));
    SessionOptions o;
    o.id = "s1";
    o.cwd = dir_;
    o.services.permissions = &editor_;
    o.sink = [this](const Event& e) {
      if (const auto* w = std::get_if<event::Warning>(&e)) {
        std::lock_guard<std::mutex> lock(mu_);
        warnings_.push_back(w->text);
      }
    };
    session_ = *Session::Create(agent, std::move(o));
  }
  std::future<Result<TurnResult>> Start(const std::string& text) {
    auto p = std::make_shared<std::promise<Result<TurnResult>>>();
    auto f = p->get_future();
    EXPECT_TRUE(session_
                    ->Prompt({ContentBlock::Text(text)},
                             [p](Result<TurnResult> r) { p->set_value(std::move(r)); })
                    .ok());
    return f;
  }
  Result<TurnResult> Run(const std::string& text) { return Start(text).get(); }
  std::vector<std::string> Warnings() {
    std::lock_guard<std::mutex> lock(mu_);
    return warnings_;
  }

  fs::path dir_;
  config::HooksSpec hooks_;
  AskRecorder editor_;
  std::shared_ptr<RecordingModel> model_;
  std::shared_ptr<Session> session_;
  std::mutex mu_;
  std::vector<std::string> warnings_;
};

TEST_F(HookSessionTest, ADeniedCallDoesNotRunAndTheModelSeesTheReason) {
  Hook(HookEvent::kPreToolUse, "Bash", "echo 'not in this repo' >&2; exit 2");
  Make({Say("", {Call("bash", {{"command", "touch ran.txt"}})}), Say("ok")});
  Result<TurnResult> r = Run("go");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kEndTurn);
  EXPECT_FALSE(fs::exists(dir_ / "ran.txt"));
  auto requests = model_->Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_TRUE(Contains(requests[1], "tool: A hook denied this tool call: not in this repo"));
  EXPECT_TRUE(editor_.Asked().empty()) << "a denied call is never asked for";
}

TEST_F(HookSessionTest, ARewrittenCallRunsWithTheNewInputWithoutAsking) {
  Hook(HookEvent::kPreToolUse, "write",
       R"(echo '{"hookSpecificOutput":{"permissionDecision":"allow",)"
       R"("updatedInput":{"path":"rewritten.txt","content":"by hook\n"}}}')");
  Make({Say("", {Call("write", {{"path", "orig.txt"}, {"content", "x"}})}), Say("ok")});
  ASSERT_TRUE(Run("go").ok());
  EXPECT_FALSE(fs::exists(dir_ / "orig.txt"));
  EXPECT_TRUE(fs::exists(dir_ / "rewritten.txt"));
  EXPECT_TRUE(editor_.Asked().empty()) << "allow skips the question the write would ask";
  auto h = session_->transcript().Messages();
  ASSERT_GE(h.size(), 3u);
  EXPECT_EQ(StringOr(h[2].tool->args, "path"), "rewritten.txt") << "the result keeps what ran";
}

TEST_F(HookSessionTest, AskFallsToThePermissionPromptEvenForALookup) {
  Hook(HookEvent::kPreToolUse, "read",
       R"(echo '{"hookSpecificOutput":{"permissionDecision":"ask"}}')");
  Make({Say("", {Call("read", {{"path", "notes.txt"}})}), Say("ok")});
  ASSERT_TRUE(Run("go").ok());
  EXPECT_EQ(editor_.Asked(), std::vector<std::string>{"read"});
}

TEST_F(HookSessionTest, PostToolUseContextJoinsEachResultOfParallelLookups) {
  Hook(HookEvent::kPostToolUse, "read",
       R"(echo '{"hookSpecificOutput":{"additionalContext":"lint: clean"}}')");
  Make({Say("", {Call("read", {{"path", "notes.txt"}}), Call("read", {{"path", "notes.txt"}})}),
        Say("ok")});
  ASSERT_TRUE(Run("go").ok());
  auto requests = model_->Requests();
  ASSERT_EQ(requests.size(), 2u);
  int with_context = 0;
  for (const auto& line : requests[1])
    if (line.rfind("tool: ", 0) == 0 && line.find("alpha") != std::string::npos &&
        line.find("PostToolUse hook additional context:\nlint: clean") != std::string::npos)
      ++with_context;
  EXPECT_EQ(with_context, 2);
}

TEST_F(HookSessionTest, StartAndPromptContextComeBeforeThePromptAndStartRunsOnce) {
  Hook(HookEvent::kSessionStart, "startup", "echo start >> start.log; echo 'branch: main'");
  Hook(HookEvent::kUserPromptSubmit, "",
       R"(echo '{"hookSpecificOutput":{"additionalContext":"today is a test"}}')");
  Make({Say("one")});
  ASSERT_TRUE(Run("first").ok());
  ASSERT_TRUE(Run("second").ok());
  auto requests = model_->Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0],
            (std::vector<std::string>{
                "user/hookContext: SessionStart hook additional context:\nbranch: main",
                "user/hookContext: UserPromptSubmit hook additional context:\ntoday "
                "is a test",
                "user: first"}));
  ASSERT_EQ(requests[1].size(), 6u);
  EXPECT_EQ(requests[1].back(), "user: second");
  EXPECT_EQ(requests[1][4],
            "user/hookContext: UserPromptSubmit hook additional context:\ntoday "
            "is a test");
  std::ifstream log(dir_ / "start.log");
  std::string all((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all, "start\n");
}

TEST_F(HookSessionTest, ABlockedPromptNeverReachesTheModel) {
  Hook(HookEvent::kUserPromptSubmit, "", R"(echo '{"decision":"block","reason":"no secrets"}')");
  Make({Say("one")});
  Result<TurnResult> r = Run("my password is hunter2");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kEndTurn);
  EXPECT_TRUE(model_->Requests().empty());
  EXPECT_TRUE(session_->transcript().Messages().empty()) << "the prompt is not kept";
  EXPECT_TRUE(Contains(Warnings(), "A UserPromptSubmit hook refused the prompt: no secrets"));
}

TEST_F(HookSessionTest, AStopHookSendsTheModelOnOnce) {
  Hook(HookEvent::kStop, "",
       R"(grep -q '"stop_hook_active":true' && exit 0; echo 'run the tests first' >&2; exit 2)");
  Make({Say("done")});
  Result<TurnResult> r = Run("go");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kEndTurn);
  auto requests = model_->Requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].back(), "user/hookContext: Stop hook feedback:\nrun the tests first");
}

TEST_F(HookSessionTest, CancellingThePromptEndsAHookThatHangs) {
  Hook(HookEvent::kPreToolUse, "", "touch started; sleep 300");
  Make({Say("", {Call("bash", {{"command", "touch ran.txt"}})}), Say("ok")});
  auto f = Start("go");
  for (int i = 0; i < 3000 && !fs::exists(dir_ / "started"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(fs::exists(dir_ / "started"));
  session_->Cancel();
  Result<TurnResult> r = f.get();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kCancelled);
  EXPECT_FALSE(fs::exists(dir_ / "ran.txt"));
  EXPECT_TRUE(Warnings().empty()) << "a cancel is not a hook failure";
}

TEST_F(HookSessionTest, ACancelWhileAPromptHookRunsKeepsThePrompt) {
  Hook(HookEvent::kUserPromptSubmit, "", "touch started; sleep 300");
  Make({Say("ok")});
  auto f = Start("keep me");
  for (int i = 0; i < 3000 && !fs::exists(dir_ / "started"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(fs::exists(dir_ / "started"));
  session_->Cancel();
  Result<TurnResult> r = f.get();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kCancelled);
  EXPECT_TRUE(model_->Requests().empty());
  auto h = session_->transcript().Messages();
  ASSERT_EQ(h.size(), 1u) << "nothing the user typed is lost";
  EXPECT_EQ(h[0].TextContent(), "keep me");
}

TEST_F(HookSessionTest, PreCompactAndSessionEndRunWithTheirTriggers) {
  Hook(HookEvent::kPreCompact, "manual", "cat > compact.json");
  Hook(HookEvent::kSessionEnd, "", "cat > end.json");
  Make({Say("one")});
  ASSERT_TRUE(Run("first").ok());
  std::promise<void> compacted;
  ASSERT_TRUE(
      session_->compaction()
          .Compact("keep it short", [&](const Result<CompactionResult>&) { compacted.set_value(); })
          .ok());
  compacted.get_future().wait();
  EXPECT_TRUE(fs::exists(dir_ / "compact.json"));
  std::promise<void> closed;
  session_->Close([&] { closed.set_value(); });
  closed.get_future().wait();
  std::ifstream end(dir_ / "end.json");
  std::string text((std::istreambuf_iterator<char>(end)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"reason\":\"close\""), std::string::npos) << text;
}

TEST_F(HookSessionTest, AFailingHookIsToldOnceAndTheCallGoesOn) {
  Hook(HookEvent::kPreToolUse, "", "exit 7");
  Make({Say("", {Call("read", {{"path", "notes.txt"}})}),
        Say("", {Call("read", {{"path", "notes.txt"}})}), Say("ok")});
  ASSERT_TRUE(Run("go").ok());
  auto requests = model_->Requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_TRUE(Contains(requests[2], "alpha")) << "the calls ran";
  auto warnings = Warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("exited with code 7"), std::string::npos) << warnings[0];
}

}  // namespace
}  // namespace lousho::agent
