// Tests of compaction: the context a compaction leaves (History), where the cut falls, and the
// session running it with a scripted model (manual, automatic, overflow, cancel, failure), and
// model / thinking changes recorded in the history.
#include "agent/compaction.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <future>
#include <mutex>

#include "agent/session.h"

namespace lousho::agent {
namespace {
namespace fs = std::filesystem;

Message Msg(Role role, const std::string& text) {
  Message m;
  m.role = role;
  m.content.push_back(ContentBlock::Text(text));
  return m;
}

Entry MsgEntry(const std::string& id, const std::string& parent, Role role,
               const std::string& text) {
  Entry e;
  e.id = id;
  e.parent_id = parent;
  e.message = Msg(role, text);
  return e;
}

// --- History: the context after a compaction ---

TEST(CompactionHistoryTest, ContextIsSummaryThenKeptThenNewer) {
  History h;
  std::vector<Entry> seed = {
      MsgEntry("e1", "", Role::kUser, "one"),     MsgEntry("e2", "e1", Role::kAssistant, "1"),
      MsgEntry("e3", "e2", Role::kUser, "two"),   MsgEntry("e4", "e3", Role::kAssistant, "2"),
      MsgEntry("e5", "e4", Role::kUser, "three"), MsgEntry("e6", "e5", Role::kAssistant, "3"),
  };
  ASSERT_TRUE(h.Seed(seed).ok());
  EXPECT_EQ(h.messages().size(), 6u);
  EXPECT_EQ(h.context_start(), 0u);
  Entry c;
  c.kind = EntryKind::kCompaction;
  c.more.Edit().summary = "they counted to two";
  c.more.Edit().first_kept_id = "e5";
  h.Append(c);
  ASSERT_EQ(h.messages().size(), 3u);
  EXPECT_EQ(h.messages()[0].custom_type, kCompactionSummaryType);
  EXPECT_FALSE(h.messages()[0].display);
  EXPECT_NE(h.messages()[0].TextContent().find("they counted to two"), std::string::npos);
  EXPECT_EQ(h.messages()[1].TextContent(), "three");
  EXPECT_EQ((std::vector<std::string>{h.message_id(0), h.message_id(1), h.message_id(2)}),
            (std::vector<std::string>{"", "e5", "e6"}));
  EXPECT_EQ(h.context_start(), 3u);
  h.Append(MsgEntry("e7", "", Role::kUser, "four"));
  EXPECT_EQ(h.messages().size(), 4u);
  EXPECT_EQ(h.context_start(), 3u);
  // The whole tree stays; a reload of it gives the same context.
  EXPECT_EQ(h.entries().size(), 8u);
  History again;
  ASSERT_TRUE(again.Seed(h.entries().ToVector()).ok());
  ASSERT_EQ(again.messages().size(), 4u);
  EXPECT_EQ(again.messages()[0].TextContent(), h.messages()[0].TextContent());
  EXPECT_EQ(again.messages()[3].TextContent(), "four");
  // Branching back before the compaction brings the full history back.
  ASSERT_TRUE(again.SetLeaf("e6").ok());
  EXPECT_EQ(again.messages().size(), 6u);
}

TEST(CompactionPlanTest, KeepsRecentTurnsAndNeverStartsAtAToolResult) {
  History h;
  const std::string big(400, 'x');  // 100 tokens
  std::vector<Entry> seed = {MsgEntry("e1", "", Role::kUser, big),
                             MsgEntry("e2", "e1", Role::kAssistant, big)};
  Entry call = MsgEntry("e3", "e2", Role::kAssistant, "");
  call.message.content = {ContentBlock::ToolCall("c1", "read", Json::Value(Json::objectValue))};
  seed.push_back(call);
  Entry result = MsgEntry("e4", "e3", Role::kToolResult, big);
  result.message.tool_call_id = "c1";
  seed.push_back(result);
  seed.push_back(MsgEntry("e5", "e4", Role::kAssistant, "done"));
  ASSERT_TRUE(h.Seed(seed).ok());
  // 101 tokens reach past the tool result (100) and stop at its call, not at the result.
  auto plan = PlanCompaction(h, 101);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->first_kept_id, "e3");
  EXPECT_EQ(plan->to_summarize.size(), 2u);
  EXPECT_EQ(plan->kept_messages, 3u);
  // Everything recent: the last user turn is kept, the rest summarized.
  plan = PlanCompaction(h, 1'000'000);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->first_kept_id, "e5");  // no later user message: the last point a cut may take
  // A history of one message has nothing older to summarize.
  History one;
  ASSERT_TRUE(one.Seed({MsgEntry("e1", "", Role::kUser, "hi")}).ok());
  auto none = PlanCompaction(one, 10);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kCompaction);
}

TEST(CompactionPlanTest, ThresholdAndContextTokens) {
  CompactionSettings s;
  EXPECT_TRUE(ShouldCompact(s, 850, 1000));
  EXPECT_FALSE(ShouldCompact(s, 849, 1000));
  EXPECT_FALSE(ShouldCompact(s, 5000, 0));  // unknown window
  s.auto_compact = false;
  EXPECT_FALSE(ShouldCompact(s, 999, 1000));
  std::vector<Message> ctx = {Msg(Role::kUser, std::string(40, 'a')), Msg(Role::kAssistant, "ok"),
                              Msg(Role::kUser, std::string(8, 'b'))};
  ctx[1].assistant.Edit().usage.input = 500;
  ctx[1].assistant.Edit().usage.output = 20;
  EXPECT_EQ(ContextTokens(ctx, 0), 520 + 2);     // the report, then an estimate of what followed
  EXPECT_EQ(ContextTokens(ctx, 2), 10 + 1 + 2);  // a report from before a compaction is stale
}

TEST(CompactionPlanTest, SummaryPromptHoldsTheTranscript) {
  std::vector<Message> older = {Msg(Role::kUser, "fix the bug in parser.cpp")};
  Message call = Msg(Role::kAssistant, "Looking.");
  Json::Value args(Json::objectValue);
  args["path"] = "parser.cpp";
  call.content.push_back(ContentBlock::ToolCall("c1", "read", args));
  older.push_back(call);
  Message result = Msg(Role::kToolResult, std::string(5000, 'z'));
  result.tool_name = "read";
  older.push_back(result);
  Message p = SummaryPrompt(older, "keep the file names");
  const std::string text = p.TextContent();
  EXPECT_EQ(p.role, Role::kUser);
  EXPECT_NE(text.find("[User]\nfix the bug in parser.cpp"), std::string::npos);
  EXPECT_NE(text.find(R"((calls read {"path":"parser.cpp"}))"), std::string::npos);
  EXPECT_NE(text.find("[Result of read]"), std::string::npos);
  EXPECT_NE(text.find("more bytes]"), std::string::npos);  // the long result is cut
  EXPECT_LT(text.size(), 4000u);
  EXPECT_NE(text.find("keep the file names"), std::string::npos);
  EXPECT_FALSE(SummaryFromReply(Msg(Role::kAssistant, " \n")).ok());
  EXPECT_EQ(*SummaryFromReply(Msg(Role::kAssistant, "\n sum \n")), "sum");
}

// --- The session running compactions with a scripted model ---

// Answers each request with the next scripted reply, records every request, and can hold a
// request until it is cancelled.
class FakeModel : public Provider {
 public:
  struct Reply {
    std::string text;
    long long usage_input = 0;  // reported input tokens
    std::optional<Error> error;
    bool wait_for_cancel = false;
  };
  struct Seen {
    std::string system;
    std::vector<Message> messages;
    size_t tools = 0;
  };

  void Push(Reply r) {
    std::lock_guard<std::mutex> lock(mu_);
    replies_.push_back(std::move(r));
  }
  std::vector<Seen> Requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  bool WaitHolding() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(30), [&] { return holding_; });
  }
  void set_window(long long w) { window_ = w; }

  Result<ModelResponse> Stream(const ModelRequest& req, const DeltaCallback& on_delta,
                               const CancelToken& cancel, const RetryHooks&) override {
    Reply r;
    {
      std::lock_guard<std::mutex> lock(mu_);
      seen_.push_back(
          Seen{req.system, {req.messages.begin(), req.messages.end()}, req.tools.size()});
      if (!replies_.empty()) {
        r = replies_.front();
        replies_.pop_front();
      } else {
        r.text = "(no more replies)";
      }
      if (r.wait_for_cancel) holding_ = true;
    }
    cv_.notify_all();
    ModelResponse resp;
    resp.message.role = Role::kAssistant;
    if (r.wait_for_cancel) {
      while (!cancel.cancelled()) cancel.WaitFor(1000);
      resp.message.stop_reason = StopReason::kCancelled;
      return resp;
    }
    if (r.error) return *r.error;
    StreamDelta d;
    d.kind = DeltaKind::kText;
    d.text = r.text;
    on_delta(d);
    resp.message.content.push_back(ContentBlock::Text(r.text));
    resp.message.assistant.Edit().usage.input = r.usage_input;
    resp.message.assistant.Edit().usage.output = 1;
    return resp;
  }
  long long ContextWindow() const override { return window_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Reply> replies_;
  std::vector<Seen> seen_;
  bool holding_ = false;
  std::atomic<long long> window_{0};
};

FakeModel::Reply Says(std::string text, long long usage_input = 0) {
  FakeModel::Reply r;
  r.text = std::move(text);
  r.usage_input = usage_input;
  return r;
}

FakeModel::Reply Fails(ErrorCode code, std::string message) {
  FakeModel::Reply r;
  r.error = MakeError(code, std::move(message));
  return r;
}

class CompactionSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lousho-compaction-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    model_ = std::make_shared<FakeModel>();
  }
  void TearDown() override {
    if (session_) session_->WaitIdle();
    session_.reset();
    fs::remove_all(dir_);
  }
  // A session seeded with `turns` earlier exchanges of about 100 tokens each.
  void Make(int turns, CompactionSettings settings = {}, std::vector<Entry> extra = {}) {
    if (session_) session_->WaitIdle();
    auto agent = std::make_shared<AgentConfig>();
    agent->model.provider_name = "fake";
    agent->model.model_id = "m1";
    agent->model.provider = model_;
    agent->compaction = settings;
    agent->compaction.keep_recent_tokens = 150;
    agent->models = {{"fake", "m1", "M1"}, {"fake", "m2", "M2"}};
    agent->resolve_model = [this](const std::string& provider,
                                  const std::string& id) -> Result<ModelChoice> {
      if (id != "m1" && id != "m2") return MakeError(ErrorCode::kModelUnknown, "no " + id);
      ModelChoice c;
      c.provider_name = provider;
      c.model_id = id;
      c.provider = model_;
      return c;
    };
    SessionOptions o;
    o.id = "s";
    o.cwd = dir_;
    o.sink = [this](const Event& e) { Record(e); };
    std::string parent;
    for (int i = 0; i < turns; ++i) {
      const std::string n = std::to_string(i);
      o.seed.push_back(MsgEntry("u" + n, parent, Role::kUser, "question " + n + pad_));
      o.seed.push_back(MsgEntry("a" + n, "u" + n, Role::kAssistant, "answer " + n + pad_));
      parent = "a" + n;
    }
    for (Entry& e : extra) {
      e.parent_id = parent;
      parent = e.id;
      o.seed.push_back(std::move(e));
    }
    auto s = Session::Create(agent, std::move(o));
    ASSERT_TRUE(s.ok()) << s.error().message;
    session_ = *s;
  }
  void Record(const Event& e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (const auto* s = std::get_if<event::AutoCompactionStart>(&e)) {
      events_.push_back("start:" + s->reason);
      starts_.push_back(*s);
    } else if (const auto* end = std::get_if<event::AutoCompactionEnd>(&e)) {
      events_.push_back(std::string("end:") + (end->aborted         ? "aborted"
                                               : end->error.empty() ? "ok"
                                                                    : "failed"));
      ends_.push_back(*end);
    } else if (const auto* m = std::get_if<event::ModelChanged>(&e)) {
      events_.push_back("model:" + m->provider + "/" + m->model_id + ":" + m->thinking);
    } else if (const auto* u = std::get_if<event::MessageUpdate>(&e)) {
      if (u->delta->kind == DeltaKind::kText) events_.push_back("text:" + u->delta->text);
    }
  }
  std::vector<std::string> Events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  Result<TurnResult> Run(const std::string& text) {
    std::promise<Result<TurnResult>> p;
    auto f = p.get_future();
    Status st = session_->Prompt({ContentBlock::Text(text)},
                                 [&p](Result<TurnResult> r) { p.set_value(std::move(r)); });
    if (!st.ok()) return st.error();
    return f.get();
  }
  Result<CompactionResult> Compact(const std::string& instructions) {
    std::promise<Result<CompactionResult>> p;
    auto f = p.get_future();
    Status st = session_->compaction().Compact(
        instructions, [&p](Result<CompactionResult> r) { p.set_value(std::move(r)); });
    if (!st.ok()) return st.error();
    return f.get();
  }
  static std::vector<std::string> Texts(const std::vector<Message>& ms) {
    std::vector<std::string> out;
    out.reserve(ms.size());
    for (const auto& m : ms) out.push_back(m.TextContent().substr(0, 12));
    return out;
  }

  const std::string pad_ = std::string(360, '.');  // ~100 tokens a message with its words
  fs::path dir_;
  std::shared_ptr<FakeModel> model_;
  std::shared_ptr<Session> session_;
  std::mutex mu_;
  std::vector<std::string> events_;
  std::vector<event::AutoCompactionStart> starts_;
  std::vector<event::AutoCompactionEnd> ends_;
};

TEST_F(CompactionSessionTest, ManualCompactionSummarizesOlderTurnsAndKeepsRecentOnes) {
  Make(4);
  model_->Push(Says("SUMMARY: four questions were asked"));
  auto r = Compact("mention the questions");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->summary, "SUMMARY: four questions were asked");
  EXPECT_EQ(r->first_kept_id, "u3");  // 150 tokens: the last question and its answer
  EXPECT_GT(r->tokens_before, r->tokens_after);
  EXPECT_EQ(Events(), (std::vector<std::string>{"start:manual", "end:ok"}));
  ASSERT_EQ(ends_.size(), 1u);
  EXPECT_EQ(ends_[0].summary, r->summary);
  EXPECT_EQ(ends_[0].tokens_before, r->tokens_before);
  EXPECT_EQ(ends_[0].tokens_after, r->tokens_after);
  EXPECT_EQ(ends_[0].id, starts_[0].id);

  // The summary request: the summarizer's instructions, the older part as one transcript, no
  // tools.
  auto reqs = model_->Requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].system, SummarySystemPrompt());
  EXPECT_EQ(reqs[0].tools, 0u);
  ASSERT_EQ(reqs[0].messages.size(), 1u);
  const std::string transcript = reqs[0].messages[0].TextContent();
  EXPECT_NE(transcript.find("question 0"), std::string::npos);
  EXPECT_NE(transcript.find("answer 2"), std::string::npos);
  EXPECT_EQ(transcript.find("question 3"), std::string::npos);  // kept, not summarized
  EXPECT_NE(transcript.find("mention the questions"), std::string::npos);

  // The compaction entry is in the tree; the next request sends summary + kept + new.
  const auto entries = session_->transcript().Entries();
  EXPECT_EQ(entries.back().kind, EntryKind::kCompaction);
  EXPECT_EQ(entries.back().more->first_kept_id, "u3");
  EXPECT_EQ(entries.size(), 9u);
  model_->Push(Says("five"));
  ASSERT_TRUE(Run("question 4").ok());
  reqs = model_->Requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(Texts(reqs[1].messages), (std::vector<std::string>{"The earlier ", "question 3..",
                                                               "answer 3....", "question 4"}));
  EXPECT_NE(reqs[1].messages[0].TextContent().find("SUMMARY: four questions"), std::string::npos);
}

TEST_F(CompactionSessionTest, CompactCommandRunsInAPromptAndAddsNoUserMessage) {
  Make(4);
  model_->Push(Says("SUMMARY"));
  auto r = Run("/compact  be brief ");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stop, TurnStop::kEndTurn);
  EXPECT_EQ(Events(), (std::vector<std::string>{"start:manual", "end:ok"}));
  EXPECT_NE(model_->Requests()[0].messages[0].TextContent().find("be brief"), std::string::npos);
  const auto entries = session_->transcript().Entries();
  ASSERT_EQ(entries.size(), 9u);
  EXPECT_EQ(entries.back().kind, EntryKind::kCompaction);
}

TEST_F(CompactionSessionTest, FailureLeavesTheHistoryUntouched) {
  Make(4);
  const auto before = session_->transcript().Entries();
  const auto context = session_->transcript().Messages();
  model_->Push(Fails(ErrorCode::kProviderUnavailable, "HTTP 503: down"));
  auto r = Compact("");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kProviderUnavailable);
  EXPECT_EQ(Events(), (std::vector<std::string>{"start:manual", "end:failed"}));
  EXPECT_EQ(ends_[0].error, "HTTP 503: down");
  EXPECT_EQ(session_->transcript().Entries().size(), before.size());
  EXPECT_EQ(Texts(session_->transcript().Messages()), Texts(context));
  // An empty summary is a failure too.
  model_->Push(Says("   "));
  r = Compact("");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCompaction);
  EXPECT_EQ(session_->transcript().Entries().size(), before.size());
  // So is a history with nothing older than the recent part.
  Make(0);
  r = Compact("");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCompaction);
}

TEST_F(CompactionSessionTest, CancelAbortsTheCompaction) {
  Make(4);
  const size_t before = session_->transcript().Entries().size();
  FakeModel::Reply hold;
  hold.wait_for_cancel = true;
  model_->Push(hold);
  std::promise<Result<CompactionResult>> p;
  auto f = p.get_future();
  ASSERT_TRUE(session_->compaction()
                  .Compact("", [&p](Result<CompactionResult> r) { p.set_value(std::move(r)); })
                  .ok());
  ASSERT_TRUE(model_->WaitHolding());
  // A prompt cannot start while it runs.
  EXPECT_EQ(
      session_->Prompt({ContentBlock::Text("x")}, [](const Result<TurnResult>&) {}).error().code,
      ErrorCode::kSessionBusy);
  session_->Cancel();
  auto r = f.get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(Events(), (std::vector<std::string>{"start:manual", "end:aborted"}));
  EXPECT_TRUE(ends_[0].aborted);
  EXPECT_EQ(session_->transcript().Entries().size(), before);
}

TEST_F(CompactionSessionTest, ThresholdCompactsBeforeTheRequest) {
  Make(4);
  model_->set_window(1000);
  // The first reply reports 900 tokens of context: the next request first compacts.
  model_->Push(Says("first", 900));
  ASSERT_TRUE(Run("question 4").ok());
  EXPECT_TRUE(Events().size() == 1u);  // just the reply's text
  model_->Push(Says("SUMMARY"));
  model_->Push(Says("second"));
  auto r = Run("question 5");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Events(),
            (std::vector<std::string>{"text:first", "start:threshold", "end:ok", "text:second"}));
  EXPECT_EQ(starts_[0].tokens_before, 901 + 3);  // the report, and the new question's estimate
  auto reqs = model_->Requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[1].system, SummarySystemPrompt());
  EXPECT_EQ(Texts(reqs[2].messages).front(), "The earlier ");
  EXPECT_EQ(Texts(reqs[2].messages).back(), "question 5");
  // The kept part's old usage does not count again: no second compaction.
  model_->Push(Says("third"));
  ASSERT_TRUE(Run("question 6").ok());
  EXPECT_EQ(model_->Requests().size(), 4u);
}

TEST_F(CompactionSessionTest, AutoCompactionCanBeTurnedOff) {
  CompactionSettings off;
  off.auto_compact = false;
  Make(4, off);
  EXPECT_FALSE(session_->compaction().auto_enabled());
  model_->set_window(1000);
  model_->Push(Says("first", 900));
  model_->Push(Says("second", 950));
  ASSERT_TRUE(Run("q").ok());
  ASSERT_TRUE(Run("q").ok());
  EXPECT_EQ(model_->Requests().size(), 2u);
  session_->compaction().SetAuto(true);
  model_->Push(Says("SUMMARY"));
  model_->Push(Says("third"));
  ASSERT_TRUE(Run("q").ok());
  EXPECT_EQ(model_->Requests().size(), 4u);
  EXPECT_EQ(Events()[2], "start:threshold");
}

TEST_F(CompactionSessionTest, OverflowCompactsOnceAndRetries) {
  Make(4);
  model_->Push(Fails(ErrorCode::kProviderContextOverflow, "HTTP 400: context_length_exceeded"));
  model_->Push(Says("SUMMARY"));
  model_->Push(Says("answer"));
  auto r = Run("question 4");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(Events(), (std::vector<std::string>{"start:overflow", "end:ok", "text:answer"}));
  EXPECT_TRUE(ends_[0].will_retry);
  auto reqs = model_->Requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].messages.size(), 9u);  // everything: refused
  EXPECT_EQ(Texts(reqs[2].messages).front(), "The earlier ");
  EXPECT_EQ(Texts(reqs[2].messages).back(), "question 4");
  EXPECT_LT(reqs[2].messages.size(), reqs[0].messages.size());
  const auto h = session_->transcript().Messages();
  EXPECT_EQ(h.back().TextContent(), "answer");

  // Still too long after one compaction: the error ends the prompt (no loop).
  model_->Push(Fails(ErrorCode::kProviderContextOverflow, "too long"));
  model_->Push(Says("SUMMARY 2"));
  model_->Push(Fails(ErrorCode::kProviderContextOverflow, "still too long"));
  r = Run("question 5" + pad_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kProviderContextOverflow);
  EXPECT_EQ(r.error().message, "still too long");
  EXPECT_EQ(model_->Requests().size(), 6u);
}

TEST_F(CompactionSessionTest, OverflowWithAFailedCompactionReturnsTheOverflow) {
  Make(4);
  const size_t before = session_->transcript().Entries().size();
  model_->Push(Fails(ErrorCode::kProviderContextOverflow, "too long"));
  model_->Push(Fails(ErrorCode::kProviderUnavailable, "down"));
  auto r = Run("question 4");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kProviderContextOverflow);
  EXPECT_EQ(Events(), (std::vector<std::string>{"start:overflow", "end:failed"}));
  // The question, and the session's name taken from it; nothing of the failed compaction.
  EXPECT_EQ(session_->transcript().Entries().size(), before + 2);
}

// --- Model and thinking level ---

TEST_F(CompactionSessionTest, ModelAndThinkingChangesAreRecordedAndRestored) {
  Make(1);
  ASSERT_TRUE(session_->selection().SelectModel("fake/m2").ok());
  ASSERT_TRUE(session_->selection().SetThinking(ThinkingLevel::kHigh).ok());
  EXPECT_EQ(session_->selection().SelectModel("fake/m3").error().code, ErrorCode::kModelUnknown);
  EXPECT_EQ(session_->selection().SelectModel("other/m1").error().code, ErrorCode::kModelUnknown);
  session_->WaitIdle();
  EXPECT_EQ(Events(), (std::vector<std::string>{"model:fake/m2:off", "model:fake/m2:high"}));
  auto entries = session_->transcript().Entries();
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[2].kind, EntryKind::kModelChange);
  EXPECT_EQ(entries[2].more->model_id, "m2");
  EXPECT_EQ(entries[3].kind, EntryKind::kThinkingChange);
  EXPECT_EQ(entries[3].more->thinking_level, "high");

  // A session made from these entries continues with that choice.
  Make(0, {}, entries);
  EXPECT_EQ(session_->selection().model().model_id, "m2");
  EXPECT_EQ(session_->selection().model().thinking, ThinkingLevel::kHigh);
}

TEST_F(CompactionSessionTest, ModelCommandSwitchesAndAnswersWithoutTouchingTheConversation) {
  Make(1);
  ASSERT_TRUE(Run("/model fake/m2").ok());
  EXPECT_EQ(session_->selection().model().model_id, "m2");
  ASSERT_TRUE(Run("/model nope/x").ok());
  ASSERT_TRUE(Run("/model").ok());
  const auto ev = Events();
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0], "model:fake/m2:off");
  EXPECT_EQ(ev[1], "text:Model: fake/m2");
  EXPECT_EQ(ev[2].rfind("text:model 'nope/x' is not offered", 0), 0u) << ev[2];
  EXPECT_NE(ev[3].find("Current model: fake/m2"), std::string::npos);
  EXPECT_NE(ev[3].find("- fake/m1"), std::string::npos);
  EXPECT_EQ(session_->transcript().Messages().size(), 2u);  // the commands are not conversation
  EXPECT_TRUE(model_->Requests().empty());
}

}  // namespace
}  // namespace lousho::agent
