// Tests for the todo and ask tools, and the built-in registry.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "agent/tools/builtin_tools.h"
#include "tests/tools/tool_test_util.h"

namespace lousho::agent {
namespace {

using testing::J;
using testing::TextOf;

TEST(TodoToolTest, ReplacesThePlan) {
  auto tool = tools::MakeTodoTool();
  std::vector<PlanEntry> plan = {{"old", "low", "completed"}};
  ToolContext ctx;
  ctx.plan = &plan;
  auto out = tool->Run(J(R"({"todos":[
      {"content":"Read code","status":"completed","priority":"high"},
      {"content":"Fix bug","status":"in_progress"},
      {"content":"Write tests","status":"pending","priority":"low"}]})"),
                       ctx);
  ASSERT_FALSE(out.is_error) << TextOf(out);
  EXPECT_TRUE(out.plan_changed);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].content, "Read code");
  EXPECT_EQ(plan[0].priority, "high");
  EXPECT_EQ(plan[1].priority, "medium");
  EXPECT_EQ(plan[1].status, "in_progress");
  EXPECT_EQ(TextOf(out),
            "Plan updated: 3 todos (1 completed, 1 in progress, 1 pending)\n[x] Read code\n"
            "[>] Fix bug\n[ ] Write tests");
  EXPECT_EQ(tool->kind(), ToolKind::kThink);
}

TEST(TodoToolTest, RejectsBadEntriesWithoutTouchingThePlan) {
  auto tool = tools::MakeTodoTool();
  std::vector<PlanEntry> plan = {{"keep", "medium", "pending"}};
  ToolContext ctx;
  ctx.plan = &plan;
  auto out = tool->Run(J(R"({"todos":[{"content":"x","status":"done"}]})"), ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_NE(TextOf(out).find("todos[0].status"), std::string::npos);
  EXPECT_EQ(plan.size(), 1u);
  EXPECT_TRUE(tool->Run(J(R"({"todos":[{"status":"pending"}]})"), ctx).is_error);
  auto cleared = tool->Run(J(R"({"todos":[]})"), ctx);
  EXPECT_TRUE(plan.empty());
  EXPECT_EQ(TextOf(cleared), "Plan cleared");
}

TEST(AskToolTest, EndsTurnWithNumberedChoices) {
  auto tool = tools::MakeAskTool();
  ToolContext ctx;
  auto out = tool->Run(J(R"({"question":"Which one?","options":["foo","bar"]})"), ctx);
  EXPECT_FALSE(out.is_error);
  EXPECT_TRUE(out.ends_turn);
  EXPECT_EQ(TextOf(out), "Which one?\n\n1. foo\n2. bar");
  auto plain = tool->Run(J(R"({"question":"Why?"})"), ctx);
  EXPECT_EQ(TextOf(plain), "Why?");
  EXPECT_TRUE(tool->Run(J(R"({})"), ctx).is_error);
  EXPECT_TRUE(tool->read_only());
  EXPECT_EQ(tool->kind(), ToolKind::kOther);
}

TEST(ToolRegistryTest, EveryNameMakesItsTool) {
  std::set<std::string> seen;
  for (const auto& name : KnownToolNames()) {
    auto tool = MakeBuiltinTool(name);
    ASSERT_NE(tool, nullptr) << name;
    EXPECT_EQ(tool->name(), name);
    EXPECT_FALSE(tool->description().empty());
    Json::Value schema = tool->parameters();
    EXPECT_EQ(schema["type"].asString(), "object") << name;
    EXPECT_TRUE(schema["properties"].isObject()) << name;
    seen.insert(name);
  }
  EXPECT_EQ(seen.size(), 15u);
  // fetch is off unless a spec lists it.
  EXPECT_EQ(BuiltinToolNames().size(), 14u);
  EXPECT_EQ(std::count(BuiltinToolNames().begin(), BuiltinToolNames().end(), "fetch"), 0);
  EXPECT_EQ(MakeBuiltinTool("nope"), nullptr);
}

TEST(ToolRegistryTest, BadArgumentsAreToolErrorsNotCrashes) {
  ToolContext ctx;
  ctx.cwd = std::filesystem::temp_directory_path();
  ctx.roots = {ctx.cwd};
  for (const auto& name : KnownToolNames()) {
    if (name == "ls" || name == "bash") continue;  // {} is valid for ls; bash would run
    auto tool = MakeBuiltinTool(name);
    for (const char* args : {"{}", "[]", "{\"path\":5,\"pattern\":[],\"todos\":{}}"}) {
      auto out = tool->Run(J(args), ctx);
      EXPECT_TRUE(out.is_error) << name << " " << args;
    }
  }
}

}  // namespace
}  // namespace lousho::agent
