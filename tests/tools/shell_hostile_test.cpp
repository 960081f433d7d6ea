// The corpus of hostile shell lines (tests/tools/shell_hostile.txt): every way found past a deny
// rule stays denied, and the common commands beside them stay allowed.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/permissions.h"
#include "agent/tools/builtin_tools.h"

namespace lousho::agent {
namespace {

using A = PermissionAction;
using M = PermissionMode;

// Section name -> its commands, "⏎" turned into newlines.
std::map<std::string, std::vector<std::string>> ReadCorpus() {
  std::ifstream in(std::string(LOUSHO_SOURCE_DIR) + "/tests/tools/shell_hostile.txt");
  std::map<std::string, std::vector<std::string>> sections;
  std::string section;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.front() == '[' && line.back() == ']' && line.find(' ') == std::string::npos &&
        line.size() > 2 && std::isalpha(static_cast<unsigned char>(line[1]))) {
      section = line.substr(1, line.size() - 2);
      continue;
    }
    const std::string newline_mark = "\xe2\x8f\x8e";  // ⏎
    for (size_t at = line.find(newline_mark); at != std::string::npos;
         at = line.find(newline_mark, at + 1))
      line.replace(at, newline_mark.size(), "\n");
    sections[section].push_back(line);
  }
  return sections;
}

Json::Value Cmd(const std::string& c) {
  Json::Value v;
  v["command"] = c;
  return v;
}

class ShellHostileTest : public ::testing::Test {
 protected:
  std::map<std::string, std::vector<std::string>> corpus_ = ReadCorpus();
  std::unique_ptr<Tool> bash_ = tools::MakeBashTool();
  // The probe's narrow rules (default mode), plus rules for sourcing files.
  PermissionPolicy narrow_{{{"bash", "printf *", A::kAllow},
                            {"bash", "test *", A::kAllow},
                            {"bash", "echo *", A::kAllow},
                            {"bash", "[[ *", A::kAllow},
                            {"bash", "let *", A::kAllow},
                            {"bash", "read *", A::kAllow},
                            {"bash", "ls*", A::kAllow},
                            {"bash", "cat *", A::kAllow},
                            {"bash", "source *", A::kAllow},
                            {"bash", ". *", A::kAllow}}};
  PermissionPolicy deny_{{{"bash", "touch*", A::kDeny}}};
};

TEST_F(ShellHostileTest, CorpusHasEverySection) {
  EXPECT_GE(corpus_["hostile"].size(), 150u);
  EXPECT_GE(corpus_["narrow"].size(), 10u);
  EXPECT_GE(corpus_["benign"].size(), 20u);
}

TEST_F(ShellHostileTest, HostileLinesAreNeverAllowedByNarrowRulesAndDeniedInBypass) {
  for (const auto& c : corpus_["hostile"]) {
    EXPECT_NE(narrow_.Decide(*bash_, Cmd(c), M::kDefault), A::kAllow) << c;
    PermissionVerdict v = deny_.Evaluate(*bash_, Cmd(c), M::kBypass);
    EXPECT_EQ(v.action, A::kDeny) << c;
    EXPECT_NE(v.reason.find("touch*"), std::string::npos) << c;
  }
}

TEST_F(ShellHostileTest, NarrowRulesStillAllowWhatTheyName) {
  for (const auto& c : corpus_["narrow"]) {
    EXPECT_EQ(narrow_.Decide(*bash_, Cmd(c), M::kDefault), A::kAllow) << c;
    EXPECT_EQ(deny_.Decide(*bash_, Cmd(c), M::kBypass), A::kAllow) << c;
  }
}

TEST_F(ShellHostileTest, CommonCommandsAreNotDenied) {
  for (const auto& c : corpus_["benign"])
    EXPECT_EQ(deny_.Decide(*bash_, Cmd(c), M::kBypass), A::kAllow) << c;
}

}  // namespace
}  // namespace lousho::agent
