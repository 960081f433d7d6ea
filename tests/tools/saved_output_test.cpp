// Tests for the one cut of tool output (head and tail, the notice naming the saved file) and the
// session's saved outputs (caps, pruning, removal).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/tool_util.h"
#include "tests/tools/tool_test_util.h"

namespace lousho::agent {
namespace {

using testing::J;
using testing::TempWorkspace;
using testing::TextOf;
using tools::CutForModel;
using tools::OutputCap;
using tools::SavedOutputs;

std::string Lines(int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

std::string FileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The saved file a notice names.
std::string SavedPath(const std::string& text) {
  const std::string key = "saved in ";
  const size_t at = text.find(key);
  if (at == std::string::npos) return "";
  const size_t start = at + key.size();
  return text.substr(start, text.find(' ', start) - start);
}

TEST(CutForModelTest, KeepsWholeTextThatFits) {
  bool cut = true;
  EXPECT_EQ(CutForModel("a\nb\n", OutputCap{100, 10}, "", &cut), "a\nb\n");
  EXPECT_FALSE(cut);
}

TEST(CutForModelTest, KeepsHeadAndTailAndSaysWhatWasLeftOut) {
  const std::string text = Lines(1, 1000);
  bool cut = false;
  std::string shown = CutForModel(text, OutputCap{100000, 100}, "/tmp/x.log", &cut);
  EXPECT_TRUE(cut);
  EXPECT_EQ(shown.rfind("line 1\n", 0), 0u);
  EXPECT_NE(shown.find("line 20\n"), std::string::npos);  // a fifth of the lines: the head
  EXPECT_EQ(shown.find("line 21\n"), std::string::npos);
  EXPECT_NE(shown.find("(900 lines)"), std::string::npos);
  EXPECT_NE(shown.find("saved in /tmp/x.log"), std::string::npos);
  EXPECT_EQ(shown.find("line 920\n"), std::string::npos);
  EXPECT_NE(shown.find("line 921\n"), std::string::npos);
  EXPECT_NE(shown.find("line 1000"), std::string::npos);
  // Bytes cap too: never much more than the cap.
  std::string small = CutForModel(text, OutputCap{2000, 10000}, "", nullptr);
  EXPECT_LT(small.size(), 2200u);
}

TEST(CutForModelTest, PiecesOfALongerOutputDoNotRepeat) {
  const std::string text = Lines(1, 100);
  // The head and the tail overlap: the tail starts after the head.
  const std::string head = text.substr(0, 600);
  const std::string tail = text.substr(300);
  std::string shown = CutForModel(head, tail, text.size(), OutputCap{500, 1000}, "", nullptr);
  EXPECT_EQ(shown.find("line 1\n"), 0u);
  size_t first = shown.find("line 2\n");
  EXPECT_EQ(shown.find("line 2\n", first + 1), std::string::npos);
  EXPECT_NE(shown.find("line 100"), std::string::npos);
}

TEST(SavedOutputsTest, PrunesTheOldestAndIsRemovedWithTheSession) {
  TempWorkspace ws;
  const std::filesystem::path session = ws.root() / "s.jsonl";
  SavedOutputs::Limits limits;
  limits.max_files = 2;
  limits.max_file_bytes = 10;
  SavedOutputs saved(tools::SavedOutputDirFor(session), limits);
  const std::string a = saved.Save("bash", "first");
  const std::string b = saved.Save("bash", "second");
  const std::string c = saved.Save("grep", "0123456789abc");
  ASSERT_FALSE(a.empty());
  EXPECT_FALSE(std::filesystem::exists(a));
  EXPECT_EQ(FileText(b), "second");
  EXPECT_EQ(FileText(c), "0123456789");  // capped per file
  EXPECT_EQ(std::filesystem::path(c).parent_path(), ws.root() / "s.outputs");
  {
    auto w = saved.Begin("bash");
    w->Append("dropped");
  }  // not kept: gone
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(ws.root() / "s.outputs"),
                          std::filesystem::directory_iterator()),
            2);
  EXPECT_TRUE(tools::RemoveSavedOutputs(session).ok());
  EXPECT_FALSE(std::filesystem::exists(ws.root() / "s.outputs"));
  EXPECT_TRUE(tools::RemoveSavedOutputs(session).ok());
}

// A 200,000-line build log: the result shows its head and tail, and its first error (deep in
// the middle) is in the saved file the result names, where grep finds it.
TEST(SavedOutputsTest, BashKeepsAHugeLogWholeAndItsFirstErrorReachable) {
  TempWorkspace ws;
  SavedOutputs saved(ws.root() / "out");
  ToolContext ctx = ws.Context();
  ctx.saved_outputs = &saved;
  auto out = tools::MakeBashTool()->Run(
      J(R"({"command":"seq 1 200000 | awk '{ if ($1 == 123456) print \"src/a.c:9: error: first\"; else print \"cc -c f\" $1 \".c\" }'"})"),
      ctx);
  const std::string text = TextOf(out);
  EXPECT_TRUE(out.details["truncated"].asBool());
  EXPECT_EQ(text.rfind("cc -c f1.c\n", 0), 0u);
  EXPECT_NE(text.find("cc -c f200000.c"), std::string::npos);
  EXPECT_EQ(text.find("error: first"), std::string::npos);
  const std::string path = SavedPath(text);
  ASSERT_FALSE(path.empty()) << text.substr(0, 2000);
  const std::string whole = FileText(path);
  EXPECT_NE(whole.find("src/a.c:9: error: first"), std::string::npos);
  EXPECT_EQ(std::count(whole.begin(), whole.end(), '\n'), 200000);
  auto grep =
      tools::MakeGrepTool()->Run(J(R"({"pattern":"error:","path":")" + path + R"("})"), ctx);
  EXPECT_NE(TextOf(grep).find("error: first"), std::string::npos) << TextOf(grep);
}

TEST(SavedOutputsTest, OutputThatFitsIsNotSaved) {
  TempWorkspace ws;
  SavedOutputs saved(ws.root() / "out");
  ToolContext ctx = ws.Context();
  ctx.saved_outputs = &saved;
  auto out = tools::MakeBashTool()->Run(J(R"({"command":"seq 1 10"})"), ctx);
  EXPECT_EQ(TextOf(out), "1\n2\n3\n4\n5\n6\n7\n8\n9\n10");
  EXPECT_TRUE(std::filesystem::is_empty(ws.root() / "out"));
}

}  // namespace
}  // namespace lousho::agent
