// lousho run's permission gate: --allow / --deny flags parsed as the spec's rules, calls that
// would ask allowed by a matching --allow or --yes, refused (and reported) otherwise.
#include "local/permission_gate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lousho::local {
namespace {

agent::PermissionRequest GateRequest(const std::string& tool, Json::Value args) {
  agent::PermissionRequest r;
  r.tool_call_id = "call-1";
  r.tool_name = tool;
  r.title = tool + " call";
  r.raw_input = std::move(args);
  return r;
}

Json::Value BashArgs(const std::string& command) {
  Json::Value v(Json::objectValue);
  v["command"] = command;
  return v;
}

TEST(RunRuleFlag, ParsesToolAndPattern) {
  auto bare = ParseRuleFlag("read", agent::PermissionAction::kAllow);
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->tool, "read");
  EXPECT_EQ(bare->pattern, "*");
  auto with = ParseRuleFlag("bash:git status:*", agent::PermissionAction::kDeny);
  ASSERT_TRUE(with.ok());
  EXPECT_EQ(with->tool, "bash");
  EXPECT_EQ(with->pattern, "git status:*");  // only the first colon splits
  EXPECT_EQ(with->action, agent::PermissionAction::kDeny);
  EXPECT_FALSE(ParseRuleFlag("", agent::PermissionAction::kAllow).ok());
  EXPECT_FALSE(ParseRuleFlag(":x", agent::PermissionAction::kAllow).ok());
  EXPECT_FALSE(ParseRuleFlag("bash:", agent::PermissionAction::kAllow).ok());
}

TEST(RunPermissionGate, AllowsWhatAnAllowFlagMatchesAndRefusesTheRest) {
  std::vector<Refusal> refused;
  GateOptions o;
  o.allow.push_back(*ParseRuleFlag("bash:git status*", agent::PermissionAction::kAllow));
  PermissionGate gate(o, [&](const Refusal& r) { refused.push_back(r); });
  EXPECT_EQ(gate.RequestPermission("s", GateRequest("bash", BashArgs("git status --short")), {}),
            agent::PermissionDecision::kAllowOnce);
  EXPECT_EQ(gate.RequestPermission("s", GateRequest("bash", BashArgs("git push")), {}),
            agent::PermissionDecision::kRejectOnce);
  // A compound line runs only when every command in it is allowed.
  EXPECT_EQ(gate.RequestPermission("s", GateRequest("bash", BashArgs("git status; rm -rf x")), {}),
            agent::PermissionDecision::kRejectOnce);
  ASSERT_EQ(refused.size(), 2u);
  EXPECT_EQ(gate.refusals(), 2);
  EXPECT_EQ(refused[0].tool_name, "bash");
  EXPECT_EQ(refused[0].title, "bash call");
  EXPECT_EQ(refused[0].suggestion, "--allow 'bash:git push{, *}'");
}

TEST(RunPermissionGate, YesAllowsEverythingThatAsks) {
  GateOptions o;
  o.yes = true;
  int told = 0;
  PermissionGate gate(o, [&](const Refusal&) { ++told; });
  EXPECT_EQ(gate.RequestPermission("s", GateRequest("bash", BashArgs("make")), {}),
            agent::PermissionDecision::kAllowOnce);
  EXPECT_EQ(told, 0);
  EXPECT_EQ(gate.refusals(), 0);
}

TEST(RunPermissionGate, AReadOnlyToolTheFlagsDoNotNameIsRefused) {
  // The agent's policy asked about it (a rule says ask): no flag means no.
  PermissionGate gate(GateOptions{}, nullptr);
  Json::Value args(Json::objectValue);
  args["path"] = "notes.txt";
  EXPECT_EQ(gate.RequestPermission("s", GateRequest("read", args), {}),
            agent::PermissionDecision::kRejectOnce);
  EXPECT_EQ(gate.refusals(), 1);
}

TEST(RunPermissionGate, FilePatternsAreRelativeToTheFolder) {
  GateOptions o;
  o.cwd = "/work/project";
  o.allow.push_back(*ParseRuleFlag("write:docs/**", agent::PermissionAction::kAllow));
  PermissionGate gate(o, nullptr);
  Json::Value in_docs(Json::objectValue);
  in_docs["path"] = "/work/project/docs/a.md";
  in_docs["content"] = "x";
  Json::Value outside = in_docs;
  outside["path"] = "/work/project/src/a.cpp";
  EXPECT_EQ(gate.RequestPermission("s", GateRequest("write", in_docs), {}),
            agent::PermissionDecision::kAllowOnce);
  EXPECT_EQ(gate.RequestPermission("s", GateRequest("write", outside), {}),
            agent::PermissionDecision::kRejectOnce);
}

TEST(RunPermissionGate, ACancelledRequestIsCancelled) {
  GateOptions o;
  o.yes = true;
  PermissionGate gate(o, nullptr);
  CancelSource cancel;
  cancel.Cancel(CancelCause::kUser);
  EXPECT_EQ(gate.RequestPermission("s", GateRequest("bash", BashArgs("make")), cancel.token()),
            agent::PermissionDecision::kCancelled);
}

}  // namespace
}  // namespace lousho::local
