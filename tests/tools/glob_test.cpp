// Tests for support/glob: path and text modes, classes, braces, escapes.
#include "support/glob.h"

#include <gtest/gtest.h>

namespace lousho {
namespace {

TEST(GlobTest, StarStopsAtSlashInPathMode) {
  EXPECT_TRUE(GlobMatch("*.h", "a.h"));
  EXPECT_FALSE(GlobMatch("*.h", "src/a.h"));
  EXPECT_TRUE(GlobMatch("src/*.cpp", "src/main.cpp"));
  EXPECT_FALSE(GlobMatch("src/*.cpp", "src/x/main.cpp"));
  EXPECT_TRUE(GlobMatch("?.c", "a.c"));
  EXPECT_FALSE(GlobMatch("?", "/"));
}

TEST(GlobTest, DoubleStarSpansSegments) {
  EXPECT_TRUE(GlobMatch("**/*.cpp", "main.cpp"));
  EXPECT_TRUE(GlobMatch("**/*.cpp", "a/b/c/main.cpp"));
  EXPECT_FALSE(GlobMatch("**/*.cpp", "a/b/main.h"));
  EXPECT_TRUE(GlobMatch("src/**", "src/a"));
  EXPECT_TRUE(GlobMatch("src/**", "src/a/b/c"));
  EXPECT_FALSE(GlobMatch("src/**", "other/a"));
  EXPECT_TRUE(GlobMatch("a/**/b", "a/b"));
  EXPECT_TRUE(GlobMatch("a/**/b", "a/x/y/b"));
  EXPECT_FALSE(GlobMatch("a/**/b", "a/x/y/c"));
  EXPECT_TRUE(GlobMatch("docs/**", "docs/guide/intro.md"));
}

TEST(GlobTest, TextModeStarMatchesEverything) {
  EXPECT_TRUE(GlobMatch("git status*", "git status --short", GlobMode::kText));
  EXPECT_TRUE(GlobMatch("git status*", "git status", GlobMode::kText));
  EXPECT_FALSE(GlobMatch("git status*", "git push", GlobMode::kText));
  EXPECT_TRUE(GlobMatch("cat *", "cat /etc/passwd", GlobMode::kText));
}

TEST(GlobTest, ClassesBracesAndEscapes) {
  EXPECT_TRUE(GlobMatch("[abc].txt", "b.txt"));
  EXPECT_FALSE(GlobMatch("[abc].txt", "d.txt"));
  EXPECT_TRUE(GlobMatch("[a-c]x", "cx"));
  EXPECT_TRUE(GlobMatch("[!a]x", "bx"));
  EXPECT_FALSE(GlobMatch("[^a]x", "ax"));
  EXPECT_TRUE(GlobMatch("*.{h,cpp}", "a.cpp"));
  EXPECT_TRUE(GlobMatch("*.{h,cpp}", "a.h"));
  EXPECT_FALSE(GlobMatch("*.{h,cpp}", "a.c"));
  EXPECT_TRUE(GlobMatch("{src,include}/**/*.{h,hpp}", "include/x/y.hpp"));
  EXPECT_TRUE(GlobMatch("x{, *}", "x", GlobMode::kText));
  EXPECT_TRUE(GlobMatch("x{, *}", "x -v", GlobMode::kText));
  EXPECT_FALSE(GlobMatch("x{, *}", "xy", GlobMode::kText));
  EXPECT_TRUE(GlobMatch("\\*.txt", "*.txt"));
  EXPECT_FALSE(GlobMatch("\\*.txt", "a.txt"));
  EXPECT_TRUE(GlobMatch("[abc", "[abc"));  // unclosed class is literal
  EXPECT_TRUE(GlobMatch("{a,b", "{a,b"));  // unclosed brace is literal
}

TEST(GlobTest, ManyStarsStayFast) {
  std::string text(200, 'a');
  EXPECT_FALSE(GlobMatch("*a*a*a*a*a*a*a*a*a*a*b", text, GlobMode::kText));
  EXPECT_FALSE(HasGlobChars("plain/path.txt"));
  EXPECT_TRUE(HasGlobChars("*.txt"));
}

}  // namespace
}  // namespace lousho
