// apply_patch under the permission rules: every path of a patch is decided as `write` (a new
// file) or `edit` (a changed, deleted or moved-away file) would be, in one decision.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/permissions.h"
#include "agent/tools/builtin_tools.h"
#include "tests/tools/tool_test_util.h"

namespace lousho::agent {
namespace {

using testing::TempWorkspace;
using A = PermissionAction;
using M = PermissionMode;

Json::Value Patch(const std::string& body) {
  Json::Value a(Json::objectValue);
  a["input"] = "*** Begin Patch\n" + body + "*** End Patch\n";
  return a;
}

const char* const kAddDoc = "*** Add File: docs/new.md\n+hello\n";
const char* const kUpdateSrc = "*** Update File: src/a.cpp\n-one\n+ONE\n";
const char* const kDeleteSecret = "*** Delete File: secret/key.txt\n";

class ApplyPatchPermissionTest : public ::testing::Test {
 protected:
  std::unique_ptr<Tool> patch_ = MakeBuiltinTool("apply_patch");
  std::unique_ptr<Tool> edit_ = MakeBuiltinTool("edit");
};

TEST_F(ApplyPatchPermissionTest, EveryPathIsATargetUnderTheRulesOfItsChange) {
  std::vector<PermissionTarget> targets = patch_->PermissionTargets(
      Patch(std::string(kAddDoc) + kUpdateSrc + kDeleteSecret +
            "*** Update File: old.txt\n*** Move to: moved/new.txt\n@@\n-x\n+y\n"));
  std::vector<std::string> got;
  got.reserve(targets.size());
  for (const PermissionTarget& t : targets) got.push_back(t.subject + " as " + t.rules_of);
  EXPECT_EQ(got, (std::vector<std::string>{"docs/new.md as write", "src/a.cpp as edit",
                                           "secret/key.txt as edit", "old.txt as edit",
                                           "moved/new.txt as write"}));
  EXPECT_TRUE(patch_->PermissionTargets(Patch("*** Nope\n")).empty());
}

TEST_F(ApplyPatchPermissionTest, MixedAllowDenyAndAskPaths) {
  PermissionPolicy p({{"write", "docs/**", A::kAllow},
                      {"edit", "src/**", A::kAllow},
                      {"edit", "secret/**", A::kDeny},
                      {"apply_patch", "generated/**", A::kAsk}},
                     "/w");
  // Every path allowed by the rules of its change: no question.
  EXPECT_EQ(p.Decide(*patch_, Patch(std::string(kAddDoc) + kUpdateSrc), M::kDefault), A::kAllow);
  // A `write` rule does not cover an update, nor an `edit` rule an added file.
  EXPECT_EQ(p.Decide(*patch_, Patch("*** Update File: docs/old.md\n-a\n+b\n"), M::kDefault),
            A::kAsk);
  EXPECT_EQ(p.Decide(*patch_, Patch("*** Add File: src/b.cpp\n+x\n"), M::kDefault), A::kAsk);
  // One path left to the user: the whole patch is asked, once.
  EXPECT_EQ(p.Decide(*patch_, Patch(std::string(kAddDoc) + "*** Add File: generated/x\n+x\n"),
                     M::kDefault),
            A::kAsk);
  // One denied path denies the patch in every mode, and the reason names it and the rule.
  for (M mode : {M::kDefault, M::kAcceptEdits, M::kBypass}) {
    PermissionVerdict v =
        p.Evaluate(*patch_, Patch(std::string(kAddDoc) + kUpdateSrc + kDeleteSecret), mode);
    EXPECT_EQ(v.action, A::kDeny);
    EXPECT_NE(v.reason.find("secret/key.txt: denied by permission rule edit \"secret/**\""),
              std::string::npos)
        << v.reason;
  }
  // accept-edits allows what no rule asks about; an ask rule still asks.
  EXPECT_EQ(p.Decide(*patch_, Patch("*** Add File: other.txt\n+x\n"), M::kAcceptEdits), A::kAllow);
  EXPECT_EQ(p.Decide(*patch_, Patch("*** Add File: generated/x\n+x\n"), M::kAcceptEdits), A::kAsk);
  EXPECT_EQ(p.Decide(*patch_, Patch(kAddDoc), M::kPlan), A::kDeny);
  // The edit tool itself is decided by its own rules only, as before.
  Json::Value edit_args(Json::objectValue);
  edit_args["path"] = "secret/key.txt";
  EXPECT_EQ(p.Decide(*edit_, edit_args, M::kDefault), A::kDeny);
}

TEST_F(ApplyPatchPermissionTest, AMoveIntoADeniedFolderIsDenied) {
  PermissionPolicy p({{"write", "vault/**", A::kDeny}, {"*", "*", A::kAllow}}, "/w");
  const Json::Value move =
      Patch("*** Update File: notes.txt\n*** Move to: vault/notes.txt\n@@\n-a\n+b\n");
  PermissionVerdict v = p.Evaluate(*patch_, move, M::kBypass);
  EXPECT_EQ(v.action, A::kDeny);
  EXPECT_NE(v.reason.find("vault/notes.txt: denied by permission rule write \"vault/**\""),
            std::string::npos)
      << v.reason;
  // The same change without the move is allowed.
  EXPECT_EQ(p.Decide(*patch_, Patch("*** Update File: notes.txt\n@@\n-a\n+b\n"), M::kDefault),
            A::kAllow);
  // Moving a file out of the denied folder is an edit there: allowed by the catch-all.
  EXPECT_EQ(p.Decide(*patch_, Patch("*** Update File: vault/a\n*** Move to: b\n@@\n-a\n+b\n"),
                     M::kDefault),
            A::kAllow);
}

TEST_F(ApplyPatchPermissionTest, AlwaysAllowCoversExactlyThePatchesPaths) {
  PermissionPolicy p({}, "/w");
  const Json::Value two = Patch(std::string(kAddDoc) + kUpdateSrc);
  ASSERT_EQ(p.Decide(*patch_, two, M::kDefault), A::kAsk);
  p.RememberAnswer(*patch_, two, A::kAllow);
  EXPECT_EQ(p.Decide(*patch_, two, M::kDefault), A::kAllow);
  EXPECT_EQ(p.Decide(*patch_, Patch(kUpdateSrc), M::kDefault), A::kAllow);
  // A path the answer did not name is asked again, and so is a patch that includes it.
  EXPECT_EQ(p.Decide(*patch_, Patch("*** Add File: docs/other.md\n+x\n"), M::kDefault), A::kAsk);
  EXPECT_EQ(p.Decide(*patch_, Patch(std::string(kUpdateSrc) + "*** Add File: docs/other.md\n+x\n"),
                     M::kDefault),
            A::kAsk);
  // "Always reject" of one path denies every patch touching it.
  p.RememberAnswer(*patch_, Patch("*** Delete File: old.txt\n"), A::kDeny);
  PermissionVerdict v = p.Evaluate(
      *patch_, Patch(std::string(kUpdateSrc) + "*** Delete File: old.txt\n"), M::kDefault);
  EXPECT_EQ(v.action, A::kDeny);
  EXPECT_NE(v.reason.find("old.txt: the user rejected"), std::string::npos) << v.reason;
}

TEST_F(ApplyPatchPermissionTest, AnOutsidePathFailsBeforeAskingAndChangesNothing) {
  TempWorkspace ws;
  ws.Write("a.txt", "one\n");
  ToolContext ctx = ws.Context();
  const Json::Value args = Patch("*** Update File: a.txt\n-one\n+ONE\n*** Add File: ../" +
                                 ws.outside().filename().string() + "/x.txt\n+x\n");
  std::string why = patch_->CheckBeforeAsking(args, ctx);
  EXPECT_NE(why.find("outside"), std::string::npos) << why;
  EXPECT_NE(why.find("x.txt"), std::string::npos) << why;
  EXPECT_EQ(ws.Read("a.txt"), "one\n");
  EXPECT_FALSE(std::filesystem::exists(ws.outside() / "x.txt"));
  // The policy sees the outside path as an absolute one: only rules for every path match it.
  PermissionPolicy p({{"edit", "*", A::kAllow}, {"write", "**", A::kAllow}}, ws.root());
  EXPECT_EQ(p.Decide(*patch_, args, M::kDefault), A::kAllow);
  PermissionPolicy q({{"write", "x.txt", A::kAllow}, {"edit", "a.txt", A::kAllow}}, ws.root());
  EXPECT_EQ(q.Decide(*patch_, args, M::kDefault), A::kAsk);
  // A patch that applies has nothing to say before asking.
  EXPECT_EQ(patch_->CheckBeforeAsking(Patch("*** Update File: a.txt\n-one\n+ONE\n"), ctx), "");
}

}  // namespace
}  // namespace lousho::agent
