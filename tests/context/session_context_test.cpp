// The system prompt's parts: composition (append, override, context), the editor's prompt chosen
// from what a file recorded, rules that join the context (alwaysApply, globs) and the spec's
// `context:` settings.
#include "agent/session_context.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/rules/loader.h"
#include "config/agent_spec.h"

namespace lousho::agent {
namespace {
namespace fs = std::filesystem;

TEST(ComposeSystemPromptTest, AppendAddsOverrideReplacesTheInstructionsOnly) {
  const std::vector<std::string> tools = {"read", "bash"};
  EXPECT_EQ(ComposeSystemPrompt("SPEC", std::nullopt, "CTX\n", "/w", tools),
            "SPEC\n\nCTX\n\nWorking directory: /w\nTools available: read, bash\n");
  EXPECT_EQ(
      ComposeSystemPrompt("SPEC", ClientPrompt{ClientPrompt::Mode::kAppend, "ED"}, "", "/w", {}),
      "SPEC\n\nED\n\nWorking directory: /w\n");
  EXPECT_EQ(ComposeSystemPrompt("SPEC", ClientPrompt{ClientPrompt::Mode::kOverride, "ED"}, "CTX",
                                "/w", tools),
            "ED\n\nCTX\n\nWorking directory: /w\nTools available: read, bash\n");
}

TEST(ChooseClientPromptTest, TheGivenOneWinsAndIsRecordedOnlyWhenItChanges) {
  const ClientPrompt a{ClientPrompt::Mode::kAppend, "A"};
  const ClientPrompt b{ClientPrompt::Mode::kOverride, "B"};
  std::vector<Entry> seed = {ClientPromptEntry(a)};
  bool record = true;
  EXPECT_EQ(ChooseClientPrompt(seed, std::nullopt, &record), a);
  EXPECT_FALSE(record);
  EXPECT_EQ(ChooseClientPrompt(seed, a, &record), a);
  EXPECT_FALSE(record);
  EXPECT_EQ(ChooseClientPrompt(seed, b, &record), b);
  EXPECT_TRUE(record);
  seed.push_back(ClientPromptEntry(b));
  EXPECT_EQ(ChooseClientPrompt(seed, std::nullopt, &record), b);  // the last recorded
  EXPECT_FALSE(ChooseClientPrompt({}, std::nullopt, &record).has_value());
  Entry odd = ClientPromptEntry(a);
  odd.more.Edit().data["mode"] = "sideways";  // a file from elsewhere: ignored, never fatal
  EXPECT_FALSE(ChooseClientPrompt({odd}, std::nullopt, &record).has_value());
}

class ContextRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lousho-ctxrules-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "proj/.cursor/rules");
    std::ofstream(dir_ / "proj/.cursor/rules/style.mdc")
        << "---\ndescription: style\nalwaysApply: true\n---\nALWAYS_STYLE\n";
    std::ofstream(dir_ / "proj/.cursor/rules/ts.mdc")
        << "---\nglobs: \"src/**/*.ts\"\nalwaysApply: false\n---\nTS_RULE\n";
    std::ofstream(dir_ / "proj/.cursor/rules/plain.md") << "just prose\n";
    std::ofstream(dir_ / "proj/.cursor/rules/off.mdc")
        << "---\nalwaysApply: true\nenabled: false\n---\nOFF\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ContextRulesTest, RulesWithoutAConditionGoToTheContextNotTheStream) {
  config::AgentSpec spec;
  spec.ttsr.enabled = false;  // stream rules off: context rules stay
  rules::RuleSet set = rules::LoadSessionRules(*rules::LoadAgentRules(spec, ""), dir_ / "proj");
  EXPECT_TRUE(set.rules.empty());
  ASSERT_EQ(set.context_rules.size(), 2u);
  EXPECT_EQ(set.context_rules[0].name, "style");
  EXPECT_TRUE(set.context_rules[0].always_apply);
  EXPECT_EQ(set.context_rules[0].content, "ALWAYS_STYLE");
  EXPECT_EQ(set.context_rules[1].name, "ts");
  EXPECT_EQ(set.context_rules[1].globs, (std::vector<std::string>{"src/**/*.ts"}));
  std::map<std::string, std::string> why;
  for (const auto& k : set.skipped) why[k.name] = k.why;
  EXPECT_EQ(why["style"], "not a stream rule: in the system prompt (alwaysApply)");
  EXPECT_EQ(why["plain"], "not a stream rule (no condition)");
  EXPECT_EQ(why["off"], "disabled (enabled: false)");
}

TEST_F(ContextRulesTest, AGlobRuleJoinsOnceWhenAToolCallNamesAMatchingFile) {
  config::AgentSpec spec;
  rules::RuleSet set = rules::LoadSessionRules(*rules::LoadAgentRules(spec, ""), dir_ / "proj");
  std::vector<rules::Rule> globbed;
  for (const auto& r : set.context_rules)
    if (!r.always_apply) globbed.push_back(r);
  FileRules file_rules(globbed, dir_ / "proj", "");
  auto call = [](const std::string& path) {
    Message m;
    m.role = Role::kAssistant;
    Json::Value args(Json::objectValue);
    args["path"] = path;
    m.content.push_back(ContentBlock::ToolCall("c1", "read", args));
    return m;
  };
  EXPECT_TRUE(file_rules.Due(call("src/a.py")).empty());
  std::vector<Message> due = file_rules.Due(call((dir_ / "proj/src/x/a.ts").string()));
  ASSERT_EQ(due.size(), 1u);
  EXPECT_EQ(due[0].custom_type, kFileRuleMessageType);
  EXPECT_FALSE(due[0].display);
  EXPECT_EQ(due[0].TextContent(),
            "<rule name=\"ts\" file=\".cursor/rules/ts.mdc\" applies-to=\"src/x/a.ts\">\nTS_RULE\n"
            "</rule>");
  EXPECT_TRUE(file_rules.Due(call("src/b.ts")).empty());  // once per session
  // A session opened on a history that holds it does not add it again.
  FileRules reopened(globbed, dir_ / "proj", "");
  reopened.Restore(std::vector<Message>{due[0]});
  EXPECT_TRUE(reopened.Due(call("src/b.ts")).empty());
}

TEST(ContextSpecTest, SettingsParseAndFalseTurnsEverythingOff) {
  const fs::path dir = fs::temp_directory_path() / ("lousho-ctxspec-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto load = [&](const std::string& yaml) {
    std::ofstream(dir / "agent.yaml") << "model: script/echo\n" << yaml;
    return config::LoadAgentSpec((dir / "agent.yaml").string(), {});
  };
  auto on = load("");
  ASSERT_TRUE(on.ok());
  EXPECT_TRUE(on->context.files && on->context.environment && on->context.git);
  EXPECT_EQ(on->context.file_names,
            (std::vector<std::string>{"AGENTS.md", "CLAUDE.md", "GEMINI.md"}));
  auto off = load("context: false\n");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->context.files || off->context.user_files || off->context.rules ||
               off->context.environment || off->context.git);
  auto some = load(
      "context:\n  fileNames: [AGENTS.md]\n  git: false\n  maxBytes: 100\n"
      "  importDepth: 2\n");
  ASSERT_TRUE(some.ok()) << some.error().message;
  EXPECT_EQ(some->context.file_names, (std::vector<std::string>{"AGENTS.md"}));
  EXPECT_FALSE(some->context.git);
  EXPECT_TRUE(some->context.environment);
  EXPECT_EQ(some->context.max_bytes, 100);
  EXPECT_EQ(some->context.import_depth, 2);
  auto bad = load("context:\n  filenames: [x]\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("unknown key 'filenames' in context"), std::string::npos)
      << bad.error().message;
  auto slash = load("context:\n  fileNames: [docs/AGENTS.md]\n");
  ASSERT_FALSE(slash.ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lousho::agent
