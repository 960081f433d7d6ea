// Tests for config/sandbox_spec: the spec's `sandbox:`, `--sandbox`, the mode per permission
// mode and the policy a command gets.
#include "config/sandbox_spec.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "support/json_util.h"

namespace lousho::config {
namespace {

Json::Value J(const std::string& text) {
  auto v = ParseJson(text);
  return v.ok() ? *v : Json::Value();
}

bool Has(const std::vector<std::string>& list, const std::string& p) {
  return std::find(list.begin(), list.end(), p) != list.end();
}

TEST(SandboxSpecTest, ModeNameOrMap) {
  auto s = ParseSandboxSpec(Json::Value("read-only"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->mode, SandboxMode::kReadOnly);
  auto m = ParseSandboxSpec(J(R"({"mode": "workspace-write", "network": "off",
      "writable": ["~/bin", "out"], "deny_read": ["/srv/keys"], "modes": {"bypass": "off"},
      "required": true, "escalation": "deny", "mcp": true, "caches": false})"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->mode, SandboxMode::kWorkspaceWrite);
  EXPECT_FALSE(m->network);
  EXPECT_EQ(m->writable, (std::vector<std::string>{"~/bin", "out"}));
  EXPECT_EQ(m->deny_read, std::vector<std::string>{"/srv/keys"});
  EXPECT_EQ(m->modes.at("bypass"), SandboxMode::kOff);
  EXPECT_TRUE(m->required);
  EXPECT_EQ(m->escalation, SandboxEscalation::kDeny);
  EXPECT_TRUE(m->mcp);
  EXPECT_FALSE(m->default_caches);
  auto off = ParseSandboxSpec(Json::Value(false));
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->mode, SandboxMode::kOff);
  auto b = ParseSandboxSpec(J(R"({"network": false})"));
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->network);
}

TEST(SandboxSpecTest, ErrorsNameTheKey) {
  auto bad_mode = ParseSandboxSpec(Json::Value("workspace"));
  ASSERT_FALSE(bad_mode.ok());
  EXPECT_NE(bad_mode.error().message.find("expected workspace-write"), std::string::npos);
  auto bad_net = ParseSandboxSpec(J(R"({"network": "maybe"})"));
  ASSERT_FALSE(bad_net.ok());
  EXPECT_NE(bad_net.error().message.find("sandbox.network"), std::string::npos);
  auto unknown = ParseSandboxSpec(J(R"({"netwrk": "off"})"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("sandbox.netwrk: unknown key"), std::string::npos);
  auto bad_path = ParseSandboxSpec(J(R"({"writable": ["ok", ""]})"));
  ASSERT_FALSE(bad_path.ok());
  EXPECT_NE(bad_path.error().message.find("sandbox.writable[1]"), std::string::npos);
  EXPECT_FALSE(ParseSandboxSpec(J("[1]")).ok());
  EXPECT_FALSE(ParseSandboxSpec(J(R"({"escalation": "sometimes"})")).ok());
  EXPECT_FALSE(ParseSandboxSpec(J(R"({"modes": {"plan": "nope"}})")).ok());
}

TEST(SandboxSpecTest, FlagOverridesModeAndNetwork) {
  SandboxSpec s;
  ASSERT_TRUE(ApplySandboxFlag("read-only,network=off", &s).ok());
  EXPECT_EQ(s.mode, SandboxMode::kReadOnly);
  EXPECT_FALSE(s.network);
  ASSERT_TRUE(ApplySandboxFlag("off", &s).ok());
  EXPECT_EQ(s.mode, SandboxMode::kOff);
  EXPECT_FALSE(ApplySandboxFlag("strict", &s).ok());
  EXPECT_FALSE(ApplySandboxFlag("off,net=off", &s).ok());
}

TEST(SandboxSpecTest, NetworkLoopbackInTheSpecAndTheFlag) {
  auto m = ParseSandboxSpec(J(R"({"mode": "workspace-write", "network": "loopback"})"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_FALSE(m->network);
  EXPECT_TRUE(m->loopback);
  SandboxPlace place{"/w", {}, "/h", "/tmp", ""};
  SandboxPolicy p = ComposeSandboxPolicy(*m, SandboxMode::kWorkspaceWrite, place);
  EXPECT_FALSE(p.network);
  EXPECT_TRUE(p.loopback);
  auto bad = ParseSandboxSpec(J(R"({"network": "lo"})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.find("sandbox.network: expected on, off or loopback"), 0u)
      << bad.error().message;
  SandboxSpec s;
  ASSERT_TRUE(ApplySandboxFlag("workspace-write,network=loopback", &s).ok());
  EXPECT_FALSE(s.network);
  EXPECT_TRUE(s.loopback);
  ASSERT_TRUE(ApplySandboxFlag("workspace-write,network=on", &s).ok());
  EXPECT_TRUE(s.network);
  EXPECT_FALSE(s.loopback);
  EXPECT_FALSE(ApplySandboxFlag("workspace-write,network=lo", &s).ok());
  // The launcher of editor terminals carries it.
  std::vector<std::string> args = SandboxLauncherArgs(p);
  EXPECT_NE(std::find(args.begin(), args.end(), "--network-loopback"), args.end());
}

TEST(SandboxSpecTest, WhatAKernelLacksIsSaid) {
  EXPECT_NE(SandboxMissing(0, true).find("no Landlock"), std::string::npos);
  EXPECT_NE(SandboxMissing(2, true).find("Landlock ABI 2 cannot refuse truncating"),
            std::string::npos);
  EXPECT_NE(SandboxMissing(4, true).find("Landlock ABI 4 cannot keep commands from signalling"),
            std::string::npos);
  EXPECT_EQ(SandboxMissing(6, true), "");
  EXPECT_EQ(SandboxMissing(7, false), "no seccomp");
  EXPECT_EQ(SandboxMissing(5, false).find("; no seccomp") != std::string::npos, true);
}

TEST(SandboxSpecTest, ModePerPermissionMode) {
  if (!ProbeSandbox().usable()) GTEST_SKIP() << ProbeSandbox().missing;
  SandboxSpec s;
  EXPECT_EQ(SandboxModeFor(s, "default"), SandboxMode::kWorkspaceWrite);
  EXPECT_EQ(SandboxModeFor(s, "plan"), SandboxMode::kReadOnly);
  s.modes["bypass"] = SandboxMode::kOff;
  EXPECT_EQ(SandboxModeFor(s, "bypass"), SandboxMode::kOff);
  s.mode = SandboxMode::kOff;
  EXPECT_EQ(SandboxModeFor(s, "plan"), SandboxMode::kOff);  // off is off everywhere
}

TEST(SandboxSpecTest, PolicyHoldsRootsTmpAndTheSpecsPaths) {
  SandboxSpec s;
  s.writable = {"~/extra", "build", "/abs"};
  s.deny_read = {"~/private"};
  SandboxPlace place{"/work/proj", {"/work/proj", "/work/lib"}, "/home/me", "/tmp/t", "/c.json"};
  SandboxPolicy p = ComposeSandboxPolicy(s, SandboxMode::kWorkspaceWrite, place);
  EXPECT_TRUE(p.active());
  for (const char* w :
       {"/tmp/t", "/work/proj", "/work/lib", "/home/me/extra", "/work/proj/build", "/abs"})
    EXPECT_TRUE(Has(p.writable, w)) << w;
  EXPECT_TRUE(Has(p.deny_read, "/home/me/.ssh"));
  EXPECT_TRUE(Has(p.deny_read, "/home/me/private"));
  EXPECT_TRUE(Has(p.deny_read, "/c.json"));
  SandboxPolicy ro = ComposeSandboxPolicy(s, SandboxMode::kReadOnly, place);
  EXPECT_EQ(ro.writable, std::vector<std::string>{"/tmp/t"});
  EXPECT_FALSE(ComposeSandboxPolicy(s, SandboxMode::kOff, place).active());
}

TEST(SandboxSpecTest, ADeniedFolderHoldingTheWorkspaceIsNotDenied) {
  SandboxSpec s;
  s.deny_read = {"/work", "/work/proj/.env"};
  SandboxPlace place{"/work/proj", {}, "", "/tmp", ""};
  SandboxPolicy p = ComposeSandboxPolicy(s, SandboxMode::kWorkspaceWrite, place);
  EXPECT_FALSE(Has(p.deny_read, "/work"));
  EXPECT_TRUE(Has(p.deny_read, "/work/proj/.env"));
}

}  // namespace
}  // namespace lousho::config
