// Tests for path safety and the read, write and edit tools on real temporary directories.
#include <gtest/gtest.h>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/paths.h"
#include "tests/tools/tool_test_util.h"

namespace lousho::agent {
namespace {

using testing::FakeClient;
using testing::J;
using testing::TempWorkspace;
using testing::TextOf;
namespace fs = std::filesystem;

std::string Lines(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

TEST(PathTest, ResolvesInsideAndRefusesEscapes) {
  TempWorkspace ws;
  ws.Write("a/b.txt", "x");
  ToolContext ctx = ws.Context();
  auto ok = ResolveToolPath(ctx, "a/../a/b.txt");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->abs, ws.root() / "a/b.txt");
  EXPECT_TRUE(ResolveToolPath(ctx, "new/dir/file.txt").ok());
  EXPECT_TRUE(ResolveToolPath(ctx, (ws.root() / "a").string()).ok());
  auto up = ResolveToolPath(ctx, "../outside/x");
  ASSERT_FALSE(up.ok());
  EXPECT_NE(up.error().message.find("path is outside the workspace: ../outside/x"),
            std::string::npos);
  EXPECT_FALSE(ResolveToolPath(ctx, "/etc/passwd").ok());
}

TEST(PathTest, SymlinksOutsideAreRefused) {
  TempWorkspace ws;
  fs::create_directory_symlink(ws.outside(), ws.root() / "link");
  fs::create_symlink(ws.outside() / "missing.txt", ws.root() / "dangling");
  fs::create_directory_symlink(ws.root() / "a", ws.root() / "inner");  // inside: fine
  ToolContext ctx = ws.Context();
  EXPECT_FALSE(ResolveToolPath(ctx, "link/file.txt").ok());
  EXPECT_FALSE(ResolveToolPath(ctx, "link").ok());
  EXPECT_FALSE(ResolveToolPath(ctx, "dangling").ok());
  EXPECT_TRUE(ResolveToolPath(ctx, "inner/x").ok());
  // `link/..` is the parent of the link's target, as the kernel sees it.
  EXPECT_FALSE(ResolveToolPath(ctx, "link/../outside/y").ok());
  auto back_in = ResolveToolPath(ctx, "link/../ws/y");
  ASSERT_TRUE(back_in.ok());
  EXPECT_EQ(back_in->abs, ws.root() / "y");
}

TEST(PathTest, DisplayPathIsRelativeInsideCwd) {
  EXPECT_EQ(DisplayPath("/w", "/w/a/b"), "a/b");
  EXPECT_EQ(DisplayPath("/w", "/w"), ".");
  EXPECT_EQ(DisplayPath("/w", "/other/x"), "/other/x");
  EXPECT_FALSE(IsWithin("/work2/x", "/work"));
}

TEST(ReadToolTest, NumbersLinesAndSlices) {
  TempWorkspace ws;
  ws.Write("f.txt", Lines(50));
  auto tool = tools::MakeReadTool();
  ToolContext ctx = ws.Context();
  auto out = tool->Run(J(R"({"path":"f.txt","offset":10,"limit":3})"), ctx);
  ASSERT_FALSE(out.is_error) << TextOf(out);
  std::string text = TextOf(out);
  EXPECT_NE(text.find("    10\tline 10\n    11\tline 11\n    12\tline 12"), std::string::npos);
  EXPECT_EQ(text.find("line 13\n"), std::string::npos);
  EXPECT_NE(text.find("Use offset=13 to continue"), std::string::npos);
  EXPECT_EQ(tool->Title(J(R"({"path":"f.txt","offset":10,"limit":31})"), ctx), "Read f.txt:10-40");
  EXPECT_EQ(tool->Title(J(R"({"path":"./f.txt"})"), ctx), "Read f.txt");
  auto locs = tool->Locations(J(R"({"path":"f.txt","offset":7})"), ctx);
  ASSERT_EQ(locs.size(), 1u);
  EXPECT_EQ(locs[0].path, (ws.root() / "f.txt").string());
  EXPECT_EQ(locs[0].line, 7);
  EXPECT_EQ(tool->kind(), ToolKind::kRead);
  EXPECT_TRUE(tool->read_only());
}

TEST(ReadToolTest, DefaultLimitAndLongLines) {
  TempWorkspace ws;
  ws.Write("big.txt", Lines(2500));
  ws.Write("long.txt", std::string(5000, 'x') + "\nshort\n");
  auto tool = tools::MakeReadTool();
  ToolContext ctx = ws.Context();
  std::string text = TextOf(tool->Run(J(R"({"path":"big.txt"})"), ctx));
  EXPECT_NE(text.find("  2000\tline 2000"), std::string::npos);
  EXPECT_EQ(text.find("line 2001\n"), std::string::npos);
  EXPECT_NE(text.find("Showing lines 1-2000 of 2500"), std::string::npos);
  EXPECT_NE(text.find("offset=2001"), std::string::npos);
  std::string lng = TextOf(tool->Run(J(R"({"path":"long.txt"})"), ctx));
  EXPECT_NE(lng.find("line truncated"), std::string::npos);
  EXPECT_LT(lng.size(), 3000u);
  EXPECT_NE(lng.find("     2\tshort"), std::string::npos);
}

TEST(ReadToolTest, ErrorsForDirectoriesMissingFilesAndOffsets) {
  TempWorkspace ws;
  ws.Write("d/x.txt", "a\n");
  auto tool = tools::MakeReadTool();
  ToolContext ctx = ws.Context();
  auto dir = tool->Run(J(R"({"path":"d"})"), ctx);
  EXPECT_TRUE(dir.is_error);
  EXPECT_NE(TextOf(dir).find("use ls"), std::string::npos);
  EXPECT_TRUE(tool->Run(J(R"({"path":"nope.txt"})"), ctx).is_error);
  auto beyond = tool->Run(J(R"({"path":"d/x.txt","offset":5})"), ctx);
  EXPECT_TRUE(beyond.is_error);
  EXPECT_NE(TextOf(beyond).find("beyond"), std::string::npos);
  EXPECT_TRUE(tool->Run(J(R"({})"), ctx).is_error);
}

TEST(ReadToolTest, ImagesComeBackAsImageBlocks) {
  TempWorkspace ws;
  std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  ws.Write("pic.dat", png);  // detected by magic, not extension
  auto tool = tools::MakeReadTool();
  ToolContext ctx = ws.Context();
  auto out = tool->Run(J(R"({"path":"pic.dat"})"), ctx);
  ASSERT_FALSE(out.is_error) << TextOf(out);
  ASSERT_EQ(out.content.size(), 2u);
  EXPECT_EQ(out.content[1].type, BlockType::kImage);
  EXPECT_EQ(out.content[1].mime_type, "image/png");
  EXPECT_EQ(out.content[1].data, "iVBORw0KGgoAAAANSUhEUg==");
}

TEST(ReadToolTest, RefusesEscapes) {
  TempWorkspace ws;
  std::ofstream(ws.outside() / "secret.txt") << "secret";
  fs::create_symlink(ws.outside() / "secret.txt", ws.root() / "s.txt");
  auto tool = tools::MakeReadTool();
  ToolContext ctx = ws.Context();
  for (const char* p : {"../outside/secret.txt", "s.txt"}) {
    auto out = tool->Run(J(std::string(R"({"path":")") + p + "\"}"), ctx);
    EXPECT_TRUE(out.is_error) << p;
    EXPECT_NE(TextOf(out).find("outside the workspace"), std::string::npos) << p;
  }
}

TEST(ReadToolTest, ReadsThroughTheEditorWhenItCan) {
  TempWorkspace ws;
  ws.Write("f.txt", "disk\n");
  FakeClient client;
  client.can_read = true;
  client.files[(ws.root() / "f.txt").string()] = "buffer 1\nbuffer 2\n";
  auto tool = tools::MakeReadTool();
  ToolContext ctx = ws.Context();
  ctx.client = &client;
  auto out = tool->Run(J(R"({"path":"f.txt"})"), ctx);
  EXPECT_NE(TextOf(out).find("buffer 2"), std::string::npos);
  EXPECT_EQ(client.Calls(), std::vector<std::string>{"read " + (ws.root() / "f.txt").string()});
}

TEST(WriteToolTest, CreatesWithParentsAndReportsDiff) {
  TempWorkspace ws;
  auto tool = tools::MakeWriteTool();
  ToolContext ctx = ws.Context();
  Json::Value args = J(R"({"path":"new/deep/f.txt","content":"hello\n"})");
  auto preview = tool->Preview(args, ctx);
  ASSERT_EQ(preview.size(), 1u);
  EXPECT_FALSE(preview[0].old_text.has_value());
  EXPECT_FALSE(fs::exists(ws.root() / "new"));  // preview writes nothing
  auto out = tool->Run(args, ctx);
  ASSERT_FALSE(out.is_error) << TextOf(out);
  EXPECT_EQ(ws.Read("new/deep/f.txt"), "hello\n");
  ASSERT_EQ(out.diffs.size(), 1u);
  EXPECT_EQ(out.diffs[0].path, (ws.root() / "new/deep/f.txt").string());
  EXPECT_FALSE(out.diffs[0].old_text.has_value());
  EXPECT_EQ(out.diffs[0].new_text, "hello\n");

  auto again = tool->Run(J(R"({"path":"new/deep/f.txt","content":"bye\n"})"), ctx);
  ASSERT_EQ(again.diffs.size(), 1u);
  EXPECT_EQ(again.diffs[0].old_text, "hello\n");
  EXPECT_EQ(ws.Read("new/deep/f.txt"), "bye\n");
  EXPECT_EQ(tool->kind(), ToolKind::kEdit);
  EXPECT_EQ(tool->PermissionSubject(J(R"({"path":"./docs/a.md"})")), "docs/a.md");
}

TEST(WriteToolTest, RefusesEscapesAndSymlinkedParents) {
  TempWorkspace ws;
  fs::create_directory_symlink(ws.outside(), ws.root() / "out");
  fs::create_symlink(ws.outside() / "new.txt", ws.root() / "dangling");
  auto tool = tools::MakeWriteTool();
  ToolContext ctx = ws.Context();
  for (const char* p : {"../outside/x.txt", "out/x.txt", "dangling", "/tmp/lousho-x.txt"}) {
    auto out = tool->Run(J(std::string(R"({"content":"x","path":")") + p + "\"}"), ctx);
    EXPECT_TRUE(out.is_error) << p;
    EXPECT_NE(TextOf(out).find("outside the workspace"), std::string::npos) << TextOf(out);
  }
  EXPECT_TRUE(fs::is_empty(ws.outside()));
}

TEST(WriteToolTest, WritesThroughTheEditorWhenItCan) {
  TempWorkspace ws;
  FakeClient client;
  client.can_write = true;
  auto tool = tools::MakeWriteTool();
  ToolContext ctx = ws.Context();
  ctx.client = &client;
  auto out = tool->Run(J(R"({"path":"f.txt","content":"via editor"})"), ctx);
  ASSERT_FALSE(out.is_error) << TextOf(out);
  EXPECT_EQ(client.files[(ws.root() / "f.txt").string()], "via editor");
  EXPECT_FALSE(fs::exists(ws.root() / "f.txt"));
}

TEST(EditToolTest, ReplacesUniqueTextWithDiffAndLocation) {
  TempWorkspace ws;
  ws.Write("f.txt", "one\ntwo\nthree\n");
  auto tool = tools::MakeEditTool();
  ToolContext ctx = ws.Context();
  Json::Value args = J(R"({"path":"f.txt","oldText":"two","newText":"TWO"})");
  auto locs = tool->Locations(args, ctx);
  ASSERT_EQ(locs.size(), 1u);
  EXPECT_EQ(locs[0].line, 2);
  auto preview = tool->Preview(args, ctx);
  ASSERT_EQ(preview.size(), 1u);
  EXPECT_EQ(preview[0].new_text, "one\nTWO\nthree\n");
  EXPECT_EQ(ws.Read("f.txt"), "one\ntwo\nthree\n");
  auto out = tool->Run(args, ctx);
  ASSERT_FALSE(out.is_error) << TextOf(out);
  EXPECT_EQ(ws.Read("f.txt"), "one\nTWO\nthree\n");
  ASSERT_EQ(out.diffs.size(), 1u);
  EXPECT_EQ(out.diffs[0].old_text, "one\ntwo\nthree\n");
  EXPECT_EQ(out.details["firstChangedLine"].asInt(), 2);
  EXPECT_NE(TextOf(out).find("+TWO"), std::string::npos);
}

TEST(EditToolTest, ErrorsNameTheCount) {
  TempWorkspace ws;
  ws.Write("x.txt", "a\na\na\n");
  auto tool = tools::MakeEditTool();
  ToolContext ctx = ws.Context();
  auto many = tool->Run(J(R"({"path":"x.txt","oldText":"a","newText":"b"})"), ctx);
  EXPECT_TRUE(many.is_error);
  EXPECT_NE(TextOf(many).find("oldText matches 3 times in x.txt; make it unique"),
            std::string::npos)
      << TextOf(many);
  auto none = tool->Run(J(R"({"path":"x.txt","oldText":"zzz","newText":"b"})"), ctx);
  EXPECT_TRUE(none.is_error);
  EXPECT_NE(TextOf(none).find("not found"), std::string::npos);
  EXPECT_TRUE(tool->Run(J(R"({"path":"missing.txt","oldText":"a","newText":"b"})"), ctx).is_error);
  EXPECT_TRUE(tool->Run(J(R"({"path":"x.txt","oldText":"","newText":"b"})"), ctx).is_error);
  EXPECT_TRUE(tool->Preview(J(R"({"path":"x.txt","oldText":"a","newText":"b"})"), ctx).empty());
  EXPECT_EQ(ws.Read("x.txt"), "a\na\na\n");
}

TEST(EditToolTest, MultipleEditsAreAtomic) {
  TempWorkspace ws;
  ws.Write("m.txt", "alpha\nbeta\ngamma\n");
  auto tool = tools::MakeEditTool();
  ToolContext ctx = ws.Context();
  auto bad = tool->Run(J(R"({"path":"m.txt","edits":[{"oldText":"alpha","newText":"A"},
                                                     {"oldText":"delta","newText":"D"}]})"),
                       ctx);
  EXPECT_TRUE(bad.is_error);
  EXPECT_NE(TextOf(bad).find("edits[1].oldText not found"), std::string::npos) << TextOf(bad);
  EXPECT_EQ(ws.Read("m.txt"), "alpha\nbeta\ngamma\n");
  auto good = tool->Run(J(R"({"path":"m.txt","edits":[{"oldText":"gamma","newText":"G"},
                                                      {"oldText":"alpha","newText":"A"}]})"),
                        ctx);
  ASSERT_FALSE(good.is_error) << TextOf(good);
  EXPECT_EQ(ws.Read("m.txt"), "A\nbeta\nG\n");
  EXPECT_EQ(good.details["firstChangedLine"].asInt(), 1);
  auto overlap = tool->Run(J(R"({"path":"m.txt","edits":[{"oldText":"A\nbeta","newText":"x"},
                                                         {"oldText":"beta\nG","newText":"y"}]})"),
                           ctx);
  EXPECT_TRUE(overlap.is_error);
  EXPECT_NE(TextOf(overlap).find("overlap"), std::string::npos);
}

TEST(EditToolTest, PreservesCrlf) {
  TempWorkspace ws;
  ws.Write("w.txt", "one\r\ntwo\r\nthree\r\n");
  auto tool = tools::MakeEditTool();
  ToolContext ctx = ws.Context();
  auto out = tool->Run(J(R"({"path":"w.txt","oldText":"one\ntwo","newText":"1\n2\nextra"})"), ctx);
  ASSERT_FALSE(out.is_error) << TextOf(out);
  EXPECT_EQ(ws.Read("w.txt"), "1\r\n2\r\nextra\r\nthree\r\n");
}

TEST(EditToolTest, RefusesEscapes) {
  TempWorkspace ws;
  std::ofstream(ws.outside() / "t.txt") << "abc";
  fs::create_directory_symlink(ws.outside(), ws.root() / "o");
  auto tool = tools::MakeEditTool();
  ToolContext ctx = ws.Context();
  for (const char* p : {"../outside/t.txt", "o/t.txt"}) {
    auto out =
        tool->Run(J(std::string(R"({"oldText":"abc","newText":"x","path":")") + p + "\"}"), ctx);
    EXPECT_TRUE(out.is_error) << p;
  }
  std::ifstream in(ws.outside() / "t.txt");
  std::string s;
  in >> s;
  EXPECT_EQ(s, "abc");
}

TEST(EditToolTest, EditsEditorBuffersWhenItCan) {
  TempWorkspace ws;
  ws.Write("f.txt", "disk version\n");
  FakeClient client;
  client.can_read = client.can_write = true;
  std::string abs = (ws.root() / "f.txt").string();
  client.files[abs] = "buffer version\n";
  auto tool = tools::MakeEditTool();
  ToolContext ctx = ws.Context();
  ctx.client = &client;
  auto out = tool->Run(J(R"({"path":"f.txt","oldText":"buffer","newText":"edited"})"), ctx);
  ASSERT_FALSE(out.is_error) << TextOf(out);
  EXPECT_EQ(client.files[abs], "edited version\n");
  EXPECT_EQ(ws.Read("f.txt"), "disk version\n");
  std::vector<std::string> expected = {"read " + abs, "write " + abs};
  EXPECT_EQ(client.Calls(), expected);
}

}  // namespace
}  // namespace lousho::agent
