// The Seatbelt profile of the macOS sandbox (support/sandbox_seatbelt.h), as text: made and checked
// on every system; macOS runs it (scripts/check-seatbelt in the release workflow's macOS jobs).
#include <gtest/gtest.h>

#include "support/sandbox_seatbelt.h"

namespace lousho {
namespace {

SandboxPolicy Workspace() {
  SandboxPolicy p;
  p.mode = SandboxMode::kWorkspaceWrite;
  p.writable = {"/Users/me/proj", "/tmp/lousho-t"};
  p.deny_read = {"/Users/me/.ssh", "/Users/me/my \"odd\" dir"};
  return p;
}

TEST(SeatbeltTest, WritesOnlyBeneathTheWritableFoldersAndDevices) {
  const std::string p = SeatbeltProfile(Workspace());
  EXPECT_EQ(p.rfind("(version 1)\n(allow default)\n", 0), 0u) << p;
  const size_t deny = p.find("(deny file-write*\n  (require-not (require-any");
  ASSERT_NE(deny, std::string::npos) << p;
  const std::string rule = p.substr(deny, p.find('\n', p.find('\n', deny) + 1) - deny);
  EXPECT_NE(rule.find("(subpath \"/Users/me/proj\")"), std::string::npos) << rule;
  // /tmp is /private/tmp on macOS: both forms.
  EXPECT_NE(rule.find("(subpath \"/tmp/lousho-t\") (subpath \"/private/tmp/lousho-t\")"),
            std::string::npos)
      << rule;
  EXPECT_NE(rule.find("(literal \"/dev/null\")"), std::string::npos) << rule;
  EXPECT_EQ(rule.find(".ssh"), std::string::npos) << rule;
}

TEST(SeatbeltTest, TheDenyListIsNeitherReadNorWrittenAndQuotesHold) {
  const std::string p = SeatbeltProfile(Workspace());
  EXPECT_NE(p.find("(deny file-read* file-write*\n  (require-any (subpath \"/Users/me/.ssh\") "
                   "(subpath \"/Users/me/my \\\"odd\\\" dir\")))"),
            std::string::npos)
      << p;
  EXPECT_NE(p.find("(deny signal (require-not (target same-sandbox)))"), std::string::npos);
}

TEST(SeatbeltTest, NetworkOffLoopbackAndOn) {
  SandboxPolicy p = Workspace();
  EXPECT_EQ(SeatbeltProfile(p).find("network"), std::string::npos) << "network on: no rule";
  p.network = false;
  const std::string off = SeatbeltProfile(p);
  EXPECT_NE(off.find("(deny network-outbound (require-not (require-any (remote unix-socket))))"),
            std::string::npos)
      << off;
  EXPECT_EQ(off.find("localhost"), std::string::npos);
  p.loopback = true;
  const std::string lo = SeatbeltProfile(p);
  EXPECT_NE(lo.find("(deny network-outbound (require-not (require-any (remote unix-socket) "
                    "(remote ip \"localhost:*\"))))"),
            std::string::npos)
      << lo;
  EXPECT_NE(lo.find("(local ip \"localhost:*\")"), std::string::npos);
}

TEST(SeatbeltTest, TheCommandRunsThroughSandboxExec) {
  const auto argv = SeatbeltArgv(Workspace(), {"/bin/sh", "-c", "make"});
  ASSERT_EQ(argv.size(), 7u);
  EXPECT_EQ(argv[0], "/usr/bin/sandbox-exec");
  EXPECT_EQ(argv[1], "-p");
  EXPECT_EQ(argv[2], SeatbeltProfile(Workspace()));
  EXPECT_EQ(argv[3], "--");
  EXPECT_EQ(argv[6], "make");
#ifndef __APPLE__
  // Elsewhere the command runs as it is (Linux confines the child itself).
  SandboxPolicy p = Workspace();
  EXPECT_EQ(SandboxedArgv({"/bin/true"}, &p), std::vector<std::string>{"/bin/true"});
#endif
}

}  // namespace
}  // namespace lousho
