// Tests of stream rules in the session engine, with the offline script provider behind a
// recorder: the interruption, what the next model request holds (discard / keep), repeat
// policies, tool-argument rules, the non-interrupting paths, and persistence across a resume.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>

#include "agent/providers/script_provider.h"
#include "agent/rules/loader.h"
#include "agent/session.h"
#include "agent/tools/builtin_tools.h"

namespace lousho::agent {
namespace {
namespace fs = std::filesystem;

// Plays a script and keeps a copy of every request's messages.
class RecordingProvider : public Provider {
 public:
  explicit RecordingProvider(config::Script script) : inner_(std::move(script)) {}
  Result<ModelResponse> Stream(const ModelRequest& request, const DeltaCallback& on_delta,
                               const CancelToken& cancel, const RetryHooks& retry) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.emplace_back(request.messages.begin(), request.messages.end());
    }
    return inner_.Stream(request, on_delta, cancel, retry);
  }
  std::vector<std::vector<Message>> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  ScriptProvider inner_;
  std::mutex mu_;
  std::vector<std::vector<Message>> requests_;
};

config::ScriptStep Text(std::string text, int chunk = 4) {
  config::ScriptStep s;
  s.text = std::move(text);
  s.chunk_size = chunk;
  return s;
}

config::ScriptStep Call(std::string tool, Json::Value args) {
  config::ScriptStep s;
  config::ScriptToolCall c;
  c.name = std::move(tool);
  c.arguments = std::move(args);
  s.tool_calls.push_back(std::move(c));
  return s;
}

const char* kRule =
    "---\n"
    "description: Never write the forbidden token\n"
    "condition: \"FORBIDDEN_TOKEN\"\n"
    "---\n"
    "Do not output the string FORBIDDEN_TOKEN. Use ALLOWED_TOKEN instead.\n";

class TtsrSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lousho-ttsr-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / ".lousho" / "rules");
  }
  void TearDown() override {
    for (auto& s : sessions_) s->WaitIdle();
    sessions_.clear();
    fs::remove_all(dir_);
  }
  void AddRule(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / ".lousho" / "rules" / (name + ".md")) << text;
  }
  // The default script: a reply that breaks the rule, and a clean one once told.
  void Script(std::vector<config::ScriptReply> replies) { replies_ = std::move(replies); }
  std::shared_ptr<Session> Open(std::vector<Entry> seed = {}) {
    config::Script script;
    script.name = "t";
    script.replies = replies_;
    provider_ = std::make_shared<RecordingProvider>(script);
    auto agent = std::make_shared<AgentConfig>();
    agent->model.provider = provider_;
    agent->max_steps = 8;
    for (const char* t : {"read", "write", "bash"}) agent->tools.push_back(MakeBuiltinTool(t));
    agent->rules = rules::LoadAgentRules(spec_, "");
    SessionOptions o;
    o.id = "s" + std::to_string(sessions_.size() + 1);
    o.cwd = dir_;
    o.seed = std::move(seed);
    o.sink = [this](const Event& e) { Record(e); };
    auto s = Session::Create(agent, std::move(o));
    EXPECT_TRUE(s.ok());
    sessions_.push_back(*s);
    return *s;
  }
  Result<TurnResult> Run(Session& s, const std::string& text) {
    std::promise<Result<TurnResult>> p;
    auto f = p.get_future();
    Status st = s.Prompt({ContentBlock::Text(text)},
                         [&p](Result<TurnResult> r) { p.set_value(std::move(r)); });
    if (!st.ok()) return st.error();
    return f.get();
  }
  void Record(const Event& e) {
    // The user cancels right after the interrupted turn ended, in the pause before the retry.
    if (std::holds_alternative<event::TtsrTriggered>(e)) seen_trigger_ = true;
    if (cancel_on_trigger_ && seen_trigger_ && std::holds_alternative<event::TurnEnd>(e))
      sessions_.back()->Cancel(CancelCause::kUser);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto* t = std::get_if<event::TtsrTriggered>(&e)) triggered_.push_back(*t);
    if (auto* m = std::get_if<event::MessageEnd>(&e)) ends_.push_back(*m->message);
    if (auto* t = std::get_if<event::ToolExecutionStart>(&e)) tools_run_.push_back(t->call->name);
  }
  std::vector<event::TtsrTriggered> Triggered() {
    std::lock_guard<std::mutex> lock(mu_);
    return triggered_;
  }
  std::vector<Message> Ends() {
    std::lock_guard<std::mutex> lock(mu_);
    return ends_;
  }
  static std::vector<std::vector<std::string>> Injections(const Session& s) {
    std::vector<std::vector<std::string>> out;
    for (const auto& e : s.transcript().Entries())
      if (e.kind == EntryKind::kTtsrInjection) out.push_back(e.more->rules);
    return out;
  }

  fs::path dir_;
  config::AgentSpec spec_;
  std::vector<config::ScriptReply> replies_ = {
      config::ScriptReply{"system-interrupt", {Text("Here is ALLOWED_TOKEN.")}},
      config::ScriptReply{"", {Text("Sure: FORBIDDEN_TOKEN here")}}};
  std::shared_ptr<RecordingProvider> provider_;
  std::vector<std::shared_ptr<Session>> sessions_;
  std::mutex mu_;
  std::vector<event::TtsrTriggered> triggered_;
  std::vector<Message> ends_;
  std::vector<std::string> tools_run_;
  bool cancel_on_trigger_ = false;
  bool seen_trigger_ = false;  // on the worker only
};

const std::string kInjected =
    "<system-interrupt reason=\"rule_violation\" rule=\"no-forbidden\" "
    "path=\".lousho/rules/no-forbidden.md\">\n"
    "Output interrupted: violated user-defined rule.\n"
    "Not prompt injection; coding agent enforcing project rules.\n"
    "MUST comply:\n\n"
    "Do not output the string FORBIDDEN_TOKEN. Use ALLOWED_TOKEN instead.\n"
    "</system-interrupt>";

TEST_F(TtsrSessionTest, DiscardModeDropsThePartialAndRetries) {
  AddRule("no-forbidden", kRule);
  auto s = Open();
  auto r = Run(*s, "say it");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kEndTurn);

  auto trig = Triggered();
  ASSERT_EQ(trig.size(), 1u);
  EXPECT_EQ(trig[0].rules, std::vector<std::string>{"no-forbidden"});
  EXPECT_TRUE(trig[0].interrupted);
  EXPECT_EQ(trig[0].source, "text");
  ASSERT_EQ(trig[0].details.size(), 1u);
  EXPECT_EQ(trig[0].details[0].path, ".lousho/rules/no-forbidden.md");
  EXPECT_EQ(trig[0].details[0].content,
            "Do not output the string FORBIDDEN_TOKEN. Use ALLOWED_TOKEN instead.");
  EXPECT_EQ(trig[0].details[0].conditions, std::vector<std::string>{"FORBIDDEN_TOKEN"});

  // The aborted message ends cancelled with the reason; the retry ends normally.
  auto ends = Ends();
  ASSERT_EQ(ends.size(), 3u);  // user, aborted, retry (the hidden message has no events)
  EXPECT_EQ(ends[1].stop_reason, StopReason::kCancelled);
  EXPECT_EQ(ends[1].error_message(), "TTSR matched rule: no-forbidden");
  EXPECT_EQ(ends[2].TextContent(), "Here is ALLOWED_TOKEN.");

  // The retry's request ends with the hidden rule message, and holds no partial answer.
  auto reqs = provider_->requests();
  ASSERT_EQ(reqs.size(), 2u);
  ASSERT_EQ(reqs[1].size(), 2u);
  EXPECT_EQ(reqs[1][0].TextContent(), "say it");
  EXPECT_EQ(reqs[1][1].role, Role::kUser);
  EXPECT_EQ(reqs[1][1].custom_type, "ttsr-injection");
  EXPECT_FALSE(reqs[1][1].display);
  EXPECT_EQ(reqs[1][1].TextContent(), kInjected);

  auto h = s->transcript().Messages();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[2].TextContent(), "Here is ALLOWED_TOKEN.");
  EXPECT_EQ(Injections(*s), std::vector<std::vector<std::string>>{{"no-forbidden"}});
}

TEST_F(TtsrSessionTest, KeepModeSendsThePartialBeforeTheRule) {
  AddRule("no-forbidden", kRule);
  spec_.ttsr.context_mode = "keep";
  auto s = Open();
  ASSERT_TRUE(Run(*s, "say it").ok());
  auto reqs = provider_->requests();
  ASSERT_EQ(reqs.size(), 2u);
  ASSERT_EQ(reqs[1].size(), 3u);
  EXPECT_EQ(reqs[1][1].role, Role::kAssistant);
  // Chunks of 4: "Sure", ": FO", "RBID", "DEN_", "TOKE", then "N he" completes the token and
  // never leaves the engine.
  EXPECT_EQ(reqs[1][1].TextContent(), "Sure: FORBIDDEN_TOKE");
  EXPECT_EQ(reqs[1][1].stop_reason, StopReason::kCancelled);
  EXPECT_EQ(reqs[1][2].TextContent(), kInjected);
}

TEST_F(TtsrSessionTest, OnceMeansOncePerSession) {
  AddRule("no-forbidden", kRule);
  // Every reply breaks the rule; only the first is interrupted.
  Script({config::ScriptReply{"", {Text("FORBIDDEN_TOKEN again")}}});
  auto s = Open();
  ASSERT_TRUE(Run(*s, "one").ok());
  ASSERT_TRUE(Run(*s, "two").ok());
  EXPECT_EQ(Triggered().size(), 1u);
  EXPECT_EQ(s->transcript().Messages().back().TextContent(), "FORBIDDEN_TOKEN again");
}

TEST_F(TtsrSessionTest, AfterGapCountsCompletedTurns) {
  AddRule("no-forbidden", kRule);
  spec_.ttsr.repeat_mode = "after-gap";
  spec_.ttsr.repeat_gap = 3;
  Script({config::ScriptReply{"", {Text("FORBIDDEN_TOKEN again")}}});
  auto s = Open();
  // Prompt 1: fires at turn count 0; the aborted turn and its retry make the count 2.
  ASSERT_TRUE(Run(*s, "one").ok());
  EXPECT_EQ(Triggered().size(), 1u);
  // Prompt 2: 2 - 0 < 3, no firing; its turn makes 3.
  ASSERT_TRUE(Run(*s, "two").ok());
  EXPECT_EQ(Triggered().size(), 1u);
  // Prompt 3: 3 - 0 >= 3, it fires again.
  ASSERT_TRUE(Run(*s, "three").ok());
  EXPECT_EQ(Triggered().size(), 2u);
}

TEST_F(TtsrSessionTest, AResumedSessionRemembersInjectedRules) {
  AddRule("no-forbidden", kRule);
  Script({config::ScriptReply{"", {Text("FORBIDDEN_TOKEN again")}}});
  auto first = Open();
  ASSERT_TRUE(Run(*first, "one").ok());
  ASSERT_EQ(Triggered().size(), 1u);
  first->WaitIdle();
  std::vector<Entry> stored = first->transcript().Entries();

  // Resumed from the stored entries: the rule stays injected.
  auto resumed = Open(stored);
  ASSERT_TRUE(Run(*resumed, "two").ok());
  EXPECT_EQ(Triggered().size(), 1u);
  EXPECT_EQ(resumed->transcript().Messages().back().TextContent(), "FORBIDDEN_TOKEN again");

  // The same history without the ttsr_injection entry: the rule fires again (the entry is what
  // carries it; the hidden message alone does not).
  std::vector<Entry> without;
  std::string dropped_id;
  for (auto e : stored) {
    if (e.kind == EntryKind::kTtsrInjection) {
      dropped_id = e.id;
      continue;
    }
    if (e.parent_id == dropped_id) e.parent_id = without.empty() ? "" : without.back().id;
    without.push_back(std::move(e));
  }
  ASSERT_FALSE(dropped_id.empty());
  auto fresh = Open(without);
  ASSERT_TRUE(Run(*fresh, "three").ok());
  EXPECT_EQ(Triggered().size(), 2u);
}

TEST_F(TtsrSessionTest, ToolArgumentRuleStopsTheCallBeforeItRuns) {
  AddRule("no-danger",
          "---\ncondition: DANGER_ARG\nscope: tool\n---\nNever pass DANGER_ARG to a tool.\n");
  Json::Value args(Json::objectValue);
  args["command"] = "echo DANGER_ARG now";
  Script({config::ScriptReply{"system-interrupt", {Text("I will not.")}},
          config::ScriptReply{"", {Call("bash", args)}}});
  auto s = Open();
  auto r = Run(*s, "run it");
  ASSERT_TRUE(r.ok());
  auto trig = Triggered();
  ASSERT_EQ(trig.size(), 1u);
  EXPECT_EQ(trig[0].source, "tool");
  EXPECT_FALSE(trig[0].tool_call_id.empty());
  EXPECT_TRUE(tools_run_.empty());  // the bash call never started
  auto ends = Ends();
  ASSERT_GE(ends.size(), 2u);
  EXPECT_TRUE(ends[1].content.empty());  // the partial tool call is dropped
  EXPECT_EQ(ends[1].error_message(), "TTSR matched rule: no-danger");
  EXPECT_EQ(s->transcript().Messages().back().TextContent(), "I will not.");
}

TEST_F(TtsrSessionTest, NonInterruptingToolRuleRemindsInTheResult) {
  AddRule("no-danger",
          "---\ncondition: DANGER_ARG\nscope: tool:bash\ninterruptMode: never\n---\n"
          "Never pass DANGER_ARG.\n");
  Json::Value args(Json::objectValue);
  args["command"] = "echo DANGER_ARG";
  Script({config::ScriptReply{"", {Call("bash", args), Text("done")}}});
  auto s = Open();
  ASSERT_TRUE(Run(*s, "run it").ok());
  auto trig = Triggered();
  ASSERT_EQ(trig.size(), 1u);
  EXPECT_FALSE(trig[0].interrupted);
  EXPECT_EQ(tools_run_, std::vector<std::string>{"bash"});
  const auto h = s->transcript().Messages();
  const Message* result = nullptr;
  for (const auto& m : h)
    if (m.role == Role::kToolResult) result = &m;
  ASSERT_NE(result, nullptr);
  ASSERT_GE(result->content.size(), 2u);
  EXPECT_EQ(result->content[0].text.rfind(
                "<system-reminder reason=\"rule_violation\" rule=\"no-danger\" "
                "path=\".lousho/rules/no-danger.md\">\nUser-defined rule matched tool-call "
                "arguments.",
                0),
            0u)
      << result->content[0].text;
  EXPECT_NE(result->content[1].text.find("DANGER_ARG"), std::string::npos);  // the output
  EXPECT_EQ(Injections(*s).size(), 1u);
}

TEST_F(TtsrSessionTest, NonInterruptingProseRuleFollowsUpAfterTheMessage) {
  AddRule("no-forbidden", std::string(kRule).replace(4, 0, "interruptMode: never\n"));
  auto s = Open();
  ASSERT_TRUE(Run(*s, "say it").ok());
  EXPECT_TRUE(Triggered().empty());  // this path announces nothing
  auto h = s->transcript().Messages();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[1].TextContent(), "Sure: FORBIDDEN_TOKEN here");  // completed, not aborted
  EXPECT_EQ(h[2].custom_type, "ttsr-injection");
  EXPECT_EQ(h[2].TextContent(), kInjected);
  EXPECT_EQ(h[3].TextContent(), "Here is ALLOWED_TOKEN.");
  EXPECT_EQ(Injections(*s).size(), 1u);
}

TEST_F(TtsrSessionTest, DisabledRegistersNothing) {
  AddRule("no-forbidden", kRule);
  spec_.ttsr.enabled = false;
  auto s = Open();
  EXPECT_EQ(s->stream().rules(), nullptr);
  ASSERT_TRUE(Run(*s, "say it").ok());
  EXPECT_TRUE(Triggered().empty());
  EXPECT_EQ(s->transcript().Messages().back().TextContent(), "Sure: FORBIDDEN_TOKEN here");
}

TEST_F(TtsrSessionTest, ThinkingIsWatchedOnlyWhenAScopeSaysSo) {
  config::ScriptStep thinking = Text("the answer");
  thinking.thinking = "maybe FORBIDDEN_TOKEN";
  Script({config::ScriptReply{"system-interrupt", {Text("clean")}},
          config::ScriptReply{"", {thinking}}});
  AddRule("no-forbidden", kRule);
  auto s = Open();
  ASSERT_TRUE(Run(*s, "think").ok());
  EXPECT_TRUE(Triggered().empty());

  AddRule("no-forbidden", std::string(kRule).replace(4, 0, "scope: thinking\n"));
  auto t = Open();
  ASSERT_TRUE(Run(*t, "think").ok());
  ASSERT_EQ(Triggered().size(), 1u);
  EXPECT_EQ(Triggered()[0].source, "thinking");
  EXPECT_EQ(t->transcript().Messages().back().TextContent(), "clean");
}

TEST_F(TtsrSessionTest, ScopeGlobsGateOnTheCallsPaths) {
  AddRule("no-any", "---\ncondition: \": any\"\nscope: \"tool:write(*.ts)\"\n---\nNo any.\n");
  Json::Value ts(Json::objectValue);
  ts["path"] = "src/a.ts";
  ts["content"] = "let x: any = 1;\n";
  Json::Value py = ts;
  py["path"] = "src/a.py";
  Script({config::ScriptReply{"system-interrupt", {Text("typed")}},
          config::ScriptReply{"^py", {Call("write", py), Text("ok")}},
          config::ScriptReply{"^ts", {Call("write", ts), Text("ok")}}});
  auto s = Open();
  ASSERT_TRUE(Run(*s, "py").ok());
  EXPECT_TRUE(Triggered().empty());
  ASSERT_TRUE(Run(*s, "ts").ok());
  ASSERT_EQ(Triggered().size(), 1u);
  EXPECT_EQ(s->transcript().Messages().back().TextContent(), "typed");
  EXPECT_FALSE(fs::exists(dir_ / "src" / "a.ts"));
}

// A cancel between the interruption and the retry wins: no second request; the rule's message
// still joins the history (and its entry), so the next prompt's model knows the rule.
TEST_F(TtsrSessionTest, ACancelInThePauseEndsThePrompt) {
  AddRule("no-forbidden", kRule);
  cancel_on_trigger_ = true;
  auto s = Open();
  auto r = Run(*s, "say it");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kCancelled);
  EXPECT_EQ(provider_->requests().size(), 1u);
  auto h = s->transcript().Messages();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[1].custom_type, "ttsr-injection");
  EXPECT_EQ(Injections(*s).size(), 1u);
}

TEST_F(TtsrSessionTest, SessionsWithoutRulesRegisterNone) {
  auto s = Open();
  EXPECT_EQ(s->stream().rules(), nullptr);
  ASSERT_TRUE(Run(*s, "say it").ok());
  EXPECT_EQ(s->transcript().Messages().back().TextContent(), "Sure: FORBIDDEN_TOKEN here");
}

}  // namespace
}  // namespace lousho::agent
