// support/suggest.h: the edit distance and the closest known word.
#include "support/suggest.h"

#include <gtest/gtest.h>

namespace lousho {
namespace {

TEST(SuggestTest, EditDistanceCountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("acp", "acp"), 0u);
  EXPECT_EQ(EditDistance("acpp", "acp"), 1u);
  EXPECT_EQ(EditDistance("ac", "acp"), 1u);
  EXPECT_EQ(EditDistance("axp", "acp"), 1u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("MaxSteps", "maxsteps"), 0u) << "ASCII case is ignored";
}

TEST(SuggestTest, ClosestMatchOnlyWhenCloseEnough) {
  const std::vector<std::string> commands = {"acp", "validate", "rules", "mcp", "setup"};
  EXPECT_EQ(ClosestMatch("acpp", commands), "acp");
  EXPECT_EQ(ClosestMatch("valdiate", commands), "validate");
  EXPECT_EQ(ClosestMatch("--verison", {"--version", "--help", "--log-level"}), "--version");
  EXPECT_EQ(ClosestMatch("anthropic/claude-sonet-4-5",
                         {"anthropic/claude-opus-4-1", "anthropic/claude-sonnet-4-5"}),
            "anthropic/claude-sonnet-4-5");
  // Far from everything: no guess (at most max(2, length / 3) edits).
  EXPECT_EQ(ClosestMatch("frobnicate", commands), std::nullopt);
  EXPECT_EQ(ClosestMatch("xyz", commands), std::nullopt);
  EXPECT_EQ(ClosestMatch("acp", {}), std::nullopt);
  // Ties go to the first listed.
  EXPECT_EQ(ClosestMatch("mcq", {"mcp", "mcr"}), "mcp");
}

}  // namespace
}  // namespace lousho
