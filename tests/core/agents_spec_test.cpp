// Tests of subagent specs: the spec's `agents:` map and its settings, the fields of an agent
// file, Claude Code's tool names, and the errors that name the place.
#include "config/agents_spec.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "config/agent_spec.h"
#include "support/json_util.h"

namespace lousho::config {
namespace {
namespace fs = std::filesystem;

Json::Value J(const char* text) { return *ParseJson(text); }

const std::vector<std::string> kKnown = {"read", "grep", "find", "ls", "bash", "edit", "task"};

TEST(AgentsSpecTest, InlineAgentsAndSettings) {
  auto s = ParseSubagents(J(R"({
    "explorer": {"description": "Finds code", "instructions": "Look, do not touch.",
                 "model": "openai/gpt-4o-mini", "thinking": "low", "tools": ["read", "grep"],
                 "permissions": {"allow": ["read"]}},
    "tester": {"description": "Runs tests", "model": "inherit", "tools": "Bash, Read, Glob"},
    "tool_name": "delegate", "max_depth": 2, "max_parallel": 3, "max_result_bytes": 4096,
    "general_purpose": false})"),
                          "", kKnown);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->tool_name, "delegate");
  EXPECT_EQ(s->max_depth, 2);
  EXPECT_EQ(s->max_parallel, 3);
  EXPECT_EQ(s->max_result_bytes, 4096u);
  EXPECT_FALSE(s->general_purpose);
  ASSERT_EQ(s->agents.size(), 2u);
  const SubagentSpec& e = s->agents[0];
  EXPECT_EQ(e.name, "explorer");
  EXPECT_EQ(e.description, "Finds code");
  EXPECT_EQ(e.instructions, "Look, do not touch.");
  EXPECT_EQ(e.model, "openai/gpt-4o-mini");
  EXPECT_EQ(e.thinking, "low");
  EXPECT_TRUE(e.tools_set);
  EXPECT_EQ(e.tools, (std::vector<std::string>{"read", "grep"}));
  EXPECT_TRUE(e.permissions.isObject());
  EXPECT_EQ(e.source, "agents.explorer");
  const SubagentSpec& t = s->agents[1];
  EXPECT_EQ(t.model, "");                                                  // inherit
  EXPECT_EQ(t.tools, (std::vector<std::string>{"bash", "read", "find"}));  // Claude's names
  EXPECT_FALSE(t.permissions.isObject());
}

TEST(AgentsSpecTest, DefaultsWithoutSettings) {
  auto s = ParseSubagents(J(R"({"a": {"description": "d"}})"), "", kKnown);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->tool_name, "task");
  EXPECT_EQ(s->max_depth, 1);
  EXPECT_EQ(s->max_parallel, 4);
  EXPECT_TRUE(s->general_purpose);
  EXPECT_FALSE(s->agents[0].tools_set);
}

TEST(AgentsSpecTest, ErrorsNameThePlace) {
  const std::pair<const char*, const char*> cases[] = {
      {R"([1])", "agents: expected a map of agent names to their settings"},
      {R"({"a": {}})", "agents.a: a description is needed (the model chooses by it)"},
      {R"({"Bad Name": {"description": "d"}})",
       "agents.Bad Name: agent name 'Bad Name': lowercase letters, digits, '-' and '_' (at most "
       "64)"},
      {R"({"a": {"description": "d", "tools": ["nope"]}})", "agents.a: tools: unknown tool 'nope'"},
      {R"({"a": {"description": "d", "tools": 5}})",
       "agents.a: tools: expected a list of tool names"},
      {R"({"a": {"description": "d", "model": "gpt"}})",
       "agents.a: model: expected \"provider/model\" or \"inherit\", got 'gpt'"},
      {R"({"a": {"description": "d", "colour": "red"}})",
       "agents.a: unknown key 'colour' (known keys: name, description, instructions, prompt, "
       "model, thinking, tools, permissions, permission, color)"},
      {R"({"max_depth": 9})", "agents.max_depth: expected 0 to 8"},
      {R"({"max_parallel": 0})", "agents.max_parallel: expected 1 to 32"},
      {R"({"tool_name": "Has Space"})", "agents.tool_name: expected a tool name"},
      {R"({"oops": 3})",
       "agents.oops: an agent is a map of its settings; the other keys are tool_name, max_depth, "
       "max_parallel, max_result_bytes and general_purpose"},
  };
  for (const auto& [json, error] : cases) {
    auto s = ParseSubagents(J(json), "", kKnown);
    ASSERT_FALSE(s.ok()) << json;
    EXPECT_EQ(s.error().code, ErrorCode::kConfigInvalid);
    EXPECT_EQ(s.error().message, error) << json;
  }
}

TEST(AgentsSpecTest, FileFieldsAndBody) {
  // A Claude Code agent file's front matter, already parsed; the body is the instructions.
  auto a = SubagentFromFields("file-stem", J(R"({"name": "reviewer", "description": "Reviews diffs",
                                    "tools": "Read, Grep", "model": "sonnet-ish/x"})"),
                              "Review carefully.", "/p/reviewer.md", {});
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->name, "reviewer");
  EXPECT_EQ(a->instructions, "Review carefully.");
  EXPECT_EQ(a->tools, (std::vector<std::string>{"read", "grep"}));
  EXPECT_EQ(a->source, "/p/reviewer.md");
  auto stem = SubagentFromFields("from-stem", J(R"({"description": "d"})"), "", "/p/x.md", {});
  ASSERT_TRUE(stem.ok());
  EXPECT_EQ(stem->name, "from-stem");
}

TEST(AgentsSpecTest, FirstOfANameWins) {
  std::vector<SubagentSpec> into = {GeneralPurposeAgent()};
  SubagentSpec mine;
  mine.name = "general-purpose";
  mine.source = "mine.md";
  SubagentSpec other;
  other.name = "other";
  std::vector<std::string> shadowed;
  AddSubagents(into, {mine, other}, &shadowed);
  ASSERT_EQ(into.size(), 2u);
  EXPECT_EQ(into[0].source, "built-in");
  EXPECT_EQ(into[1].name, "other");
  EXPECT_EQ(shadowed, (std::vector<std::string>{"general-purpose (mine.md)"}));
}

TEST(AgentsSpecTest, SpecKeyLoadsAndErrorsHaveAPosition) {
  const fs::path dir =
      fs::temp_directory_path() / ("lousho-agents-spec-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "agent.yaml")
      << "model: script/echo\nagents:\n  scout:\n    description: Looks\n"
         "    tools: [read]\n  max_parallel: 2\n";
  LoadOptions o;
  o.known_tools = kKnown;
  auto spec = LoadAgentSpec((dir / "agent.yaml").string(), o);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  ASSERT_EQ(spec->agents.agents.size(), 1u);
  EXPECT_EQ(spec->agents.agents[0].name, "scout");
  EXPECT_EQ(spec->agents.max_parallel, 2);
  std::ofstream(dir / "agent.yaml") << "model: script/echo\nagents:\n  scout: {}\n";
  auto bad = LoadAgentSpec((dir / "agent.yaml").string(), o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, (dir / "agent.yaml").string() +
                                     ":3:3: agents.scout: a description is needed (the model "
                                     "chooses by it)");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lousho::config
