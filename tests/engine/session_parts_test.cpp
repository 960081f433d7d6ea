// Tests of the session's state parts: the selection (mode, model, thinking), the todo tracker,
// branching and naming, and the transcript.
#include <gtest/gtest.h>

#include <functional>
#include <mutex>
#include <vector>

#include "agent/branching.h"
#include "agent/outbox.h"
#include "agent/recorder.h"
#include "agent/selection.h"
#include "agent/todo_tracker.h"
#include "agent/transcript.h"
#include "agent/turn_gate.h"

namespace lousho::agent {
namespace {

class NamedProvider : public Provider {
 public:
  Result<ModelResponse> Stream(const ModelRequest&, const DeltaCallback&, const CancelToken&,
                               const RetryHooks&) override {
    return MakeError(ErrorCode::kProviderUnavailable, "not for these tests");
  }
  bool SupportsImages() const override { return true; }
};

ModelChoice Choice(const std::string& provider, const std::string& model) {
  return ModelChoice{provider, model, std::make_shared<NamedProvider>(), ThinkingLevel::kOff};
}

std::shared_ptr<const AgentConfig> Agent() {
  auto agent = std::make_shared<AgentConfig>();
  agent->name = "t";
  agent->model = Choice("p", "m1");
  agent->models = {{"p", "m1", "M1"}, {"p", "m2", "M2"}};
  agent->resolve_model = [](const std::string& p, const std::string& m) -> Result<ModelChoice> {
    if (m == "broken") return MakeError(ErrorCode::kProviderAuth, "no key");
    return Choice(p, m);
  };
  return agent;
}

// The parts around one session mutex, with the worker played by the test: posted tasks run at
// once, and every notice is flushed by Emit (as the worker would).
struct Parts {
  std::mutex mu;
  Recorder recorder{mu, nullptr};
  TurnGate gate{mu};
  NoticeBoard notices{mu, recorder};
  std::vector<Event> events;
  std::shared_ptr<const AgentConfig> agent = Agent();
  Selection selection{mu, notices, agent, "s"};
  TodoTracker todos{mu, notices, recorder, "s"};
  Branching branching{mu, recorder, notices, gate};
  Transcript transcript{mu, recorder, branching, TranscriptOwner{"s", "", "/tmp", "t"}};
  Parts() {
    notices.Attach([] { return true; }, [](const std::function<void()>&) { return Status::Ok(); },
                   [this](const Event& e) { events.push_back(e); });
    recorder.OnAppend([this](const Entry& e) { branching.NoteLocked(e); });
    recorder.OnBranch([this](const std::vector<const Entry*>& branch) {
      selection.RestoreLocked(branch);
      todos.RestoreLocked(branch);
      branching.RestoreLocked(branch);
    });
  }
  std::vector<EntryKind> Kinds() {
    std::vector<EntryKind> kinds;
    for (const Entry& e : transcript.Entries()) kinds.push_back(e.kind);
    return kinds;
  }
  std::string AddUser(const std::string& text) {
    Message m;
    m.role = Role::kUser;
    m.content.push_back(ContentBlock::Text(text));
    recorder.AppendMessage(m);
    return transcript.Leaf();
  }
};

TEST(SelectionTest, ChangesTakeEffectAtOnceAndAreRecordedOnTheWorker) {
  Parts p;
  ASSERT_TRUE(p.selection.SetMode(PermissionMode::kPlan).ok());
  EXPECT_EQ(p.selection.mode(), PermissionMode::kPlan);
  EXPECT_TRUE(p.Kinds().empty());
  p.notices.Flush();
  EXPECT_EQ(p.Kinds(), std::vector<EntryKind>{EntryKind::kModeChange});
  ASSERT_TRUE(p.selection.SetMode(PermissionMode::kPlan).ok());
  p.notices.Flush();
  EXPECT_EQ(p.Kinds().size(), 1u) << "the same mode again records nothing";
  EXPECT_EQ(p.events.size(), 2u) << "but is told";
}

TEST(SelectionTest, SelectsOnlyOfferedModelsAndKeepsTheThinkingLevel) {
  Parts p;
  ASSERT_TRUE(p.selection.SetThinking(ThinkingLevel::kHigh).ok());
  ASSERT_TRUE(p.selection.SelectModel("p/m2").ok());
  EXPECT_EQ(p.selection.model().model_id, "m2");
  EXPECT_EQ(p.selection.model().thinking, ThinkingLevel::kHigh);
  EXPECT_TRUE(p.selection.SupportsImages());
  Status st = p.selection.SelectModel("p/other");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kModelUnknown);
  EXPECT_FALSE(p.selection.SetModel(ModelChoice{"p", "x", nullptr, ThinkingLevel::kOff}).ok());
}

TEST(SelectionTest, ABranchBringsBackItsModeAndModel) {
  Parts p;
  const std::string root = p.AddUser("first");
  ASSERT_TRUE(p.selection.SetMode(PermissionMode::kPlan).ok());
  ASSERT_TRUE(p.selection.SelectModel("p/m2").ok());
  p.notices.Flush();
  ASSERT_TRUE(p.branching.SetLeaf(root).ok());
  EXPECT_EQ(p.selection.mode(), PermissionMode::kDefault)
      << "the agent's, where the branch chose none";
  EXPECT_EQ(p.selection.model().model_id, "m1");
}

TEST(TodoTrackerTest, ThePlanBecomesTheTodoListAndIsRecorded) {
  Parts p;
  p.todos.plan()->push_back(PlanEntry{"write tests", "high", "in_progress"});
  p.todos.plan()->push_back(PlanEntry{"ship", "low", "pending"});
  const std::vector<PlanEntry>& plan = p.todos.RecordPlan();
  EXPECT_EQ(plan.size(), 2u);
  const auto phases = p.todos.phases();
  ASSERT_EQ(phases.size(), 1u);
  ASSERT_EQ(phases[0].tasks.size(), 2u);
  EXPECT_EQ(phases[0].tasks[1].id, "task-2");
  EXPECT_EQ(p.Kinds(), (std::vector<EntryKind>{EntryKind::kCustom, EntryKind::kCustom}));
  TodoTracker::AtEnd end = p.todos.CheckAtEnd(/*auto_clear=*/true);
  EXPECT_FALSE(end.cleared);
  EXPECT_EQ(end.open.size(), 2u);
  EXPECT_NE(TodoTracker::Reminder(end.open).TextContent().find("- [pending] ship"),
            std::string::npos);
}

TEST(TodoTrackerTest, AFinishedListIsClearedOnlyWhenAsked) {
  Parts p;
  TodoPhase phase{"p1", "Work", {TodoTask{"t1", "done thing", "completed", ""}}};
  p.todos.Set({phase});
  p.notices.Flush();
  EXPECT_FALSE(p.todos.CheckAtEnd(false).cleared);
  EXPECT_EQ(p.todos.phases().size(), 1u);
  EXPECT_TRUE(p.todos.CheckAtEnd(true).cleared);
  EXPECT_TRUE(p.todos.phases().empty());
  EXPECT_EQ(p.Kinds().size(), 2u) << "the set and the clearing are recorded";
}

TEST(TodoTrackerTest, ABranchBringsBackItsList) {
  Parts p;
  const std::string root = p.AddUser("first");
  p.todos.Set({TodoPhase{"p1", "Work", {TodoTask{"t1", "a", "pending", ""}}}});
  p.notices.Flush();
  const std::string with_todos = p.AddUser("second");
  p.todos.Set({});
  p.notices.Flush();
  EXPECT_TRUE(p.todos.phases().empty());
  ASSERT_TRUE(p.branching.SetLeaf(with_todos).ok());
  EXPECT_EQ(p.todos.phases().size(), 1u);
  ASSERT_TRUE(p.branching.SetLeaf(root).ok());
  EXPECT_TRUE(p.todos.phases().empty());
  EXPECT_EQ(TodoPhasesFromJson(TodoPhasesToJson({TodoPhase{"x", "X", {}}}))[0].name, "X");
}

TEST(BranchingTest, NamesAndBranchPointsAndRefusalsWhileRunning) {
  Parts p;
  EXPECT_FALSE(p.branching.SetName("  ").ok());
  ASSERT_TRUE(p.branching.SetName("work").ok());
  EXPECT_EQ(p.branching.Name(), "work") << "at once";
  p.notices.Flush();
  const std::string u1 = p.AddUser("first question");
  p.AddUser("second question");
  ASSERT_EQ(p.branching.UserMessages().size(), 2u);
  ASSERT_TRUE(p.gate.Begin().ok());
  EXPECT_EQ(p.branching.SetLeaf(u1).error().code, ErrorCode::kSessionBusy);
  EXPECT_EQ(p.branching.BranchFrom(u1).error().code, ErrorCode::kSessionBusy);
  p.gate.End();
  auto text = p.branching.BranchFrom(u1);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "first question");
  EXPECT_TRUE(p.branching.UserMessages().empty());
  EXPECT_EQ(p.branching.Name(), "work") << "a branch that names nothing keeps the name";
  EXPECT_FALSE(p.branching.BranchFrom("nope").ok());
  EXPECT_EQ(PromptGist("  fix   the\tbug  \nmore"), "fix the bug");
}

// A user question and its answer (10 + 5 tokens), the answer's usage counted for the session.
void AddExchange(Parts& p) {
  p.AddUser("q");
  Message a;
  a.role = Role::kAssistant;
  a.content.push_back(ContentBlock::Text("answer"));
  a.assistant.Edit().usage.input = 10;
  a.assistant.Edit().usage.output = 5;
  p.recorder.AppendMessage(a);
  p.transcript.AddUsage(a.usage());
}

TEST(TranscriptTest, StatsCountTheBranchAndTokensOfTheTree) {
  Parts p;
  AddExchange(p);
  SessionStats st = p.transcript.Stats();
  EXPECT_EQ(st.user_messages, 1);
  EXPECT_EQ(st.assistant_messages, 1);
  EXPECT_EQ(st.total_messages, 2);
  EXPECT_EQ(st.tokens.total(), 15);
  EXPECT_EQ(p.transcript.TotalUsage().total(), 15);
}

TEST(TranscriptTest, ReadsTheBranch) {
  Parts p;
  AddExchange(p);
  EXPECT_EQ(p.transcript.LastAssistantText(), "answer");
  EXPECT_EQ(p.transcript.Messages().size(), 2u);
  EXPECT_EQ(p.transcript.BranchEntries().size(), 2u);
  size_t seen = 0;
  p.transcript.VisitBranch([&](const std::vector<const Entry*>& b) { seen = b.size(); });
  EXPECT_EQ(seen, 2u);
}

}  // namespace
}  // namespace lousho::agent
