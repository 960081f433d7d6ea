// Tests of stream-rule loading: front matter and its quirks, conditions and scopes, discovery
// order and duplicates, settings layers, and the spec's `rules:` / `ttsr:` keys.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/rules/loader.h"
#include "agent/rules/rule.h"
#include "config/agent_spec.h"

namespace lousho::agent::rules {
namespace {
namespace fs = std::filesystem;

std::optional<Rule> Parse(const std::string& text, std::vector<std::string>* warnings = nullptr,
                          std::string* why = nullptr) {
  return ParseRuleText("r", "/p/r.md", "project", text, warnings, why);
}

bool Matches(const Rule& r, const std::string& text) {
  for (const auto& c : r.conditions)
    if (auto hit = c.regex.Search(text); hit.ok() && *hit) return true;
  return false;
}

TEST(TtsrRuleTest, FrontMatterAndBody) {
  auto r = Parse(
      "---\ndescription: No token\ncondition: \"FORBIDDEN\"\nalwaysApply: true\n---\n\n  Body "
      "text.\n\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->name, "r");
  EXPECT_EQ(r->description, "No token");
  EXPECT_EQ(r->content, "Body text.");
  EXPECT_TRUE(r->always_apply);
  EXPECT_TRUE(r->text);
  ASSERT_EQ(r->tools.size(), 1u);  // default: text and any tool, not thinking
  EXPECT_TRUE(r->tools[0].tool.empty());
  EXPECT_FALSE(r->thinking);
  EXPECT_TRUE(Matches(*r, "a FORBIDDEN b"));
}

TEST(TtsrRuleTest, NoConditionIsNotAStreamRule) {
  std::string why;
  EXPECT_FALSE(Parse("---\ndescription: x\n---\nbody", nullptr, &why));
  EXPECT_EQ(why, "not a stream rule (no condition)");
  EXPECT_FALSE(Parse("just a body, no front matter", nullptr, &why));
  // A front matter never closed is body.
  EXPECT_FALSE(Parse("---\ncondition: x\nbody", nullptr, &why));
}

TEST(TtsrRuleTest, ConditionsAreOredAndLegacyKeysCount) {
  auto r = Parse("---\ncondition:\n  - alpha\n  - beta\n---\nb");
  ASSERT_TRUE(r);
  EXPECT_TRUE(Matches(*r, "beta"));
  EXPECT_TRUE(Matches(*r, "alpha"));
  EXPECT_FALSE(Matches(*r, "gamma"));
  auto legacy = Parse("---\nttsr_trigger: old\n---\nb");
  ASSERT_TRUE(legacy);
  EXPECT_TRUE(Matches(*legacy, "so old"));
  auto camel = Parse("---\nttsrTrigger: camel\n---\nb");
  ASSERT_TRUE(camel);
  EXPECT_TRUE(Matches(*camel, "camel"));
  // `condition` wins over the legacy spellings.
  auto both = Parse("---\ncondition: new\nttsr_trigger: old\n---\nb");
  ASSERT_TRUE(both);
  EXPECT_FALSE(Matches(*both, "old"));
}

TEST(TtsrRuleTest, LeadingFlagsGroupBecomesFlags) {
  auto r = Parse("---\ncondition: \"(?i)forbidden\"\n---\nb");
  ASSERT_TRUE(r);
  EXPECT_TRUE(Matches(*r, "FORBIDDEN"));
  auto m = Parse("---\ncondition: \"(?m)^end$\"\n---\nb");
  ASSERT_TRUE(m);
  EXPECT_TRUE(Matches(*m, "the\nend\nmore"));
  // Without (?m), `$` is the end of the text only.
  auto plain = Parse("---\ncondition: \"end$\"\n---\nb");
  ASSERT_TRUE(plain);
  EXPECT_FALSE(Matches(*plain, "end\nmore"));
}

TEST(TtsrRuleTest, GlobLookingConditionsBecomeEditAndWriteScopes) {
  auto r = Parse("---\ncondition: \"src/**/*.ts\"\n---\nb");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->text);
  ASSERT_EQ(r->tools.size(), 2u);
  EXPECT_EQ(r->tools[0].tool, "edit");
  EXPECT_EQ(r->tools[1].tool, "write");
  EXPECT_EQ(r->tools[0].glob_text, "src/**/*.ts");
  ASSERT_EQ(r->conditions.size(), 1u);
  EXPECT_EQ(r->conditions[0].pattern, ".*");
  // `*.py` is a glob too; with a real regex beside it, the regex is the condition.
  auto both = Parse("---\ncondition: [\"*.py\", \"print\\\\(\"]\n---\nb");
  ASSERT_TRUE(both);
  ASSERT_EQ(both->conditions.size(), 1u);
  EXPECT_EQ(both->conditions[0].pattern, "print\\(");
  EXPECT_TRUE(LooksLikeGlob("*.tsx"));
  EXPECT_FALSE(LooksLikeGlob("a*b"));         // no slash, not *.ext: a regex
  EXPECT_FALSE(LooksLikeGlob("src/(a|b)*"));  // regex metacharacters
}

TEST(TtsrRuleTest, InvalidRegexIsAWarningAndTheOthersStay) {
  std::vector<std::string> warnings;
  auto r = Parse("---\ncondition: [\"ok\", \"bad(\"]\n---\nb", &warnings);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->conditions.size(), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("/p/r.md"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("bad("), std::string::npos);
  EXPECT_NE(warnings[0].find("at offset 4"), std::string::npos) << warnings[0];
  std::string why;
  EXPECT_FALSE(Parse("---\ncondition: \"[\"\n---\nb", &warnings, &why));
  EXPECT_EQ(why, "no valid condition");
}

TEST(TtsrRuleTest, ScopesAndTheirQuirks) {
  auto r = Parse("---\ncondition: x\nscope: \"tool:edit(*.ts), tool:write(*.ts)\"\n---\nb");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->text);
  ASSERT_EQ(r->tools.size(), 2u);
  EXPECT_EQ(r->tools[1].tool, "write");
  EXPECT_TRUE(r->tools[1].glob->Match("a.ts"));
  // The malformed `scope: "text","thinking"` (YAML refuses it: read line by line).
  auto q = Parse("---\ncondition: x\nscope: \"text\",\"thinking\"\n---\nb");
  ASSERT_TRUE(q);
  EXPECT_TRUE(q->text);
  EXPECT_TRUE(q->thinking);
  EXPECT_TRUE(q->tools.empty());
  // A list, `toolcall`, a bare name(glob), and case.
  auto l = Parse("---\ncondition: x\nscope: [Thinking, toolcall, \"Bash(*.sh)\"]\n---\nb");
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->thinking);
  ASSERT_EQ(l->tools.size(), 2u);
  EXPECT_EQ(l->tools[1].tool, "bash");
  // A scope that names nothing known excludes every stream: rejected, with a warning.
  std::vector<std::string> warnings;
  std::string why;
  EXPECT_FALSE(Parse("---\ncondition: x\nscope: prose\n---\nb", &warnings, &why));
  EXPECT_EQ(why, "its scope excludes every stream");
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(TtsrRuleTest, OtherKeys) {
  auto r =
      Parse("---\ncondition: x\nglobs: [\"*.ts\", \"src/**\"]\ninterruptMode: prose-only\n---\nb");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->globs, (std::vector<std::string>{"*.ts", "src/**"}));
  EXPECT_EQ(r->interrupt_mode, InterruptMode::kProseOnly);
  EXPECT_TRUE(r->needs_paths());
  std::string why;
  EXPECT_FALSE(Parse("---\ncondition: x\nenabled: false\n---\nb", nullptr, &why));
  EXPECT_EQ(why, "disabled (enabled: false)");
  std::vector<std::string> warnings;
  auto bad = Parse("---\ncondition: x\ninterruptMode: sometimes\n---\nb", &warnings);
  ASSERT_TRUE(bad);
  EXPECT_FALSE(bad->interrupt_mode);
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(TtsrRuleTest, LineWiseFallbackCamelCasesKeys) {
  // An unclosed bracket makes the block invalid YAML: the other lines still count.
  auto r = Parse("---\ncondition: fo+\ninterrupt-mode: never\nbroken: [oops\n---\nb");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->interrupt_mode, InterruptMode::kNever);
  EXPECT_TRUE(Matches(*r, "foo"));
}

TEST(TtsrRuleTest, CandidatePathsAndShownPaths) {
  Json::Value args(Json::objectValue);
  args["path"] = "./src/a.ts";
  args["filePath"] = "/w/b.ts";
  args["paths"] = Json::Value(Json::arrayValue);
  args["paths"].append("c.ts");
  args["content"] = "x";
  auto p = CandidatePaths(args, "/w");
  auto has = [&](const std::string& s) { return std::find(p.begin(), p.end(), s) != p.end(); };
  EXPECT_TRUE(has("./src/a.ts"));
  EXPECT_TRUE(has("src/a.ts"));
  EXPECT_TRUE(has("/w/src/a.ts"));
  EXPECT_TRUE(has("b.ts"));
  EXPECT_TRUE(has("/w/c.ts"));
  EXPECT_FALSE(has("x"));
  EXPECT_EQ(ShownPath("/w/.lousho/rules/a.md", "/w", "/home/u"), ".lousho/rules/a.md");
  EXPECT_EQ(ShownPath("/home/u/.lousho/rules/a.md", "/w", "/home/u"), "~/.lousho/rules/a.md");
  EXPECT_EQ(ShownPath("/etc/a.md", "/w", "/home/u"), "/etc/a.md");
}

class TtsrLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("lousho-ttsr-load-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const fs::path& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  static std::string Rule(const std::string& cond, const std::string& body) {
    return "---\ncondition: " + cond + "\n---\n" + body + "\n";
  }
  fs::path root_;
};

TEST_F(TtsrLoaderTest, DiscoveryOrderAndDuplicates) {
  Write("agent/agent.yaml",
        "model: script/echo\nrules:\n  - name: dup\n    condition: spec\n    content: from "
        "spec\n  - extra/one.md\n");
  Write("agent/extra/one.md", Rule("one", "one"));
  Write("agent/rules/dup.md", Rule("agentdir", "agent folder"));
  Write("agent/rules/agentonly.md", Rule("a", "agent only"));
  Write("proj/.lousho/rules/dup.md", Rule("p", "project"));
  Write("proj/.lousho/rules/proj.md", Rule("p", "project"));
  Write("proj/.omp/rules/omp.md", Rule("o", "omp"));
  Write("proj/.omp/rules/proj.md", Rule("o", "shadowed"));
  Write("proj/.agents/rules/agents.md", Rule("g", "agents"));
  Write("proj/.cursor/rules/cursor.mdc", Rule("c", "cursor"));
  Write("proj/.cursor/rules/notes.txt", "not a rule");
  Write("home/.lousho/rules/user.md", Rule("u", "user"));
  Write("home/.lousho/rules/omp.md", Rule("u", "user shadowed"));
  auto spec = config::LoadAgentSpec((root_ / "agent" / "agent.yaml").string(), {});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  auto agent = LoadAgentRules(*spec, (root_ / "home").string());
  RuleSet set = LoadSessionRules(*agent, root_ / "proj");
  std::vector<std::string> names;
  for (const auto& r : set.rules) names.push_back(r.name + ":" + r.origin);
  EXPECT_EQ(names, (std::vector<std::string>{"dup:spec", "one:spec", "agentonly:agent",
                                             "proj:project", "omp:.omp", "agents:.agents",
                                             "cursor:.cursor", "user:user"}));
  EXPECT_EQ(set.rules[0].content, "from spec");
  EXPECT_NE(set.rules[0].path.find("agent.yaml:3:5"), std::string::npos) << set.rules[0].path;
  size_t shadowed = 0;
  for (const auto& s : set.skipped) shadowed += s.why.find("shadowed") != std::string::npos;
  EXPECT_EQ(shadowed, 4u);  // agent dup, project dup, .omp proj, user omp
  EXPECT_TRUE(set.warnings.empty());
}

TEST_F(TtsrLoaderTest, SettingsFromTheSpecThenTheProject) {
  Write("agent/agent.yaml",
        "model: script/echo\nttsr:\n  contextMode: keep\n  repeatMode: after-gap\n  repeatGap: "
        "3\n");
  Write("proj/.lousho/config.yml",
        "other: ignored\nttsr:\n  repeatGap: 5\n  interruptMode: tool-only\n  contextMode: "
        "maybe\n");
  Write("proj/.lousho/rules/r.md", Rule("x", "b"));
  auto spec = config::LoadAgentSpec((root_ / "agent" / "agent.yaml").string(), {});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  RuleSet set = LoadSessionRules(*LoadAgentRules(*spec, ""), root_ / "proj");
  EXPECT_EQ(set.settings.context_mode, ContextMode::kKeep);  // the project's value is invalid
  EXPECT_EQ(set.settings.repeat_mode, RepeatMode::kAfterGap);
  EXPECT_EQ(set.settings.repeat_gap, 5);
  EXPECT_EQ(set.settings.interrupt_mode, InterruptMode::kToolOnly);
  ASSERT_EQ(set.warnings.size(), 1u);
  EXPECT_NE(set.warnings[0].find("ttsr.contextMode"), std::string::npos);
  EXPECT_EQ(set.settings_from.size(), 3u);
  EXPECT_EQ(set.rules.size(), 1u);
}

TEST_F(TtsrLoaderTest, EnabledFalseRegistersNothing) {
  Write("agent/agent.yaml", "model: script/echo\n");
  Write("proj/.lousho/config.yml", "ttsr:\n  enabled: false\n");
  Write("proj/.lousho/rules/r.md", Rule("x", "b"));
  auto spec = config::LoadAgentSpec((root_ / "agent" / "agent.yaml").string(), {});
  ASSERT_TRUE(spec.ok());
  RuleSet set = LoadSessionRules(*LoadAgentRules(*spec, ""), root_ / "proj");
  EXPECT_FALSE(set.settings.enabled);
  EXPECT_TRUE(set.rules.empty());
  ASSERT_EQ(set.skipped.size(), 1u);
  EXPECT_EQ(set.skipped[0].why, "ttsr.enabled is false");
}

TEST_F(TtsrLoaderTest, InvalidRegexInAFileWarnsWithFileLineAndOffset) {
  Write("agent/agent.yaml", "model: script/echo\n");
  Write("proj/.lousho/rules/bad.md", "---\ncondition: [\"a(b\", \"good\"]\n---\nb\n");
  auto spec = config::LoadAgentSpec((root_ / "agent" / "agent.yaml").string(), {});
  ASSERT_TRUE(spec.ok());
  RuleSet set = LoadSessionRules(*LoadAgentRules(*spec, ""), root_ / "proj");
  ASSERT_EQ(set.rules.size(), 1u);
  ASSERT_EQ(set.warnings.size(), 1u);
  EXPECT_NE(set.warnings[0].find("bad.md:2:13: condition 1 'a(b'"), std::string::npos)
      << set.warnings[0];
  EXPECT_NE(set.warnings[0].find("offset"), std::string::npos);
}

TEST_F(TtsrLoaderTest, InvalidRegexWarningsGiveTheLineOfTheCondition) {
  // A list (items on their own lines), a scalar, the legacy key, and front matter YAML refuses
  // (read line by line): each warning points at where the condition is written.
  Write("proj/.cursor/rules/list.md",
        "---\ndescription: x\ncondition:\n  - \"ok1\"\n  - 7\n  - \"a{2,1}\"\n  - "
        "\"(?<=a+)b\"\n---\nbody\n");
  Write("proj/.cursor/rules/scalar.md", "---\n\ncondition:   \"(unclosed[group\"\n---\nbody\n");
  Write("proj/.cursor/rules/legacy.md", "---\nttsr_trigger: \"x(\"\n---\nbody\n");
  Write("proj/.cursor/rules/lines.md", "---\ndescription: [unclosed\ncondition: (bad\n---\nbody\n");
  Write("agent/agent.yaml", "model: script/echo\n");
  auto spec = config::LoadAgentSpec((root_ / "agent" / "agent.yaml").string(), {});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  RuleSet set = LoadSessionRules(*LoadAgentRules(*spec, ""), root_ / "proj");
  const std::string dir = (root_ / "proj" / ".cursor" / "rules").string();
  std::vector<std::string> got;
  for (const auto& w : set.warnings) got.push_back(w.substr(0, w.find(": condition")));
  EXPECT_EQ(got, (std::vector<std::string>{dir + "/legacy.md:2:15", dir + "/lines.md:3:1",
                                           dir + "/list.md:6:5", dir + "/list.md:7:5",
                                           dir + "/scalar.md:3:14"}));
  for (const auto& w : set.warnings) EXPECT_NE(w.find("offset"), std::string::npos) << w;
}

TEST_F(TtsrLoaderTest, AFolderReachedTwiceIsReadOnce) {
  // The spec lists its own rules/ (also read as the agent folder's), and the spec lives in the
  // project's .lousho/ (whose rules/ the session reads as the project's): one rule each, no
  // "shadowed" copies, each warning once.
  Write("proj/.lousho/agent.yaml", "model: script/echo\nrules:\n  - rules\n  - rules/a.md\n");
  Write("proj/.lousho/rules/a.md", Rule("aaa", "a"));
  Write("proj/.lousho/rules/bad.md", "---\ncondition: [\"ok\", \"(x\"]\n---\nbad\n");
  auto spec = config::LoadAgentSpec((root_ / "proj" / ".lousho" / "agent.yaml").string(), {});
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  RuleSet set = LoadSessionRules(*LoadAgentRules(*spec, ""), root_ / "proj");
  std::vector<std::string> names;
  for (const auto& r : set.rules) names.push_back(r.name + ":" + r.origin);
  EXPECT_EQ(names, (std::vector<std::string>{"a:spec", "bad:spec"}));
  EXPECT_TRUE(set.skipped.empty()) << set.skipped[0].name << ": " << set.skipped[0].why;
  EXPECT_EQ(set.warnings.size(), 1u);
}

TEST_F(TtsrLoaderTest, SpecKeysAreCheckedWithPositions) {
  auto load = [&](const std::string& yaml) {
    Write("s/agent.yaml", "model: script/echo\n" + yaml);
    return config::LoadAgentSpec((root_ / "s" / "agent.yaml").string(), {});
  };
  auto e1 = load("ttsr:\n  contextMode: sometimes\n");
  ASSERT_FALSE(e1.ok());
  EXPECT_NE(e1.error().message.find("agent.yaml:3:16: ttsr.contextMode: expected one of"),
            std::string::npos)
      << e1.error().message;
  auto e2 = load("ttsr:\n  repeatgap: 3\n");
  ASSERT_FALSE(e2.ok());
  EXPECT_NE(e2.error().message.find("agent.yaml:3:3: unknown key 'repeatgap' in ttsr"),
            std::string::npos)
      << e2.error().message;
  auto e3 = load("rules:\n  - name: x\n    content: y\n");
  ASSERT_FALSE(e3.ok());
  EXPECT_NE(e3.error().message.find("agent.yaml:3:5: rule 'x': 'condition' is required"),
            std::string::npos)
      << e3.error().message;
  auto e4 = load("rules:\n  - missing/folder\n");
  ASSERT_FALSE(e4.ok());
  EXPECT_NE(e4.error().message.find("agent.yaml:3:5: rules: no such file or folder"),
            std::string::npos)
      << e4.error().message;
  auto e5 = load("rules:\n  - {name: x, content: y, condition: z, interruptMode: loud}\n");
  ASSERT_FALSE(e5.ok());
  auto e6 = load("ttsr:\n  repeatGap: -1\n");
  ASSERT_FALSE(e6.ok());
  auto ok = load(
      "ttsr: {enabled: true, contextMode: keep, interruptMode: never, repeatMode: once, "
      "repeatGap: 2}\nrules:\n  - {name: x, content: y, condition: [a, b], scope: text, globs: "
      "\"*.md\", description: d, alwaysApply: false, enabled: true}\n");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->ttsr.context_mode, "keep");
  EXPECT_EQ(ok->ttsr.repeat_gap, 2);
  ASSERT_EQ(ok->rules.size(), 1u);
  EXPECT_EQ(ok->rules[0].name, "x");
}

}  // namespace
}  // namespace lousho::agent::rules
