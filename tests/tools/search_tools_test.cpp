// Tests for grep, find and ls on real temporary trees, with .gitignore files.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/gitignore.h"
#include "tests/tools/tool_test_util.h"

namespace lousho::agent {
namespace {

using testing::J;
using testing::TempWorkspace;
using testing::TextOf;
namespace fs = std::filesystem;

void MakeTree(const TempWorkspace& ws) {
  ws.Write(".gitignore", "build/\n*.log\n!keep.log\n/rootonly.txt\nnode_modules\n");
  ws.Write("src/main.cpp", "int main() {\n  return Foo();\n}\n");
  ws.Write("src/foo.h", "int Foo();\n// TODO: foo\n");
  ws.Write("src/sub/.gitignore", "gen.cpp\n");
  ws.Write("src/sub/gen.cpp", "int Foo() { return 1; }\n");
  ws.Write("src/sub/real.cpp", "int Bar() { return Foo(); }\n");
  ws.Write("src/rootonly.txt", "Foo nested\n");
  ws.Write("rootonly.txt", "Foo at root\n");
  ws.Write("build/out.cpp", "Foo in build\n");
  ws.Write("app.log", "Foo in log\n");
  ws.Write("keep.log", "Foo kept\n");
  ws.Write("node_modules/x/index.js", "Foo\n");
  ws.Write(".git/config", "Foo in git\n");
  ws.Write("bin.dat", std::string("Foo\0binary", 10));
  ws.Write("docs/readme.md", "foo lowercase\n");
}

TEST(GitignoreTest, RulesFollowGitSemantics) {
  auto f = tools::IgnoreFile::Parse("# c\n*.o\n!keep.o\nbuild/\n/top\na/**/z\n\\#hash\n");
  using V = tools::IgnoreFile::Verdict;
  EXPECT_EQ(f.Check("x.o", false), V::kIgnored);
  EXPECT_EQ(f.Check("d/x.o", false), V::kIgnored);
  EXPECT_EQ(f.Check("keep.o", false), V::kIncluded);
  EXPECT_EQ(f.Check("build", true), V::kIgnored);
  EXPECT_EQ(f.Check("build", false), V::kNone);
  EXPECT_EQ(f.Check("top", false), V::kIgnored);
  EXPECT_EQ(f.Check("d/top", false), V::kNone);
  EXPECT_EQ(f.Check("a/z", false), V::kIgnored);
  EXPECT_EQ(f.Check("a/b/c/z", true), V::kIgnored);
  EXPECT_EQ(f.Check("#hash", false), V::kIgnored);
}

TEST(GrepToolTest, SearchesHonouringGitignoreAndSkippingGitAndBinaries) {
  TempWorkspace ws;
  MakeTree(ws);
  auto tool = tools::MakeGrepTool();
  ToolContext ctx = ws.Context();
  auto out = tool->Run(J(R"({"pattern":"Foo"})"), ctx);
  ASSERT_FALSE(out.is_error) << TextOf(out);
  std::string text = TextOf(out);
  EXPECT_NE(text.find("src/main.cpp:2:   return Foo();"), std::string::npos) << text;
  EXPECT_NE(text.find("src/foo.h:1: int Foo();"), std::string::npos);
  EXPECT_NE(text.find("src/sub/real.cpp:1:"), std::string::npos);
  EXPECT_NE(text.find("keep.log:1:"), std::string::npos);
  EXPECT_NE(text.find("src/rootonly.txt:1:"), std::string::npos);  // anchored rule: root only
  for (const char* hidden : {"gen.cpp", "build/", "app.log", "node_modules", ".git", "bin.dat",
                             "\nrootonly.txt", "docs/"})
    EXPECT_EQ(text.find(hidden), std::string::npos) << hidden << "\n" << text;
  EXPECT_EQ(tool->kind(), ToolKind::kSearch);
}

TEST(GrepToolTest, SubdirectoryStillHonoursRootGitignore) {
  TempWorkspace ws;
  MakeTree(ws);
  ws.Write("src/debug.log", "Foo\n");
  auto tool = tools::MakeGrepTool();
  ToolContext ctx = ws.Context();
  std::string text = TextOf(tool->Run(J(R"({"pattern":"Foo","path":"src"})"), ctx));
  EXPECT_EQ(text.find("debug.log"), std::string::npos) << text;
  EXPECT_NE(text.find("src/main.cpp:2:"), std::string::npos) << text;
}

TEST(GrepToolTest, IgnoreCaseLiteralGlobAndContext) {
  TempWorkspace ws;
  MakeTree(ws);
  ws.Write("re.txt", "a.b\naxb\n");
  ws.Write("ctx.txt", "1\n2\nhit\n4\n5\n6\n7\nhit\n9\n");
  auto tool = tools::MakeGrepTool();
  ToolContext ctx = ws.Context();
  std::string ic = TextOf(tool->Run(J(R"({"pattern":"FOO LOWER","ignoreCase":true})"), ctx));
  EXPECT_NE(ic.find("docs/readme.md:1: foo lowercase"), std::string::npos) << ic;
  std::string lit =
      TextOf(tool->Run(J(R"({"pattern":"a.b","literal":true,"path":"re.txt"})"), ctx));
  EXPECT_NE(lit.find("re.txt:1: a.b"), std::string::npos);
  EXPECT_EQ(lit.find("axb"), std::string::npos);
  std::string re = TextOf(tool->Run(J(R"({"pattern":"a.b","path":"re.txt"})"), ctx));
  EXPECT_NE(re.find("re.txt:2: axb"), std::string::npos);
  std::string glob = TextOf(tool->Run(J(R"({"pattern":"Foo","glob":"*.h"})"), ctx));
  EXPECT_NE(glob.find("src/foo.h"), std::string::npos);
  EXPECT_EQ(glob.find("main.cpp"), std::string::npos);
  std::string c = TextOf(tool->Run(J(R"({"pattern":"hit","path":"ctx.txt","context":1})"), ctx));
  EXPECT_NE(c.find("ctx.txt-2- 2\nctx.txt:3: hit\nctx.txt-4- 4\n--\nctx.txt-7- 7\nctx.txt:8: hit\n"
                   "ctx.txt-9- 9"),
            std::string::npos)
      << c;
}

TEST(GrepToolTest, LimitInvalidPatternAndNoMatches) {
  TempWorkspace ws;
  std::string many;
  for (int i = 0; i < 300; ++i) many += "match\n";
  ws.Write("m.txt", many);
  auto tool = tools::MakeGrepTool();
  ToolContext ctx = ws.Context();
  auto out = tool->Run(J(R"({"pattern":"match"})"), ctx);
  EXPECT_EQ(out.details["matches"].asInt(), 100);
  EXPECT_NE(TextOf(out).find("Stopped after 100 matches"), std::string::npos);
  auto five = tool->Run(J(R"({"pattern":"match","limit":5})"), ctx);
  EXPECT_EQ(five.details["matches"].asInt(), 5);
  auto bad = tool->Run(J(R"({"pattern":"(unclosed"})"), ctx);
  EXPECT_TRUE(bad.is_error);
  EXPECT_NE(TextOf(bad).find("invalid regular expression: missing closing parenthesis at offset 9"),
            std::string::npos)
      << TextOf(bad);
  EXPECT_EQ(TextOf(tool->Run(J(R"({"pattern":"nothing-here"})"), ctx)), "No matches found");
}

TEST(GrepToolTest, CatastrophicPatternFallsBackFromJit) {
  TempWorkspace ws;
  ws.Write("big.txt", std::string(200000, 'a') + "\n");
  auto tool = tools::MakeGrepTool();
  ToolContext ctx = ws.Context();
  auto out = tool->Run(J(R"({"pattern":"(?:a|b)*c"})"), ctx);
  EXPECT_FALSE(out.is_error) << TextOf(out);
  auto hit = tool->Run(J(R"({"pattern":"(?:a|b)*$"})"), ctx);
  EXPECT_EQ(hit.details["matches"].asInt(), 1) << TextOf(hit);
}

// Exponential backtracking ends at the match limit with an error naming the line, not a hang.
TEST(GrepToolTest, BacktrackingLimitIsAnError) {
  TempWorkspace ws;
  ws.Write("slow.txt", "fine\n" + std::string(40, 'a') + "b\n");
  auto tool = tools::MakeGrepTool();
  ToolContext ctx = ws.Context();
  auto out = tool->Run(J(R"({"pattern":"(a+)+$"})"), ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_NE(TextOf(out).find("slow.txt:2: regular expression match limit exceeded"),
            std::string::npos)
      << TextOf(out);
}

// Nothing opens the FIFO's other end: grep opening it would block, so finishing is the check.
TEST(GrepToolTest, SkipsSpecialAndOversizedFiles) {
  TempWorkspace ws;
  ws.Write("a.txt", "Foo here\n");
  ASSERT_EQ(mkfifo((ws.root() / "pipe").c_str(), 0600), 0);
  fs::path big = ws.Write("big.txt", "Foo in a huge file\n");
  fs::resize_file(big, 21ULL * 1024 * 1024);  // over grep's 20 MiB; sparse
  auto tool = tools::MakeGrepTool();
  ToolContext ctx = ws.Context();
  auto out = tool->Run(J(R"({"pattern":"Foo"})"), ctx);
  ASSERT_FALSE(out.is_error) << TextOf(out);
  EXPECT_EQ(TextOf(out), "a.txt:1: Foo here");
  auto fifo = tool->Run(J(R"({"pattern":"Foo","path":"pipe"})"), ctx);
  EXPECT_TRUE(fifo.is_error);
  EXPECT_NE(TextOf(fifo).find("pipe is a FIFO (named pipe), not a regular file"), std::string::npos)
      << TextOf(fifo);
  CancelSource source;
  source.Cancel();
  ctx.cancel = source.token();
  auto cancelled = tool->Run(J(R"({"pattern":"Foo","path":"a.txt"})"), ctx);
  EXPECT_TRUE(cancelled.is_error);
  EXPECT_NE(TextOf(cancelled).find("cancelled"), std::string::npos) << TextOf(cancelled);
}

TEST(GrepToolTest, RefusesEscapesAndSkipsSymlinks) {
  TempWorkspace ws;
  std::ofstream(ws.outside() / "secret.txt") << "Foo secret\n";
  fs::create_directory_symlink(ws.outside(), ws.root() / "link");
  ws.Write("in.txt", "Foo inside\n");
  auto tool = tools::MakeGrepTool();
  ToolContext ctx = ws.Context();
  EXPECT_TRUE(tool->Run(J(R"({"pattern":"Foo","path":"../outside"})"), ctx).is_error);
  EXPECT_TRUE(tool->Run(J(R"({"pattern":"Foo","path":"link"})"), ctx).is_error);
  std::string text = TextOf(tool->Run(J(R"({"pattern":"Foo"})"), ctx));
  EXPECT_NE(text.find("in.txt"), std::string::npos);
  EXPECT_EQ(text.find("secret"), std::string::npos);
}

TEST(FindToolTest, GlobsSortedAndIgnoring) {
  TempWorkspace ws;
  MakeTree(ws);
  auto tool = tools::MakeFindTool();
  ToolContext ctx = ws.Context();
  EXPECT_EQ(TextOf(tool->Run(J(R"({"pattern":"**/*.cpp"})"), ctx)),
            "src/main.cpp\nsrc/sub/real.cpp");
  EXPECT_EQ(TextOf(tool->Run(J(R"({"pattern":"*.h"})"), ctx)), "src/foo.h");
  EXPECT_EQ(TextOf(tool->Run(J(R"({"pattern":"src/**"})"), ctx)),
            "src/foo.h\nsrc/main.cpp\nsrc/rootonly.txt\nsrc/sub/\nsrc/sub/.gitignore\n"
            "src/sub/real.cpp");
  EXPECT_EQ(TextOf(tool->Run(J(R"({"pattern":"*.cpp","path":"src/sub"})"), ctx)),
            "src/sub/real.cpp");
  EXPECT_EQ(TextOf(tool->Run(J(R"({"pattern":"*.{log,md}"})"), ctx)), "docs/readme.md\nkeep.log");
  EXPECT_NE(TextOf(tool->Run(J(R"({"pattern":"*.zzz"})"), ctx)).find("No files found"),
            std::string::npos);
  EXPECT_TRUE(tool->Run(J(R"({"pattern":"*","path":"../outside"})"), ctx).is_error);
}

TEST(FindToolTest, LimitWithNotice) {
  TempWorkspace ws;
  for (int i = 0; i < 30; ++i) ws.Write("f" + std::to_string(100 + i) + ".txt", "");
  auto tool = tools::MakeFindTool();
  ToolContext ctx = ws.Context();
  auto out = tool->Run(J(R"({"pattern":"*.txt","limit":10})"), ctx);
  std::string text = TextOf(out);
  EXPECT_EQ(text.rfind("f100.txt\n", 0), 0u);
  EXPECT_NE(text.find("f109.txt\n[Showing 10 of 30 results"), std::string::npos) << text;
}

TEST(LsToolTest, ListsSortedWithDirSlashes) {
  TempWorkspace ws;
  ws.Write("b.txt", "");
  ws.Write("a/x.txt", "");
  ws.Write(".hidden", "");
  ws.Write("c/d/e.txt", "");
  auto tool = tools::MakeLsTool();
  ToolContext ctx = ws.Context();
  EXPECT_EQ(TextOf(tool->Run(J("{}"), ctx)), ".hidden\na/\nb.txt\nc/");
  EXPECT_EQ(TextOf(tool->Run(J(R"({"path":"c"})"), ctx)), "d/");
  auto lim = tool->Run(J(R"({"limit":2})"), ctx);
  EXPECT_EQ(TextOf(lim), ".hidden\na/\n[Showing 2 of 4 entries. Raise limit to see more.]");
  EXPECT_TRUE(tool->Run(J(R"({"path":"b.txt"})"), ctx).is_error);
  EXPECT_TRUE(tool->Run(J(R"({"path":"nope"})"), ctx).is_error);
  EXPECT_EQ(tool->kind(), ToolKind::kRead);
}

TEST(LsToolTest, RefusesEscapes) {
  TempWorkspace ws;
  fs::create_directory_symlink(ws.outside(), ws.root() / "link");
  auto tool = tools::MakeLsTool();
  ToolContext ctx = ws.Context();
  for (const char* p : {"..", "../outside", "link", "/"}) {
    auto out = tool->Run(J(std::string(R"({"path":")") + p + "\"}"), ctx);
    EXPECT_TRUE(out.is_error) << p;
    EXPECT_NE(TextOf(out).find("outside the workspace"), std::string::npos) << p;
  }
}

}  // namespace
}  // namespace lousho::agent
