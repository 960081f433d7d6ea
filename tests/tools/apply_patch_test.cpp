// Tests of the V4A patch parser and applier and of the apply_patch tool on a real workspace.
#include <gtest/gtest.h>

#include <set>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/v4a_patch.h"
#include "core/freeform_tool.h"
#include "tests/tools/tool_test_util.h"

namespace lousho::agent {
namespace {

using testing::J;
using testing::TempWorkspace;
using testing::TextOf;
using tools::ApplyV4aChunks;
using tools::FilePatch;
using tools::ParseV4aPatch;
using tools::PatchOp;

Json::Value PatchArgs(const std::string& patch) {
  Json::Value a(Json::objectValue);
  a["input"] = patch;
  return a;
}

TEST(V4aParseTest, AddUpdateMoveDeleteWithAnchorsAndEndOfFile) {
  auto files = ParseV4aPatch(
      "\n*** Begin Patch\n"
      "*** Add File: src/new.txt\n"
      "+first\n"
      "+\n"
      "*** Update File: src/old.cpp\n"
      "*** Move to: src/renamed.cpp\n"
      "@@ class A\n"
      "@@ void f() {\n"
      " keep\n"
      "-gone\n"
      "+come\n"
      "\n"
      "@@\n"
      "-last\n"
      "+final\n"
      "*** End of File\n"
      "*** Delete File: junk.txt\n"
      "*** End Patch");
  ASSERT_TRUE(files.ok()) << files.error().message;
  ASSERT_EQ(files->size(), 3u);
  const FilePatch& add = (*files)[0];
  EXPECT_EQ(add.op, PatchOp::kAdd);
  EXPECT_EQ(add.path, "src/new.txt");
  EXPECT_EQ(add.contents, "first\n\n");
  const FilePatch& up = (*files)[1];
  EXPECT_EQ(up.op, PatchOp::kUpdate);
  EXPECT_EQ(up.move_to, "src/renamed.cpp");
  ASSERT_EQ(up.chunks.size(), 2u);
  EXPECT_EQ(up.chunks[0].anchors, (std::vector<std::string>{"class A", "void f() {"}));
  EXPECT_EQ(up.chunks[0].old_lines, (std::vector<std::string>{"keep", "gone", ""}));
  EXPECT_EQ(up.chunks[0].new_lines, (std::vector<std::string>{"keep", "come", ""}));
  EXPECT_FALSE(up.chunks[0].at_end);
  EXPECT_EQ(up.chunks[1].old_lines, (std::vector<std::string>{"last"}));
  EXPECT_TRUE(up.chunks[1].at_end);
  EXPECT_EQ((*files)[2].op, PatchOp::kDelete);
  EXPECT_EQ((*files)[2].path, "junk.txt");
  EXPECT_EQ((*files)[2].line, 17);
}

TEST(V4aParseTest, BadPatchesSayWhatAndWhere) {
  struct Case {
    const char* patch;
    const char* message;
  };
  const Case cases[] = {
      {"*** Update File: a\n-x\n*** End Patch", "patch line 1: a patch starts with"},
      {"*** Begin Patch\n*** Delete File: a\n", "ends with \"*** End Patch\""},
      {"*** Begin Patch\n*** End Patch", "the patch changes no file"},
      {"*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch",
       "patch line 3: every line of \"*** Add File: a\" starts with '+'"},
      {"*** Begin Patch\n*** Update File: a\n*x\n*** End Patch",
       "patch line 3: in \"*** Update File: a\" a line starts with"},
      {"*** Begin Patch\n*** Update File: a\n*** End Patch", "changes nothing"},
      {"*** Begin Patch\n*** Frobnicate File: a\n*** End Patch", "patch line 2: expected"},
      {"*** Begin Patch\n*** Add File: \n+x\n*** End Patch", "names no file"},
  };
  for (const Case& c : cases) {
    auto r = ParseV4aPatch(c.patch);
    ASSERT_FALSE(r.ok()) << c.patch;
    EXPECT_EQ(r.error().code, ErrorCode::kToolArgs);
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
}

std::vector<tools::PatchChunk> ChunksOf(const std::string& body) {
  auto files = ParseV4aPatch("*** Begin Patch\n*** Update File: f\n" + body + "\n*** End Patch");
  EXPECT_TRUE(files.ok()) << (files.ok() ? "" : files.error().message);
  return files.ok() ? (*files)[0].chunks : std::vector<tools::PatchChunk>{};
}

TEST(V4aApplyTest, ChunksApplyInOrderAfterTheirAnchors) {
  const std::string file = "int a() {\n  return 1;\n}\nint b() {\n  return 1;\n}\n";
  auto out = ApplyV4aChunks(file, ChunksOf("@@ int b() {\n-  return 1;\n+  return 2;"), "f");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out, "int a() {\n  return 1;\n}\nint b() {\n  return 2;\n}\n");
  // Two chunks: the second is looked for after the first.
  out = ApplyV4aChunks(file, ChunksOf("-  return 1;\n+  return 3;\n@@\n-  return 1;\n+  return 4;"),
                       "f");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "int a() {\n  return 3;\n}\nint b() {\n  return 4;\n}\n");
  // Additions only: after the anchor, or at the end.
  out = ApplyV4aChunks(file, ChunksOf("@@ int a() {\n+  // first"), "f");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->substr(0, 23), "int a() {\n  // first\n  ");
  out = ApplyV4aChunks("x", ChunksOf("+y"), "f");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "x\ny\n");
}

TEST(V4aApplyTest, LenientMatchingEndOfFileCrlfAndBom) {
  // Trailing and surrounding whitespace differences still match.
  auto out = ApplyV4aChunks("a  \n\tb\nc\n", ChunksOf(" a\n-b\n+B"), "f");
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out, "a  \nB\nc\n");
  // End of File: the match at the end wins over an earlier one.
  out = ApplyV4aChunks("x\ny\nx\n", ChunksOf("-x\n+z\n*** End of File"), "f");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "x\ny\nz\n");
  // CRLF and a BOM are kept.
  out = ApplyV4aChunks("\xEF\xBB\xBFone\r\ntwo\r\n", ChunksOf(" one\n-two\n+2"), "f");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "\xEF\xBB\xBFone\r\n2\r\n");
  // A trailing blank context line the file lacks is dropped.
  out = ApplyV4aChunks("p\nq", ChunksOf(" p\n-q\n+Q\n "), "f");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "p\nQ\n");
}

TEST(V4aApplyTest, MissingLinesAndAnchorsAreClearErrors) {
  auto out = ApplyV4aChunks("a\nb\n", ChunksOf(" a\n-nope\n+x"), "src/f.txt");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("chunk 1 of src/f.txt: these lines were not found"),
            std::string::npos)
      << out.error().message;
  EXPECT_NE(out.error().message.find("nope"), std::string::npos);
  out = ApplyV4aChunks("a\nb\n", ChunksOf("@@ missing()\n-a\n+x"), "f");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("the @@ line \"missing()\" was not found"), std::string::npos);
  // Chunks go forward: a second chunk cannot match before the first.
  out = ApplyV4aChunks("a\nb\n", ChunksOf("-b\n+B\n@@\n-a\n+A"), "f");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("chunk 2 of f"), std::string::npos);
}

struct Recorded {
  std::vector<std::string> paths;
  std::vector<bool> with_after;
};

ToolContext Recording(const TempWorkspace& ws, Recorded* rec) {
  ToolContext ctx = ws.Context();
  ctx.before_change = [rec](const std::filesystem::path& p, const std::string* after) {
    rec->paths.push_back(p.filename().string());
    rec->with_after.push_back(after != nullptr);
  };
  return ctx;
}

TEST(ApplyPatchToolTest, ChangesThreeFilesWithCheckpointsAndDiffs) {
  TempWorkspace ws;
  ws.Write("a.txt", "one\ntwo\nthree\n");
  ws.Write("b.txt", "bye\n");
  ws.Write("c.txt", "moving\nalong\n");
  auto tool = MakeBuiltinTool("apply_patch");
  ASSERT_NE(tool, nullptr);
  EXPECT_EQ(tool->kind(), ToolKind::kEdit);
  EXPECT_EQ(FreeformGrammar(tool->parameters()), tools::kV4aGrammar);
  Recorded rec;
  ToolContext ctx = Recording(ws, &rec);
  const Json::Value args = PatchArgs(
      "*** Begin Patch\n"
      "*** Update File: a.txt\n"
      " one\n"
      "-two\n"
      "+TWO\n"
      "*** Add File: sub/new.txt\n"
      "+hello\n"
      "*** Delete File: b.txt\n"
      "*** Update File: c.txt\n"
      "*** Move to: d.txt\n"
      "@@\n"
      "-along\n"
      "+away\n"
      "*** End Patch\n");
  EXPECT_EQ(tool->Title(args, ctx), "Patch a.txt, sub/new.txt, b.txt and 2 more");
  EXPECT_EQ(tool->Locations(args, ctx).size(), 5u);
  EXPECT_EQ(tool->PermissionTargets(args).size(), 5u);  // each path decided by the rules
  EXPECT_EQ(tool->Preview(args, ctx).size(), 5u);
  EXPECT_EQ(ws.Read("a.txt"), "one\ntwo\nthree\n");  // a preview writes nothing
  ToolOutput out = tool->Run(args, ctx);
  ASSERT_FALSE(out.is_error) << TextOf(out);
  EXPECT_EQ(ws.Read("a.txt"), "one\nTWO\nthree\n");
  EXPECT_EQ(ws.Read("sub/new.txt"), "hello\n");
  EXPECT_FALSE(std::filesystem::exists(ws.root() / "b.txt"));
  EXPECT_FALSE(std::filesystem::exists(ws.root() / "c.txt"));
  EXPECT_EQ(ws.Read("d.txt"), "moving\naway\n");
  EXPECT_EQ(TextOf(out), "Applied the patch:\nM a.txt\nA sub/new.txt\nD b.txt\nD c.txt\nA d.txt");
  ASSERT_EQ(out.diffs.size(), 5u);
  EXPECT_EQ(out.diffs[0].old_text.value_or(""), "one\ntwo\nthree\n");
  EXPECT_EQ(out.diffs[0].new_text, "one\nTWO\nthree\n");
  EXPECT_FALSE(out.diffs[1].old_text.has_value());
  // Every file was checkpointed before it changed; deletions say no content follows.
  EXPECT_EQ(rec.paths, (std::vector<std::string>{"a.txt", "new.txt", "b.txt", "c.txt", "d.txt"}));
  EXPECT_EQ(rec.with_after, (std::vector<bool>{true, true, false, false, true}));
  EXPECT_EQ(out.details["files"].size(), 5u);
}

TEST(ApplyPatchToolTest, ABadHunkChangesNothing) {
  TempWorkspace ws;
  ws.Write("a.txt", "one\n");
  ws.Write("b.txt", "two\n");
  auto tool = MakeBuiltinTool("apply_patch");
  Recorded rec;
  ToolContext ctx = Recording(ws, &rec);
  ToolOutput out = tool->Run(PatchArgs("*** Begin Patch\n*** Update File: a.txt\n-one\n+ONE\n"
                                       "*** Update File: b.txt\n-three\n+3\n*** End Patch"),
                             ctx);
  ASSERT_TRUE(out.is_error);
  EXPECT_NE(TextOf(out).find("chunk 1 of b.txt: these lines were not found"), std::string::npos)
      << TextOf(out);
  EXPECT_EQ(ws.Read("a.txt"), "one\n");
  EXPECT_TRUE(rec.paths.empty());
}

TEST(ApplyPatchToolTest, AFailedWriteUndoesTheEarlierChanges) {
  TempWorkspace ws;
  ws.Write("a.txt", "one\n");
  ws.Write("blocker", "a file where a folder would have to be\n");
  auto tool = MakeBuiltinTool("apply_patch");
  ToolContext ctx = ws.Context();
  ToolOutput out = tool->Run(PatchArgs("*** Begin Patch\n*** Update File: a.txt\n-one\n+ONE\n"
                                       "*** Add File: blocker/inside.txt\n+x\n*** End Patch"),
                             ctx);
  ASSERT_TRUE(out.is_error);
  EXPECT_NE(TextOf(out).find("the patch was not applied"), std::string::npos) << TextOf(out);
  EXPECT_EQ(ws.Read("a.txt"), "one\n");
}

TEST(ApplyPatchToolTest, RefusalsNameTheFile) {
  TempWorkspace ws;
  ws.Write("a.txt", "one\n");
  auto tool = MakeBuiltinTool("apply_patch");
  ToolContext ctx = ws.Context();
  struct Case {
    std::string patch;
    const char* message;
  };
  const Case cases[] = {
      {"*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch", "a.txt: the file already exists"},
      {"*** Begin Patch\n*** Delete File: none.txt\n*** End Patch", "none.txt: file not found"},
      {"*** Begin Patch\n*** Delete File: a.txt\n*** Delete File: ./a.txt\n*** End Patch",
       "a.txt is named twice"},
      {"*** Begin Patch\n*** Add File: ../outside/x.txt\n+x\n*** End Patch", "outside"},
      {"*** Begin Patch\n*** Update File: a.txt\n*** Move to: a.txt\n*** End Patch", "named twice"},
      {"*** Begin Patch\n*** Nope\n*** End Patch", "apply_patch: patch line 2"},
  };
  for (const Case& c : cases) {
    ToolOutput out = tool->Run(PatchArgs(c.patch), ctx);
    ASSERT_TRUE(out.is_error) << c.patch;
    EXPECT_NE(TextOf(out).find(c.message), std::string::npos) << TextOf(out);
  }
  EXPECT_TRUE(tool->Run(J("{}"), ctx).is_error);
  EXPECT_EQ(ws.Read("a.txt"), "one\n");
  EXPECT_FALSE(std::filesystem::exists(ws.outside() / "x.txt"));
  // One file: permission rules match its path.
  EXPECT_EQ(tool->PermissionSubject(PatchArgs(cases[1].patch)), "none.txt");
}

}  // namespace
}  // namespace lousho::agent
