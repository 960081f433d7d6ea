// Tests of `lousho rules list|test` through the built binary.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/json_util.h"

namespace lousho {
namespace {
namespace fs = std::filesystem;

struct Ran {
  int exit_code = -1;
  std::string out, err;
};

Ran RunLousho(const std::vector<std::string>& args) {
  fs::path dir = fs::temp_directory_path() / ("lousho-rules-cli-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string cmd = "'" + std::string(LOUSHO_BINARY) + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " </dev/null >'" + (dir / "out").string() + "' 2>'" + (dir / "err").string() + "'";
  int status = std::system(cmd.c_str());
  Ran r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::stringstream o, e;
  o << std::ifstream(dir / "out").rdbuf();
  e << std::ifstream(dir / "err").rdbuf();
  r.out = o.str();
  r.err = e.str();
  fs::remove_all(dir);
  return r;
}

class TtsrCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cwd_ = fs::temp_directory_path() / ("lousho-rules-cwd-" + std::to_string(getpid()));
    fs::remove_all(cwd_);
    fs::create_directories(cwd_ / ".cursor" / "rules");
    std::ofstream(cwd_ / ".cursor" / "rules" / "ts-no-any.mdc")
        << "---\ncondition: \": any\"\nscope: \"tool:write(*.ts)\"\ninterruptMode: never\n---\n"
           "Type it.\n";
    std::ofstream(cwd_ / ".cursor" / "rules" / "broken.mdc") << "---\ncondition: \"a(\"\n---\nx\n";
  }
  void TearDown() override { fs::remove_all(cwd_); }
  const std::string spec_ = std::string(LOUSHO_SOURCE_DIR) + "/tests/transcripts/ttsr.yaml";
  fs::path cwd_;
};

TEST_F(TtsrCliTest, ListShowsRulesSettingsAndWarnings) {
  Ran r = RunLousho({"rules", "list", spec_, "--cwd", cwd_.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = ParseJson(r.out);
  ASSERT_TRUE(j.ok()) << r.out;
  const Json::Value& rules = MemberOrNull(*j, "rules");
  ASSERT_EQ(rules.size(), 3u) << r.out;
  EXPECT_EQ(StringOr(ElementOrNull(rules, 0), "name"), "no-forbidden");
  EXPECT_EQ(StringOr(ElementOrNull(rules, 2), "name"), "ts-no-any");
  EXPECT_EQ(StringOr(ElementOrNull(rules, 2), "origin"), ".cursor");
  EXPECT_EQ(StringOr(ElementOrNull(rules, 2), "path"), ".cursor/rules/ts-no-any.mdc");
  EXPECT_EQ(StringOr(ElementOrNull(rules, 2), "interruptMode"), "never");
  EXPECT_EQ(StringOr(MemberOrNull(*j, "settings"), "contextMode"), "discard");
  const Json::Value& warnings = MemberOrNull(*j, "warnings");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(AsString(ElementOrNull(warnings, 0)).value_or("").find("broken.mdc"),
            std::string::npos);
  // The text form says the same.
  Ran text = RunLousho({"rules", "list", spec_, "--cwd", cwd_.string()});
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("3 rule(s) registered"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("skipped: broken"), std::string::npos) << text.out;
}

TEST_F(TtsrCliTest, TestSaysWhichRulesFire) {
  Ran r = RunLousho(
      {"rules", "test", spec_, "--cwd", cwd_.string(), "--json", "it says FORBIDDEN_TOKEN"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = ParseJson(r.out);
  ASSERT_TRUE(j.ok());
  const Json::Value& hit = MemberOrNull(*j, "triggered");
  ASSERT_EQ(hit.size(), 1u);
  EXPECT_EQ(StringOr(ElementOrNull(hit, 0), "name"), "no-forbidden");
  EXPECT_TRUE(BoolOr(ElementOrNull(hit, 0), "interrupts", false));

  // Tool source: the scope glob needs the path.
  Ran tool = RunLousho({"rules", "test", spec_, "--cwd", cwd_.string(), "--json", "--source",
                        "tool", "--tool", "write", "--path", "src/a.ts", "let x: any"});
  ASSERT_EQ(tool.exit_code, 0) << tool.out << tool.err;
  auto t = ParseJson(tool.out);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(MemberOrNull(*t, "triggered").size(), 1u);
  EXPECT_FALSE(BoolOr(ElementOrNull(MemberOrNull(*t, "triggered"), 0), "interrupts", true));
  Ran py = RunLousho({"rules", "test", spec_, "--cwd", cwd_.string(), "--source", "tool", "--tool",
                      "write", "--path", "a.py", "let x: any"});
  EXPECT_EQ(py.exit_code, 2) << py.out;  // nothing fires
  EXPECT_NE(py.out.find("not triggered: ts-no-any"), std::string::npos) << py.out;
  // Thinking is not watched by default.
  Ran th = RunLousho(
      {"rules", "test", spec_, "--cwd", cwd_.string(), "--source", "thinking", "FORBIDDEN_TOKEN"});
  EXPECT_EQ(th.exit_code, 2);
  EXPECT_NE(th.out.find("scope does not include thinking"), std::string::npos) << th.out;
}

}  // namespace
}  // namespace lousho
