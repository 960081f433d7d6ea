// Tests of tool sources in the session (how MCP tools reach the model): the set is taken again
// before every model request, and the source is closed with the session.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <future>

#include "agent/providers/script_provider.h"
#include "agent/session.h"
#include "support/json_util.h"

namespace lousho::agent {
namespace {

class NamedTool : public Tool {
 public:
  explicit NamedTool(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "a tool from a source"; }
  Json::Value parameters() const override { return Json::Value(Json::objectValue); }
  ToolKind kind() const override { return ToolKind::kRead; }
  bool read_only() const override { return true; }
  std::string Title(const Json::Value&, const ToolContext&) const override { return name_; }
  std::string PermissionSubject(const Json::Value&) const override { return ""; }
  ToolOutput Run(const Json::Value&, ToolContext&) override {
    ++runs;
    return ToolOutput::Text(name_ + " ran");
  }
  std::atomic<int> runs{0};

 private:
  std::string name_;
};

// Offers `a` until it has run, then `b` instead (as a server whose list changed).
class ChangingSource : public ToolSource {
 public:
  std::vector<std::shared_ptr<Tool>> CurrentTools(const CancelToken&) override {
    ++asked;
    if (a->runs == 0) return {a};
    return {b};
  }
  void Close() override { ++closed; }
  std::shared_ptr<NamedTool> a = std::make_shared<NamedTool>("src_a");
  std::shared_ptr<NamedTool> b = std::make_shared<NamedTool>("src_b");
  std::atomic<int> asked{0};
  std::atomic<int> closed{0};
};

config::ScriptStep Calls(const std::string& tool) {
  config::ScriptStep s;
  config::ScriptToolCall c;
  c.name = tool;
  s.tool_calls.push_back(c);
  return s;
}

TEST(ToolSourceTest, ToolsAreTakenAgainBeforeEachModelRequestAndClosedWithTheSession) {
  config::Script script;
  script.name = "t";
  config::ScriptStep done;
  done.text = "done";
  script.replies.push_back(
      config::ScriptReply{"", {Calls("src_a"), Calls("src_b"), Calls("src_a"), done}});
  auto agent = std::make_shared<AgentConfig>();
  agent->model.provider = std::make_shared<ScriptProvider>(script);
  agent->max_steps = 10;
  std::vector<std::string> ends;
  std::mutex mu;
  SessionOptions o;
  o.id = "s";
  o.cwd = std::filesystem::temp_directory_path();
  o.sink = [&](const Event& e) {
    if (auto* end = std::get_if<event::ToolExecutionEnd>(&e)) {
      std::lock_guard<std::mutex> lock(mu);
      ends.push_back(end->call->name + (end->is_error ? ":failed" : ":ok"));
    }
  };
  auto session = *Session::Create(agent, std::move(o));
  auto source = std::make_shared<ChangingSource>();
  session->tools().AddSource(source);
  ASSERT_EQ(session->tools().List().size(), 1u);
  std::promise<Result<TurnResult>> p;
  ASSERT_TRUE(session
                  ->Prompt({ContentBlock::Text("go")},
                           [&](Result<TurnResult> r) { p.set_value(std::move(r)); })
                  .ok());
  auto r = p.get_future().get();
  ASSERT_TRUE(r.ok()) << r.error().message;
  {
    std::lock_guard<std::mutex> lock(mu);
    // src_b appeared once src_a had run; src_a was gone by then.
    EXPECT_EQ(ends, (std::vector<std::string>{"src_a:ok", "src_b:ok", "src_a:failed"}));
  }
  EXPECT_GE(source->asked.load(), 4);
  EXPECT_EQ(source->b->runs.load(), 1);
  std::promise<void> closed;
  session->Close([&] { closed.set_value(); });
  closed.get_future().get();
  EXPECT_EQ(source->closed.load(), 1);
  session->WaitIdle();
}

// A tool that counts how often its name is asked, across all tools of a test.
class CountedTool : public NamedTool {
 public:
  CountedTool(std::string name, std::atomic<long>* asked)
      : NamedTool(std::move(name)), asked_(asked) {}
  std::string name() const override {
    ++*asked_;
    return NamedTool::name();
  }

 private:
  std::atomic<long>* asked_;
};

class FixedSource : public ToolSource {
 public:
  std::vector<std::shared_ptr<Tool>> CurrentTools(const CancelToken&) override { return tools; }
  void Close() override {}
  std::vector<std::shared_ptr<Tool>> tools;
};

std::vector<std::string> Names(const std::vector<std::shared_ptr<Tool>>& tools) {
  std::vector<std::string> out;
  out.reserve(tools.size());
  for (const auto& t : tools) out.push_back(t->name());
  return out;
}

// A server may list tens of thousands of tools. Taking them into the session, and again before
// each model request, asks each tool's name a few times, not once per other tool (which made
// session/new take 20 s for 20,000 tools); and the set is the same as before: a source's tool
// replaces the built-in of its name, the others follow the built-ins in the source's order.
TEST(ToolSourceTest, ManyToolsJoinTheSessionWithAFewLookupsEach) {
  constexpr long kTools = 3000;
  std::atomic<long> asked{0};
  config::Script script;
  script.name = "t";
  config::ScriptStep done;
  done.text = "done";
  script.replies.push_back(config::ScriptReply{"", {done}});
  auto agent = std::make_shared<AgentConfig>();
  agent->model.provider = std::make_shared<ScriptProvider>(script);
  agent->tools = {std::make_shared<CountedTool>("builtin_a", &asked),
                  std::make_shared<CountedTool>("shared", &asked),
                  std::make_shared<CountedTool>("builtin_b", &asked)};
  SessionOptions o;
  o.id = "s";
  o.cwd = std::filesystem::temp_directory_path();
  auto session = *Session::Create(agent, std::move(o));
  auto source = std::make_shared<FixedSource>();
  std::vector<std::string> expected = {"builtin_a", "shared", "builtin_b"};
  for (long i = 0; i < kTools; ++i) {
    const std::string name = i == kTools / 2 ? "shared" : "src_" + std::to_string(i);
    source->tools.push_back(std::make_shared<CountedTool>(name, &asked));
    if (name != "shared") expected.push_back(name);
  }
  asked = 0;
  session->tools().AddSource(source);
  EXPECT_LE(asked.load(), 4 * (kTools + 3)) << "names asked while adding the source";
  asked = 0;
  std::vector<std::shared_ptr<Tool>> tools = session->tools().List();
  ASSERT_EQ(Names(tools), expected);
  EXPECT_EQ(tools[1], source->tools[kTools / 2]) << "the source's tool replaced the built-in";

  // A model request takes the source's tools again: the same tools, each name asked a few times.
  asked = 0;
  std::promise<Result<TurnResult>> p;
  ASSERT_TRUE(session
                  ->Prompt({ContentBlock::Text("go")},
                           [&](Result<TurnResult> r) { p.set_value(std::move(r)); })
                  .ok());
  auto r = p.get_future().get();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_LE(asked.load(), 8 * (kTools + 3)) << "names asked for one model request";
  std::vector<std::string> after = Names(session->tools().List());
  std::vector<std::string> before = expected;
  std::sort(after.begin(), after.end());
  std::sort(before.begin(), before.end());
  EXPECT_EQ(after, before);
  std::promise<void> closed;
  session->Close([&] { closed.set_value(); });
  closed.get_future().get();
  session->WaitIdle();
}

// A tool whose machine-readable details are huge (an MCP server's raw result): what reaches
// the editor (the ToolExecutionEnd event every door encodes, ACP rawOutput and the RPC door's
// details) and the history is a short note instead; the content the model gets is untouched.
class HugeDetailsTool : public NamedTool {
 public:
  HugeDetailsTool() : NamedTool("huge") {}
  ToolOutput Run(const Json::Value&, ToolContext&) override {
    ToolOutput out = ToolOutput::Text("short content");
    out.details["blob"] = std::string(kMaxToolDetailsBytes + 1, 'x');
    return out;
  }
};

class HugeSource : public ToolSource {
 public:
  std::vector<std::shared_ptr<Tool>> CurrentTools(const CancelToken&) override { return {tool}; }
  void Close() override {}
  std::shared_ptr<Tool> tool = std::make_shared<HugeDetailsTool>();
};

TEST(ToolSourceTest, ToolDetailsOverTheLimitDoNotReachTheEditor) {
  config::Script script;
  script.name = "t";
  config::ScriptStep done;
  done.text = "done";
  script.replies.push_back(config::ScriptReply{"", {Calls("huge"), done}});
  auto agent = std::make_shared<AgentConfig>();
  agent->model.provider = std::make_shared<ScriptProvider>(script);
  agent->max_steps = 10;
  std::vector<std::string> details;
  std::vector<std::string> content;
  std::mutex mu;
  SessionOptions o;
  o.id = "s";
  o.cwd = std::filesystem::temp_directory_path();
  o.sink = [&](const Event& e) {
    if (auto* end = std::get_if<event::ToolExecutionEnd>(&e); end && end->output) {
      std::lock_guard<std::mutex> lock(mu);
      details.push_back(WriteJson(end->output->details));
      content.push_back(end->output->content.empty() ? "" : end->output->content[0].text);
    }
  };
  auto session = *Session::Create(agent, std::move(o));
  session->tools().AddSource(std::make_shared<HugeSource>());
  std::promise<Result<TurnResult>> p;
  ASSERT_TRUE(session
                  ->Prompt({ContentBlock::Text("go")},
                           [&](Result<TurnResult> r) { p.set_value(std::move(r)); })
                  .ok());
  auto r = p.get_future().get();
  ASSERT_TRUE(r.ok()) << r.error().message;
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(details.size(), 1u);
    EXPECT_EQ(details[0], WriteJson(DetailsTooLarge()));
    EXPECT_EQ(content[0], "short content");
  }
  bool found = false;
  for (const auto& m : session->transcript().Messages()) {
    if (m.role != Role::kToolResult) continue;
    found = true;
    EXPECT_EQ(WriteJson(m.tool->details), WriteJson(DetailsTooLarge()));
  }
  EXPECT_TRUE(found);
  std::promise<void> closed;
  session->Close([&] { closed.set_value(); });
  closed.get_future().get();
  session->WaitIdle();
}

}  // namespace
}  // namespace lousho::agent
