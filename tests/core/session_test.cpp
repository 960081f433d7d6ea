// Tests of the session engine with the offline provider and a fake editor: event order, tool
// loop, permissions, limits, cancellation.
#include "agent/session.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>

#include "agent/outbox.h"
#include "agent/providers/script_provider.h"

namespace lousho::agent {
namespace {
namespace fs = std::filesystem;

// Answers permission requests from the session's worker thread while the test thread sets the
// answer and reads what was asked, so every field is behind a lock.
class FakeEditor : public PermissionPrompter {
 public:
  PermissionDecision RequestPermission(const std::string&, const PermissionRequest& req,
                                       const CancelToken& cancel) override {
    bool block = false;
    PermissionDecision answer = PermissionDecision::kAllowOnce;
    {
      std::lock_guard<std::mutex> lock(mu_);
      asked_.push_back(req.tool_name + ":" + req.title);
      block = block_until_cancel_;
      answer = answer_;
    }
    asked_cv_.notify_all();
    if (block) {
      while (!cancel.cancelled()) cancel.WaitFor(1000);
      return PermissionDecision::kCancelled;
    }
    return answer;
  }
  void SetAnswer(PermissionDecision answer) {
    std::lock_guard<std::mutex> lock(mu_);
    answer_ = answer;
  }
  // Every request then waits for cancellation instead of answering.
  void BlockUntilCancel() {
    std::lock_guard<std::mutex> lock(mu_);
    block_until_cancel_ = true;
  }
  std::vector<std::string> Asked() {
    std::lock_guard<std::mutex> lock(mu_);
    return asked_;
  }
  // Waits (bounded) until the session has asked at least once.
  bool WaitAsked() {
    std::unique_lock<std::mutex> lock(mu_);
    return asked_cv_.wait_for(lock, std::chrono::seconds(30), [&] { return !asked_.empty(); });
  }

 private:
  std::mutex mu_;
  std::condition_variable asked_cv_;
  PermissionDecision answer_ = PermissionDecision::kAllowOnce;
  bool block_until_cancel_ = false;
  std::vector<std::string> asked_;
};

config::ScriptStep Step(std::string text, std::vector<config::ScriptToolCall> calls = {}) {
  config::ScriptStep s;
  s.text = std::move(text);
  s.tool_calls = std::move(calls);
  s.chunk_size = 1000;
  return s;
}

config::ScriptToolCall Call(std::string name, Json::Value args) {
  config::ScriptToolCall c;
  c.name = std::move(name);
  c.arguments = std::move(args);
  return c;
}

Json::Value Args(const std::string& key, const std::string& value) {
  Json::Value v(Json::objectValue);
  v[key] = value;
  return v;
}

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lousho-session-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "notes.txt") << "alpha\nbeta\n";
  }
  void TearDown() override {
    if (session_) session_->WaitIdle();
    session_.reset();
    fs::remove_all(dir_);
  }
  void Make(std::vector<config::ScriptReply> replies, int max_steps = 5,
            const std::vector<std::string>& tools = {"read", "write", "bash", "ask", "todo"},
            std::vector<std::shared_ptr<Tool>> extra_tools = {}) {
    config::Script script;
    script.name = "t";
    script.replies = std::move(replies);
    auto agent = std::make_shared<AgentConfig>();
    agent->model.provider = std::make_shared<ScriptProvider>(script);
    agent->max_steps = max_steps;
    for (const auto& t : tools) agent->tools.push_back(MakeBuiltinTool(t));
    for (auto& t : extra_tools) agent->tools.push_back(std::move(t));
    SessionOptions o;
    o.id = "s1";
    o.cwd = dir_;
    o.services.permissions = &editor_;
    o.additional_roots = additional_roots_;
    o.sink = [this](const Event& e) {
      std::string d = Describe(e);
      if (d.empty()) return;
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(std::move(d));
    };
    o.watcher = watcher_;
    session_ = *Session::Create(agent, std::move(o));
  }
  // Boundary deltas (block start/end) are left out: these tests read the conversation.
  static std::string Describe(const Event& e) {
    struct V {
      std::string operator()(const event::AgentStart&) const { return "agent_start"; }
      std::string operator()(const event::AgentEnd&) const { return "agent_end"; }
      std::string operator()(const event::TurnStart&) const { return "turn_start"; }
      std::string operator()(const event::TurnEnd&) const { return "turn_end"; }
      std::string operator()(const event::MessageStart&) const { return "message_start"; }
      std::string operator()(const event::MessageUpdate& u) const {
        switch (u.delta->kind) {
          case DeltaKind::kTextStart:
          case DeltaKind::kTextEnd:
          case DeltaKind::kThinkingStart:
          case DeltaKind::kThinkingEnd:
            return "";
          default:
            return "delta:" + u.delta->text;
        }
      }
      std::string operator()(const event::MessageEnd&) const { return "message_end"; }
      std::string operator()(const event::ToolExecutionStart& t) const {
        return "tool_start:" + t.call->name;
      }
      std::string operator()(const event::ToolExecutionUpdate& u) const {
        if (u.phase == event::ToolExecutionUpdate::Phase::kPartialOutput)
          return "tool_output:" + u.output_delta;
        return "tool_update";
      }
      std::string operator()(const event::ToolExecutionEnd& t) const {
        return std::string("tool_end:") + (t.is_error ? "failed" : "ok");
      }
      std::string operator()(const event::AutoRetryStart&) const { return "retry"; }
      std::string operator()(const event::AutoRetryEnd&) const { return "retry"; }
      std::string operator()(const event::PlanUpdate& p) const {
        return "plan:" + std::to_string(p.plan.size());
      }
      std::string operator()(const event::ModeChanged& m) const { return "mode:" + m.mode_id; }
      std::string operator()(const event::UsageUpdate&) const { return "usage"; }
      std::string operator()(const event::TtsrTriggered&) const { return "ttsr"; }
      std::string operator()(const event::AutoCompactionStart& c) const {
        return "compaction_start:" + c.reason;
      }
      std::string operator()(const event::AutoCompactionEnd& c) const {
        return std::string("compaction_end:") + (c.aborted         ? "aborted"
                                                 : c.error.empty() ? "ok"
                                                                   : "failed");
      }
      std::string operator()(const event::ModelChanged& m) const {
        return "model:" + m.provider + "/" + m.model_id + ":" + m.thinking;
      }
      std::string operator()(const event::TodoReminder&) const { return "todo_reminder"; }
      std::string operator()(const event::TodoAutoClear&) const { return "todo_auto_clear"; }
      std::string operator()(const event::CompactionSummaryDelta&) const { return ""; }
      std::string operator()(const event::SessionInfoChanged& e) const { return "name:" + e.name; }
      std::string operator()(const event::Warning& e) const { return "warning:" + e.source; }
    };
    return std::visit(V{}, e);
  }
  Result<TurnResult> Run(const std::string& text) {
    auto f = Start(text);
    if (!f.valid()) return MakeError(ErrorCode::kSessionBusy, "not started");
    return f.get();
  }
  // Starts a prompt and returns its result to come; an invalid future when it did not start.
  std::future<Result<TurnResult>> Start(const std::string& text) {
    auto p = std::make_shared<std::promise<Result<TurnResult>>>();
    auto f = p->get_future();
    Status st = session_->Prompt({ContentBlock::Text(text)},
                                 [p](Result<TurnResult> r) { p->set_value(std::move(r)); });
    if (!st.ok()) return {};
    return f;
  }
  std::vector<std::string> Events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }

  fs::path dir_;
  FakeEditor editor_;
  std::vector<fs::path> additional_roots_;
  std::shared_ptr<Session> session_;
  StreamWatcher watcher_;
  std::mutex mu_;
  std::vector<std::string> events_;
};

TEST_F(SessionTest, TextTurnEmitsEventsInOrder) {
  Make({config::ScriptReply{"", {Step("hello")}}});
  auto r = Run("hi");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kEndTurn);
  // The first prompt names the session (name:hi) right after the user's message.
  EXPECT_EQ(Events(),
            (std::vector<std::string>{"agent_start", "message_start", "message_end", "name:hi",
                                      "turn_start", "message_start", "delta:hello", "usage",
                                      "message_end", "turn_end", "agent_end"}));
  auto h = session_->transcript().Messages();
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].TextContent(), "hi");
  EXPECT_EQ(h[1].TextContent(), "hello");
}

TEST_F(SessionTest, ToolLoopRunsToolAndFeedsResultBack) {
  Make({config::ScriptReply{"",
                            {Step("", {Call("read", Args("path", "notes.txt"))}), Step("done")}}});
  auto r = Run("read");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kEndTurn);
  auto h = session_->transcript().Messages();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[2].role, Role::kToolResult);
  EXPECT_FALSE(h[2].is_error);
  EXPECT_NE(h[2].TextContent().find("alpha"), std::string::npos);
  EXPECT_TRUE(editor_.Asked().empty());  // read-only tools are not asked for
}

TEST_F(SessionTest, MaxStepsEndsWithMaxTurnRequests) {
  config::ScriptStep ls = Step("", {Call("read", Args("path", "notes.txt"))});
  Make({config::ScriptReply{"", {ls, ls, ls, ls}}}, 2);
  auto r = Run("loop");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kMaxTurnRequests);
}

TEST_F(SessionTest, RejectedWriteFailsAndModelCarriesOn) {
  Json::Value args = Args("path", "x.txt");
  args["content"] = "data";
  Make({config::ScriptReply{"", {Step("", {Call("write", args)}), Step("ok")}}});
  editor_.SetAnswer(PermissionDecision::kRejectOnce);
  auto r = Run("write");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kEndTurn);
  EXPECT_FALSE(fs::exists(dir_ / "x.txt"));
  ASSERT_EQ(editor_.Asked().size(), 1u);
  auto h = session_->transcript().Messages();
  EXPECT_TRUE(h[2].is_error);
  EXPECT_EQ(h[3].TextContent(), "ok");
}

TEST_F(SessionTest, AllowAlwaysIsRememberedForTheSession) {
  Json::Value args = Args("command", "echo one");
  Make({config::ScriptReply{"", {Step("", {Call("bash", args)}), Step("ran")}}});
  editor_.SetAnswer(PermissionDecision::kAllowAlways);
  ASSERT_TRUE(Run("a").ok());
  editor_.SetAnswer(PermissionDecision::kRejectOnce);  // would fail if asked again
  auto r = Run("b");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(editor_.Asked().size(), 1u);
  auto h = session_->transcript().Messages();
  EXPECT_FALSE(h[6].is_error) << h[6].TextContent();
}

TEST_F(SessionTest, CancelDuringPendingPermissionEndsCancelled) {
  Json::Value args = Args("command", "echo x");
  Make({config::ScriptReply{"", {Step("", {Call("bash", args)}), Step("never")}}});
  editor_.BlockUntilCancel();
  auto f = Start("x");
  ASSERT_TRUE(f.valid());
  ASSERT_TRUE(editor_.WaitAsked());
  session_->Cancel();
  auto r = f.get();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kCancelled);
  auto ev = Events();
  EXPECT_EQ(ev[ev.size() - 3], "tool_end:failed");
}

TEST_F(SessionTest, CancelKillsRunningCommand) {
  Make({config::ScriptReply{
      "", {Step("", {Call("bash", Args("command", "touch started; sleep 30"))}), Step("x")}}});
  auto f = Start("x");
  ASSERT_TRUE(f.valid());
  // Cancel once the command is really running: it marks that first.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(dir_ / "started") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(fs::exists(dir_ / "started"));
  session_->Cancel();
  // Generous bound: a missed cancel would wait for the 30 s sleep.
  ASSERT_EQ(f.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  auto r = f.get();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kCancelled);
}

// A running command's output reaches the sink while it runs, and all of it before its end.
TEST_F(SessionTest, CommandOutputComesWhileItRunsAndBeforeTheCallEnds) {
  Make({config::ScriptReply{
      "",
      {Step("", {Call("bash", Args("command",
                                   "echo one; while [ ! -e go ]; do sleep 0.01; done; echo two"))}),
       Step("done")}}});
  auto f = Start("x");
  ASSERT_TRUE(f.valid());
  // The command waits for `go`, which is made once its first output has been seen.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto seen_one = [&] {
    auto ev = Events();
    return std::find(ev.begin(), ev.end(), "tool_output:one\n") != ev.end();
  };
  while (!seen_one() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(seen_one());
  std::ofstream(dir_ / "go") << "";
  ASSERT_TRUE(f.get().ok());
  auto ev = Events();
  std::string output;
  size_t last_output = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev[i].rfind("tool_output:", 0) != 0) continue;
    output += ev[i].substr(12);
    last_output = i;
  }
  EXPECT_EQ(output, "one\ntwo\n");
  auto end = std::find(ev.begin(), ev.end(), "tool_end:ok");
  ASSERT_NE(end, ev.end());
  EXPECT_LT(last_output, static_cast<size_t>(end - ev.begin()));
}

TEST_F(SessionTest, SecondPromptWhileBusyIsRefused) {
  config::ScriptStep slow = Step("a b c");
  slow.chunk_size = 1;
  slow.delay_ms = 200;
  Make({config::ScriptReply{"", {slow}}});
  auto f = Start("x");
  ASSERT_TRUE(f.valid());
  Status second = session_->Prompt({ContentBlock::Text("y")}, [](const Result<TurnResult>&) {});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kSessionBusy);
  session_->Cancel();
  EXPECT_EQ(f.get()->stop, TurnStop::kCancelled);
}

TEST_F(SessionTest, ProviderErrorFailsTheTurnWithItsCode) {
  config::ScriptStep err;
  err.error_code = ErrorCode::kProviderRateLimited;
  err.error_message = "429";
  Make({config::ScriptReply{"", {err}}});
  auto r = Run("x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kProviderRateLimited);
  EXPECT_FALSE(session_->busy());
  // The failed stream's message_start still gets its message_end, and the prompt its agent_end.
  const auto events = Events();
  EXPECT_EQ(std::count(events.begin(), events.end(), "message_start"),
            std::count(events.begin(), events.end(), "message_end"));
  EXPECT_EQ(events.back(), "agent_end");
}

TEST_F(SessionTest, AskEndsTheTurnWithTheQuestion) {
  Json::Value args = Args("question", "Which?");
  args["options"].append("a");
  args["options"].append("b");
  Make({config::ScriptReply{"", {Step("", {Call("ask", args)}), Step("never")}}});
  auto r = Run("x");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kEndTurn);
  auto h = session_->transcript().Messages();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_NE(h[3].TextContent().find("Which?"), std::string::npos);
  EXPECT_NE(h[3].TextContent().find("1. a"), std::string::npos);
}

TEST_F(SessionTest, PlanModeRefusesEditsAndModeChangeIsAnEvent) {
  Json::Value args = Args("path", "x.txt");
  args["content"] = "data";
  Make({config::ScriptReply{"", {Step("", {Call("write", args)}), Step("ok")}}});
  ASSERT_TRUE(session_->selection().SetMode(PermissionMode::kPlan).ok());
  ASSERT_TRUE(Run("w").ok());
  EXPECT_FALSE(fs::exists(dir_ / "x.txt"));
  EXPECT_TRUE(editor_.Asked().empty());
  EXPECT_EQ(Events()[0], std::string("mode:") + PermissionModeId(PermissionMode::kPlan));
}

TEST_F(SessionTest, TodoPublishesThePlan) {
  Json::Value args(Json::objectValue);
  Json::Value item(Json::objectValue);
  item["content"] = "step";
  item["status"] = "pending";
  args["todos"].append(item);
  Make({config::ScriptReply{"", {Step("", {Call("todo", args)}), Step("ok")}}});
  ASSERT_TRUE(Run("p").ok());
  auto ev = Events();
  EXPECT_NE(std::find(ev.begin(), ev.end(), "plan:1"), ev.end());
}

TEST_F(SessionTest, MaxOutputStopAndRefusalMapToStops) {
  config::ScriptStep cut = Step("cut");
  cut.stop_reason = "max_tokens";
  config::ScriptStep no = Step("no");
  no.stop_reason = "refusal";
  Make({config::ScriptReply{"^cut", {cut}}, config::ScriptReply{"", {no}}});
  EXPECT_EQ(Run("cut")->stop, TurnStop::kMaxTokens);
  EXPECT_EQ(Run("other")->stop, TurnStop::kRefusal);
}

}  // namespace
}  // namespace lousho::agent

namespace lousho::agent {
namespace {

TEST_F(SessionTest, AgentLeavesPlanModeOnlyWithTheUsersConsent) {
  Json::Value args(Json::objectValue);
  args["mode"] = "accept-edits";
  Make({config::ScriptReply{"", {Step("", {Call("switch_mode", args)}), Step("ok")}}}, 5,
       {"switch_mode", "write"});
  ASSERT_TRUE(session_->selection().SetMode(PermissionMode::kPlan).ok());
  editor_.SetAnswer(PermissionDecision::kRejectOnce);
  ASSERT_TRUE(Run("go").ok());
  EXPECT_EQ(session_->selection().mode(), PermissionMode::kPlan);
  ASSERT_EQ(editor_.Asked().size(), 1u);
  EXPECT_EQ(editor_.Asked()[0], "switch_mode:Switch to accept-edits mode");
  editor_.SetAnswer(PermissionDecision::kAllowOnce);
  ASSERT_TRUE(Run("go").ok());
  EXPECT_EQ(session_->selection().mode(), PermissionMode::kAcceptEdits);
  auto ev = Events();
  EXPECT_NE(std::find(ev.begin(), ev.end(), "mode:accept-edits"), ev.end());
}

TEST_F(SessionTest, AgentCannotGrantItselfBypass) {
  Json::Value args(Json::objectValue);
  args["mode"] = "bypass";
  Make({config::ScriptReply{"", {Step("", {Call("switch_mode", args)}), Step("ok")}}}, 5,
       {"switch_mode"});
  ASSERT_TRUE(Run("go").ok());
  EXPECT_EQ(session_->selection().mode(), PermissionMode::kDefault);
  EXPECT_TRUE(session_->transcript().Messages()[2].is_error);
}

}  // namespace
}  // namespace lousho::agent

namespace lousho::agent {
namespace {

TEST_F(SessionTest, AdditionalDirectoriesAreRootsToo) {
  fs::path extra = dir_.string() + "-extra";
  fs::create_directories(extra);
  std::ofstream(extra / "lib.txt") << "shared\n";
  fs::path outside = dir_.string() + "-outside";
  fs::create_directories(outside);
  std::ofstream(outside / "secret.txt") << "no\n";
  additional_roots_ = {extra};
  Make({config::ScriptReply{
            "^in",
            {Step("", {Call("read", Args("path", (extra / "lib.txt").string()))}), Step("ok")}},
        config::ScriptReply{
            "",
            {Step("", {Call("read", Args("path", (outside / "secret.txt").string()))}),
             Step("ok")}}});
  ASSERT_TRUE(Run("in").ok());
  ASSERT_TRUE(Run("out").ok());
  auto h = session_->transcript().Messages();
  EXPECT_FALSE(h[2].is_error) << h[2].TextContent();
  EXPECT_NE(h[2].TextContent().find("shared"), std::string::npos);
  EXPECT_TRUE(h[6].is_error);
  EXPECT_NE(h[6].TextContent().find("outside"), std::string::npos) << h[6].TextContent();
  fs::remove_all(extra);
  fs::remove_all(outside);
}

}  // namespace
}  // namespace lousho::agent

namespace lousho::agent {
namespace {

// A look-up that finishes only once `peers` calls are inside Run at the same time: proof that
// they run in parallel (a sequential run fails them after the timeout instead of hanging).
class RendezvousTool : public Tool {
 public:
  explicit RendezvousTool(int peers) : peers_(peers) {}
  std::string name() const override { return "meet"; }
  std::string description() const override { return "test"; }
  Json::Value parameters() const override { return Json::Value(Json::objectValue); }
  ToolKind kind() const override { return ToolKind::kSearch; }
  bool read_only() const override { return true; }
  std::string Title(const Json::Value&, const ToolContext&) const override { return "meet"; }
  std::string PermissionSubject(const Json::Value&) const override { return ""; }
  ToolOutput Run(const Json::Value&, ToolContext&) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++arrived_;
    cv_.notify_all();
    bool met = cv_.wait_for(lock, std::chrono::seconds(5), [&] { return arrived_ >= peers_; });
    return met ? ToolOutput::Text("met") : ToolOutput::Error("ran alone");
  }

 private:
  int peers_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
};

TEST_F(SessionTest, ReadOnlyLookupsOfOneReplyRunInParallelAndReportInOrder) {
  Make({config::ScriptReply{"",
                            {Step("", {Call("meet", Json::Value(Json::objectValue)),
                                       Call("meet", Json::Value(Json::objectValue)),
                                       Call("meet", Json::Value(Json::objectValue))}),
                             Step("ok")}}},
       5, {}, {std::make_shared<RendezvousTool>(3)});
  ASSERT_TRUE(Run("go").ok());
  auto h = session_->transcript().Messages();
  ASSERT_EQ(h.size(), 6u);
  for (size_t i = 2; i < 5; ++i) {
    EXPECT_FALSE(h[i].is_error) << i << ": " << h[i].TextContent();
    EXPECT_EQ(h[i].tool_call_id, h[1].content[i - 2].id());  // results in the calls' order
  }
}

TEST_F(SessionTest, CancelledCallsGetExactlyOneResultEach) {
  Json::Value args = Args("command", "echo x");
  Make({config::ScriptReply{"", {Step("", {Call("bash", args), Call("bash", args)}), Step("no")}}});
  editor_.BlockUntilCancel();
  auto f = Start("x");
  ASSERT_TRUE(f.valid());
  ASSERT_TRUE(editor_.WaitAsked());
  session_->Cancel();
  EXPECT_EQ(f.get()->stop, TurnStop::kCancelled);
  auto h = session_->transcript().Messages();
  ASSERT_EQ(h.size(), 4u);  // user, assistant with two calls, one result per call
  EXPECT_EQ(h[2].tool_call_id, h[1].content[0].id());
  EXPECT_EQ(h[3].tool_call_id, h[1].content[1].id());
}

}  // namespace
}  // namespace lousho::agent

namespace lousho::agent {
namespace {

// A stream rule's interruption: the watcher stops the stream mid-message, the partial message is
// dropped, the injected hidden message joins the history, and the same prompt asks the model
// again, which answers; the delta that broke the rule never leaves the engine.
TEST_F(SessionTest, StreamInterruptContinuesTheTurn) {
  config::ScriptStep s = Step("this is forbidden text");
  s.chunk_size = 4;
  auto fired = std::make_shared<std::atomic<int>>(0);
  watcher_ = [fired](const StreamDelta& d, const Message&) -> std::optional<StreamInterrupt> {
    if (d.kind != DeltaKind::kText || d.text.find("forb") == std::string::npos || *fired > 0)
      return std::nullopt;
    ++*fired;
    StreamInterrupt i;
    i.cause = CancelCause::kStreamRule;
    Message note;
    note.role = Role::kUser;
    note.custom_type = "ttsr-injection";
    note.display = false;
    note.content.push_back(
        ContentBlock::Text("<system-interrupt>Do not say that.</system-interrupt>"));
    i.inject.push_back(std::move(note));
    return i;
  };
  Make({config::ScriptReply{"", {s}}});
  auto r = Run("go");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kEndTurn);
  EXPECT_EQ(fired->load(), 1);
  const auto events = Events();
  EXPECT_EQ(std::count(events.begin(), events.end(), "turn_start"), 2);
  // The first stream stopped before "forb": only "this" and " is " went out from it.
  auto first_forb = std::find(events.begin(), events.end(), "delta:forb");
  auto second_turn = std::find(std::find(events.begin(), events.end(), "turn_start") + 1,
                               events.end(), "turn_start");
  EXPECT_TRUE(first_forb > second_turn);
  auto h = session_->transcript().Messages();
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].TextContent(), "go");
  EXPECT_TRUE(h[1].is_custom());
  EXPECT_FALSE(h[1].display);
  EXPECT_EQ(h[1].role, Role::kUser);  // sent to the model as user text
  EXPECT_EQ(h[2].TextContent(), "this is forbidden text");
}

// A steering message from another thread stops the stream in flight and the turn goes on with
// it: the partial message is kept (as the interrupt asks), then the message, then a new answer.
TEST_F(SessionTest, SteeringInterruptKeepsThePartialAndGoesOn) {
  // Ten chunks 100 ms apart: the interrupt, sent after the first, lands well inside the stream.
  config::ScriptStep s = Step("abcdefghij");
  s.chunk_size = 1;
  s.delay_ms = 100;
  auto first = std::make_shared<std::promise<void>>();
  auto seen = std::make_shared<std::atomic<bool>>(false);
  watcher_ = [first, seen](const StreamDelta&, const Message&) -> std::optional<StreamInterrupt> {
    if (!seen->exchange(true)) first->set_value();
    return std::nullopt;
  };
  Make({config::ScriptReply{"", {s}}});
  auto f = Start("go");
  ASSERT_TRUE(f.valid());
  first->get_future().wait();
  StreamInterrupt steer;
  steer.cause = CancelCause::kSteering;
  steer.keep_partial = true;
  Message m;
  m.role = Role::kUser;
  m.content.push_back(ContentBlock::Text("steer"));
  steer.inject.push_back(m);
  session_->stream().Interrupt(steer);
  auto r = f.get();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kEndTurn);
  auto h = session_->transcript().Messages();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[1].role, Role::kAssistant);
  EXPECT_EQ(h[1].stop_reason, StopReason::kCancelled);
  EXPECT_LT(h[1].TextContent().size(), 10u);
  EXPECT_EQ(h[2].TextContent(), "steer");
  EXPECT_EQ(h[3].TextContent(), "abcdefghij");
}

// The user's cancel still ends the turn when a watcher is installed; a cancel's cause is kept.
TEST_F(SessionTest, UserCancelEndsTheTurnEvenWithAWatcher) {
  config::ScriptStep s = Step("slow words that never finish");
  s.chunk_size = 1;
  s.delay_ms = 50;
  watcher_ = [](const StreamDelta&, const Message&) { return std::optional<StreamInterrupt>(); };
  Make({config::ScriptReply{"", {s}}});
  auto f = Start("go");
  ASSERT_TRUE(f.valid());
  session_->Cancel(CancelCause::kUser);
  auto r = f.get();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kCancelled);
}

// The mode event of a mode change goes out on the session's worker, followed by `done`.
TEST_F(SessionTest, ModeChangeIsEmittedOnTheWorkerThenDone) {
  Make({config::ScriptReply{"", {Step("hello")}}});
  std::promise<void> done;
  ASSERT_TRUE(session_->selection().SetMode(PermissionMode::kPlan, [&] { done.set_value(); }).ok());
  done.get_future().wait();
  EXPECT_EQ(Events(), std::vector<std::string>{"mode:plan"});
  EXPECT_EQ(session_->selection().mode(), PermissionMode::kPlan);
}

// Close never waits: the running turn answers cancelled first, then the close's `done` runs.
TEST_F(SessionTest, CloseAnswersTheTurnFirstThenDone) {
  config::ScriptStep s = Step("slow");
  s.chunk_size = 1;
  s.delay_ms = 10000;
  Make({config::ScriptReply{"", {s}}});
  std::vector<std::string> order;
  std::mutex order_mu;
  std::promise<void> closed;
  Status st = session_->Prompt({ContentBlock::Text("x")}, [&](const Result<TurnResult>& r) {
    std::lock_guard<std::mutex> lock(order_mu);
    order.push_back(r.ok() && r->stop == TurnStop::kCancelled ? "cancelled" : "other");
  });
  ASSERT_TRUE(st.ok());
  session_->Close([&] {
    {
      std::lock_guard<std::mutex> lock(order_mu);
      order.push_back("closed");
    }
    closed.set_value();
  });
  closed.get_future().wait();
  std::lock_guard<std::mutex> lock(order_mu);
  EXPECT_EQ(order, (std::vector<std::string>{"cancelled", "closed"}));
  EXPECT_FALSE(session_->Prompt({ContentBlock::Text("y")}, [](const Result<TurnResult>&) {}).ok());
}

// Mode changes made while the worker is busy wait for it, up to a cap; past it they fail
// cleanly and change nothing. Once the turn ends they all go out, in order.
TEST_F(SessionTest, PendingModeChangesAreCapped) {
  Json::Value args = Args("command", "echo x");
  Make({config::ScriptReply{"", {Step("", {Call("bash", args)}), Step("never")}}});
  editor_.BlockUntilCancel();
  auto f = Start("x");
  ASSERT_TRUE(f.valid());
  ASSERT_TRUE(editor_.WaitAsked());
  size_t accepted = 0;
  for (size_t i = 0; i < NoticeBoard::kMaxPending + 10; ++i)
    if (session_->selection()
            .SetMode(i % 2 ? PermissionMode::kPlan : PermissionMode::kDefault)
            .ok())
      ++accepted;
  EXPECT_EQ(accepted, NoticeBoard::kMaxPending);
  session_->Cancel();
  ASSERT_TRUE(f.get().ok());
  session_->WaitIdle();
  const auto ev = Events();
  EXPECT_EQ(
      static_cast<size_t>(std::count_if(
          ev.begin(), ev.end(), [](const std::string& e) { return e.rfind("mode:", 0) == 0; })),
      NoticeBoard::kMaxPending);
}

// The prompt's new messages come with agent_end; a session's model and tools are its own.
TEST_F(SessionTest, SessionOwnsItsModelAndTools) {
  Make({config::ScriptReply{"", {Step("hello")}}}, 5, {"read"});
  ModelChoice m = session_->selection().model();
  m.thinking = ThinkingLevel::kHigh;
  ASSERT_TRUE(session_->selection().SetModel(m).ok());
  EXPECT_EQ(session_->selection().model().thinking, ThinkingLevel::kHigh);
  session_->tools().Add(MakeBuiltinTool("ls"));
  EXPECT_EQ(session_->tools().List().size(), 2u);
  session_->tools().Add(MakeBuiltinTool("ls"));  // same name: replaced
  EXPECT_EQ(session_->tools().List().size(), 2u);
  ASSERT_TRUE(Run("hi").ok());
  // The change is recorded before the prompt that follows it, and announced as an event.
  const auto entries = session_->transcript().Entries();
  ASSERT_EQ(entries.size(), 5u);  // model, thinking, the prompt, the session's name from it, answer
  EXPECT_EQ(entries[0].kind, EntryKind::kModelChange);
  EXPECT_EQ(entries[1].kind, EntryKind::kThinkingChange);
  EXPECT_EQ(entries[1].more->thinking_level, "high");
  EXPECT_EQ(entries[2].kind, EntryKind::kMessage);
  EXPECT_EQ(entries[3].kind, EntryKind::kSessionInfo);
  for (size_t i = 1; i < entries.size(); ++i)
    EXPECT_EQ(entries[i].parent_id, entries[i - 1].id) << i;
  EXPECT_EQ(session_->transcript().Leaf(), entries[4].id);
  EXPECT_EQ(entries[0].id.size(), 8u);
  EXPECT_EQ(Events()[0], "model:/:high");  // the test's model has no names
}

// A session continues from stored entries: the model sees them as its history.
TEST_F(SessionTest, SeededSessionContinuesTheStoredHistory) {
  config::Script script;
  script.name = "t";
  script.replies = {config::ScriptReply{"", {Step("You said: {{input}}")}}};
  auto agent = std::make_shared<AgentConfig>();
  agent->model.provider = std::make_shared<ScriptProvider>(script);
  Entry a;
  a.id = "aaaa0001";
  a.message.role = Role::kUser;
  a.message.content.push_back(ContentBlock::Text("first"));
  Entry b;
  b.id = "aaaa0002";
  b.parent_id = "aaaa0001";
  b.message.role = Role::kAssistant;
  b.message.content.push_back(ContentBlock::Text("ok"));
  SessionOptions o;
  o.id = "s2";
  o.cwd = dir_;
  o.seed = {a, b};
  auto s = Session::Create(agent, std::move(o));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->transcript().Messages().size(), 2u);
  std::promise<Result<TurnResult>> p;
  ASSERT_TRUE((*s)->Prompt({ContentBlock::Text("second")},
                           [&](Result<TurnResult> r) { p.set_value(std::move(r)); })
                  .ok());
  ASSERT_TRUE(p.get_future().get().ok());
  auto h = (*s)->transcript().Messages();
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[3].TextContent(), "You said: second");
  EXPECT_EQ((*s)->transcript().Entries()[2].parent_id, "aaaa0002");
  (*s)->WaitIdle();
  // A seed entry whose parent the file lacks (an entry an older lousho never wrote) is kept,
  // hung off the entry before it, and the repair is told; a duplicate id is still refused.
  SessionOptions repaired;
  repaired.id = "s3";
  repaired.cwd = dir_;
  Entry c = b;
  c.id = "aaaa0003";
  c.parent_id = "nope";
  repaired.seed = {a, c};
  auto r = Session::Create(agent, std::move(repaired));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->transcript().Messages().size(), 2u);
  ASSERT_EQ((*r)->info().load_warnings.size(), 1u);
  EXPECT_NE((*r)->info().load_warnings[0].find("nope"), std::string::npos);
  SessionOptions bad;
  bad.id = "s4";
  bad.cwd = dir_;
  bad.seed = {a, a};
  EXPECT_FALSE(Session::Create(agent, std::move(bad)).ok());
}

}  // namespace
}  // namespace lousho::agent
