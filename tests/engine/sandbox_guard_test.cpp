// Tests for agent/sandbox_guard: the policy per permission mode, escalation of
// `"sandbox": "off"` (asked, remembered per command prefix, refused by the spec) and the notice.
#include "agent/sandbox_guard.h"

#include <gtest/gtest.h>

#include "agent/tools/builtin_tools.h"

namespace lousho::agent {
namespace {

Json::Value Call(const std::string& command, bool outside) {
  Json::Value a(Json::objectValue);
  a["command"] = command;
  if (outside) a["sandbox"] = "off";
  return a;
}

config::SandboxPlace Place() { return {"/work/proj", {"/work/proj"}, "", "/tmp", ""}; }

class SandboxGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ProbeSandbox().usable()) GTEST_SKIP() << ProbeSandbox().missing;
  }
  std::unique_ptr<Tool> bash_ = tools::MakeBashTool();
  std::unique_ptr<Tool> read_ = tools::MakeReadTool();
};

TEST_F(SandboxGuardTest, PolicyPerPermissionMode) {
  SandboxGuard g(config::SandboxSpec(), Place());
  auto def = g.PolicyFor(PermissionMode::kDefault);
  ASSERT_TRUE(def);
  EXPECT_EQ(def->mode, SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(g.PolicyFor(PermissionMode::kDefault), def);  // built once
  auto plan = g.PolicyFor(PermissionMode::kPlan);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->mode, SandboxMode::kReadOnly);
  config::SandboxSpec off;
  off.mode = SandboxMode::kOff;
  SandboxGuard none(off, Place());
  EXPECT_FALSE(none.PolicyFor(PermissionMode::kDefault));
  EXPECT_FALSE(none.HookPolicy());
  EXPECT_EQ(none.Notice(), "");
}

TEST_F(SandboxGuardTest, OutsideAsksUntilAnAlwaysAnswerForThePrefix) {
  SandboxGuard g(config::SandboxSpec(), Place());
  OutsideSandbox plain = g.Outside(*bash_, Call("git push", false), PermissionMode::kDefault);
  EXPECT_FALSE(plain.wanted);
  OutsideSandbox o = g.Outside(*bash_, Call("git push origin", true), PermissionMode::kBypass);
  EXPECT_TRUE(o.wanted);
  EXPECT_TRUE(o.asks) << "asked even in bypass";
  EXPECT_EQ(o.title, "Run outside the sandbox: git push origin?");
  g.RememberOutside(*bash_, Call("git push origin", true));
  OutsideSandbox again = g.Outside(*bash_, Call("git push other", true), PermissionMode::kDefault);
  EXPECT_FALSE(again.asks);
  EXPECT_TRUE(again.allowed);
  OutsideSandbox other = g.Outside(*bash_, Call("rm -rf build", true), PermissionMode::kDefault);
  EXPECT_TRUE(other.asks) << "another prefix still asks";
  EXPECT_FALSE(g.Outside(*read_, Call("x", true), PermissionMode::kDefault).wanted);
}

TEST_F(SandboxGuardTest, SpecDecidesEscalation) {
  config::SandboxSpec deny;
  deny.escalation = config::SandboxEscalation::kDeny;
  OutsideSandbox d =
      SandboxGuard(deny, Place()).Outside(*bash_, Call("make", true), PermissionMode::kDefault);
  EXPECT_TRUE(d.wanted);
  EXPECT_NE(d.refusal.find("escalation: deny"), std::string::npos);
  config::SandboxSpec rules;
  rules.escalation = config::SandboxEscalation::kRules;
  OutsideSandbox r =
      SandboxGuard(rules, Place()).Outside(*bash_, Call("make", true), PermissionMode::kDefault);
  EXPECT_TRUE(r.wanted);
  EXPECT_FALSE(r.asks);
  EXPECT_TRUE(r.refusal.empty());
}

TEST_F(SandboxGuardTest, NoticeIsToldOnce) {
  SandboxGuard g(config::SandboxSpec(), Place());
  const std::string first = g.TakeNotice();
  EXPECT_EQ(first, g.Notice());
  EXPECT_EQ(g.TakeNotice(), "");
}

}  // namespace
}  // namespace lousho::agent
