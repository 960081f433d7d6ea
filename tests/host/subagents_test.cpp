// Tests of subagents: the task tool running child sessions with the offline model. Two calls of
// one message run side by side (each child waits for the other), their answers are the tool
// results, their steps reach the parent's sink, their histories are saved in files of their own
// linked from the parent's, a child asks the parent's editor naming itself, the parent's cancel
// ends both children, the depth limit holds, and agent files are read.
#include "host/subagents.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "agent/providers/script_provider.h"
#include "agent/session_store.h"
#include "host/session_host.h"
#include "support/json_util.h"

namespace lousho::host {
namespace {
namespace fs = std::filesystem;
using agent::Event;
using agent::PermissionDecision;
using agent::PermissionRequest;
using agent::Tool;
using agent::ToolContext;
using agent::ToolOutput;

constexpr auto kBound = std::chrono::seconds(30);  // no test waits this long unless it fails

// Counts arrivals; each caller waits (bounded) until `expected` have arrived, or for its cancel.
class Meeting {
 public:
  explicit Meeting(int expected) : expected_(expected) {}
  bool Arrive() {
    std::unique_lock<std::mutex> lock(mu_);
    ++arrived_;
    cv_.notify_all();
    return cv_.wait_for(lock, kBound, [&] { return arrived_ >= expected_; });
  }
  bool WaitAll() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kBound, [&] { return arrived_ >= expected_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  const int expected_;
};

// `meet`: returns "met" once two calls are in it at once ("alone" after the bound). `hold`:
// arrives, then returns only when its call is cancelled.
class TestTool : public Tool {
 public:
  TestTool(std::string name, Meeting* meeting) : name_(std::move(name)), meeting_(meeting) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "test"; }
  Json::Value parameters() const override {
    Json::Value p(Json::objectValue);
    p["type"] = "object";
    p["properties"] = Json::Value(Json::objectValue);
    return p;
  }
  agent::ToolKind kind() const override { return agent::ToolKind::kRead; }
  bool read_only() const override { return true; }
  std::string Title(const Json::Value&, const ToolContext&) const override { return name_ + "!"; }
  std::string PermissionSubject(const Json::Value&) const override { return ""; }
  ToolOutput Run(const Json::Value&, ToolContext& ctx) override {
    if (name_ == "meet") return ToolOutput::Text(meeting_->Arrive() ? "met" : "alone");
    meeting_->Arrive();
    for (int i = 0; i < 60 && !ctx.cancel.cancelled(); ++i) ctx.cancel.WaitFor(1000);
    return ToolOutput::Text("held");
  }

 private:
  std::string name_;
  Meeting* meeting_;
};

class Editor : public agent::PermissionPrompter {
 public:
  PermissionDecision RequestPermission(const std::string& session_id, const PermissionRequest& req,
                                       const CancelToken&) override {
    std::lock_guard<std::mutex> lock(mu_);
    asked.push_back(session_id + "|" + req.title + "|" + req.subagent + "|" +
                    req.parent_tool_call_id);
    return PermissionDecision::kAllowOnce;
  }
  std::mutex mu_;
  std::vector<std::string> asked;
};

config::ScriptStep Step(std::string text, std::vector<config::ScriptToolCall> calls = {}) {
  config::ScriptStep s;
  s.text = std::move(text);
  s.tool_calls = std::move(calls);
  s.chunk_size = 1000;
  return s;
}

config::ScriptToolCall Call(std::string id, std::string name, const char* args) {
  config::ScriptToolCall c;
  c.id = std::move(id);
  c.name = std::move(name);
  c.arguments = *ParseJson(args);
  return c;
}

class SubagentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lousho-subagents-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "work");
    spec_.agents.agents = {Agent("alpha"), Agent("beta")};
  }
  void TearDown() override {
    if (session_) session_->WaitIdle();
    session_.reset();
    fs::remove_all(dir_);
  }
  static config::SubagentSpec Agent(const std::string& name) {
    config::SubagentSpec a;
    a.name = name;
    a.description = name + " agent";
    a.instructions = "You are " + name + ".";
    a.source = "test";
    return a;
  }
  // The parent: its first reply makes `calls`, its second says "parent done". The children's
  // replies go by their prompt's first word.
  void Make(std::vector<config::ScriptToolCall> calls, Meeting* meeting) {
    config::Script script;
    script.name = "t";
    script.replies = {
        {"^go", {Step("", std::move(calls)), Step("parent done")}},
        {"^meet", {Step("", {Call("m", "meet", "{}")}), Step("answer to {{input}}")}},
        {"^hold", {Step("", {Call("h", "hold", "{}")}), Step("held on")}},
        {"^ask", {Step("", {Call("b", "bash", R"({"command":"true"})")}), Step("ran it")}},
        {"^nest", {Step("", {Call("n", "task", R"({"prompt":"meet"})")}), Step("nested")}},
    };
    auto a = std::make_shared<agent::AgentConfig>();
    a->name = "parent";
    a->model.provider = std::make_shared<agent::ScriptProvider>(script);
    a->max_steps = 5;
    for (const char* t : {"read", "bash", "task"}) a->tools.push_back(agent::MakeBuiltinTool(t));
    a->tools.push_back(std::make_shared<TestTool>("meet", meeting));
    a->tools.push_back(std::make_shared<TestTool>("hold", meeting));
    agent_ = a;
    agent::SessionOptions o;
    o.id = "p1";
    o.cwd = dir_ / "work";
    o.services.permissions = &editor_;
    o.sink = [this](const Event& e) { OnEvent(e); };
    agent::SessionStore store(dir_ / "sessions");
    auto s = CreateRecordedSession(agent_, std::move(o), store);
    ASSERT_TRUE(s.ok()) << s.error().message;
    session_ = *s;
    SubagentPlace place;
    place.agent = agent_;
    place.services.permissions = &editor_;
    AttachSubagents(*session_, &spec_, std::move(place));
  }
  void OnEvent(const Event& e) {
    const auto* u = std::get_if<agent::event::ToolExecutionUpdate>(&e);
    if (u == nullptr || u->subagent == nullptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    std::string calls;
    for (const auto& c : u->subagent->calls) calls += c.title + ":" + c.status + " ";
    steps_.push_back(u->call->id + "|" + u->subagent->agent + "|" + calls);
  }
  Result<agent::TurnResult> Run(const std::string& prompt,
                                const std::function<void()>& meanwhile = {}) {
    std::mutex mu;
    std::condition_variable cv;
    std::optional<Result<agent::TurnResult>> result;
    Status started =
        session_->Prompt({agent::ContentBlock::Text(prompt)}, [&](Result<agent::TurnResult> r) {
          std::lock_guard<std::mutex> lock(mu);
          result = std::move(r);
          cv.notify_all();
        });
    EXPECT_TRUE(started.ok());
    if (meanwhile) meanwhile();
    std::unique_lock<std::mutex> lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, kBound, [&] { return result.has_value(); }));
    return result.value_or(MakeError(ErrorCode::kCancelled, "no answer"));
  }
  // The parent's tool results, in order: "<id>:<text>".
  std::vector<std::string> Results() {
    std::vector<std::string> out;
    for (const auto& m : session_->transcript().Messages())
      if (m.role == agent::Role::kToolResult) out.push_back(m.tool_call_id + ":" + m.TextContent());
    return out;
  }
  Json::Value DetailsOf(const std::string& call_id) {
    for (const auto& m : session_->transcript().Messages())
      if (m.role == agent::Role::kToolResult && m.tool_call_id == call_id) return m.tool->details;
    return {};
  }

  fs::path dir_;
  config::AgentSpec spec_;
  std::shared_ptr<const agent::AgentConfig> agent_;
  std::shared_ptr<agent::Session> session_;
  Editor editor_;
  std::mutex mu_;
  std::vector<std::string> steps_;
};

TEST_F(SubagentsTest, TwoTasksRunSideBySideAndAnswer) {
  Meeting meeting(2);
  Make({Call("t1", "task", R"({"agent":"alpha","prompt":"meet one","description":"first"})"),
        Call("t2", "task", R"({"agent":"beta","prompt":"meet two"})")},
       &meeting);
  auto r = Run("go");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(Results(),
            (std::vector<std::string>{"t1:answer to meet one", "t2:answer to meet two"}));
  // Each child's own call met the other's: they ran at once.
  for (const char* id : {"t1", "t2"}) {
    Json::Value d = DetailsOf(id);
    EXPECT_EQ(d["toolCalls"].asInt(), 1) << id;
    const fs::path file = d["sessionFile"].asString();
    ASSERT_TRUE(fs::exists(file)) << id;
    EXPECT_EQ(file.parent_path().filename().string(),
              fs::path(session_->info().session_file).stem().string() + ".tasks");
    auto contents = agent::ReadSessionFile(file);
    ASSERT_TRUE(contents.ok());
    EXPECT_EQ(contents->header.parent_session, session_->info().session_file);
    EXPECT_EQ(contents->header.agent, std::string("parent/") + (id[1] == '1' ? "alpha" : "beta"));
    std::string said;
    for (const auto& e : contents->entries)
      if (e.kind == agent::EntryKind::kMessage && e.message.role == agent::Role::kToolResult)
        said += e.message.TextContent();
    EXPECT_EQ(said, "met") << id;
  }
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_NE(std::find(steps_.begin(), steps_.end(), "t1|alpha|meet!:completed "), steps_.end());
  EXPECT_NE(std::find(steps_.begin(), steps_.end(), "t2|beta|meet!:completed "), steps_.end());
}

TEST_F(SubagentsTest, CancelOfTheParentEndsEveryChild) {
  Meeting meeting(2);
  Make({Call("t1", "task", R"({"agent":"alpha","prompt":"hold one"})"),
        Call("t2", "task", R"({"agent":"beta","prompt":"hold two"})")},
       &meeting);
  auto r = Run("go", [&] {
    ASSERT_TRUE(meeting.WaitAll());  // both children are in their tool
    session_->Cancel();
  });
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stop, agent::TurnStop::kCancelled);
  EXPECT_EQ(Results(),
            (std::vector<std::string>{"t1:Cancelled by the user.", "t2:Cancelled by the user."}));
  EXPECT_EQ(DetailsOf("t1")["stopReason"].asString(), "cancelled");
}

TEST_F(SubagentsTest, AChildAsksTheParentsEditorNamingItself) {
  Meeting meeting(1);
  Make({Call("t1", "task", R"({"agent":"beta","prompt":"ask away"})")}, &meeting);
  auto r = Run("go");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Results(), (std::vector<std::string>{"t1:ran it"}));
  std::lock_guard<std::mutex> lock(editor_.mu_);
  ASSERT_EQ(editor_.asked.size(), 1u);
  EXPECT_EQ(editor_.asked[0], "p1|beta: true|beta|t1");
}

TEST_F(SubagentsTest, AChildOfAParentInPlanModeChangesNothing) {
  Meeting meeting(1);
  Make({Call("t1", "task", R"({"agent":"beta","prompt":"ask away"})")}, &meeting);
  ASSERT_TRUE(session_->selection().SetMode(agent::PermissionMode::kPlan).ok());
  auto r = Run("go");
  ASSERT_TRUE(r.ok()) << r.error().message;
  {
    std::lock_guard<std::mutex> lock(editor_.mu_);
    EXPECT_TRUE(editor_.asked.empty()) << "a command in plan mode is refused, never asked about";
  }
  auto contents = agent::ReadSessionFile(DetailsOf("t1")["sessionFile"].asString());
  ASSERT_TRUE(contents.ok());
  std::string said;
  for (const auto& e : contents->entries)
    if (e.kind == agent::EntryKind::kMessage && e.message.role == agent::Role::kToolResult)
      said += e.message.TextContent();
  EXPECT_NE(said.find("plan mode"), std::string::npos) << said;
}

TEST_F(SubagentsTest, DepthLimitAndUnknownAgent) {
  Meeting meeting(1);
  Make({Call("t1", "task", R"({"prompt":"nest please"})"),
        Call("t2", "task", R"({"agent":"nobody","prompt":"meet"})")},
       &meeting);
  auto r = Run("go");
  ASSERT_TRUE(r.ok());
  auto results = Results();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], "t1:nested");  // the general-purpose agent; its own task call failed
  EXPECT_EQ(results[1], "t2:task: no agent named 'nobody' (agents: alpha, beta, general-purpose)");
  auto contents = agent::ReadSessionFile(DetailsOf("t1")["sessionFile"].asString());
  ASSERT_TRUE(contents.ok());
  std::string said;
  for (const auto& e : contents->entries)
    if (e.kind == agent::EntryKind::kMessage && e.message.role == agent::Role::kToolResult)
      said += e.message.TextContent();
  EXPECT_EQ(said, "Unknown tool 'task'.");
}

TEST_F(SubagentsTest, AgentFilesOfTheProjectAndTheAgentFolder) {
  fs::create_directories(dir_ / "work/.lousho/agents");
  std::ofstream(dir_ / "work/.lousho/agents/reviewer.md")
      << "---\ndescription: Reviews diffs\ntools: Read, Grep\n---\nReview carefully.\n";
  std::ofstream(dir_ / "work/.lousho/agents/broken.md") << "---\nname: Bad Name\n---\nx\n";
  fs::create_directories(dir_ / "spec/agents");
  std::ofstream(dir_ / "spec/agents/reviewer.md") << "---\ndescription: The spec's\n---\nMine.\n";
  spec_.dir = (dir_ / "spec").string();
  std::vector<std::string> warnings;
  config::SubagentsSpec s = SubagentsFor(&spec_, dir_ / "work", &warnings);
  std::vector<std::string> names;
  for (const auto& a : s.agents) names.push_back(a.name + ":" + a.description);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "alpha:alpha agent", "beta:beta agent", "reviewer:The spec's",
                       "general-purpose:" + config::GeneralPurposeAgent().description}));
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("broken.md"), std::string::npos);
  EXPECT_NE(warnings[1].find("agent shadowed: reviewer"), std::string::npos);
}

}  // namespace
}  // namespace lousho::host
