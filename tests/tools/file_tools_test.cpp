// Tests for path safety and the read, write and edit tools on real temporary directories.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/tool_util.h"
#include "core/paths.h"
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

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Resident memory of this process in KiB, from /proc/self/status.
long ResidentKib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  ADD_FAILURE() << "no VmRSS in /proc/self/status";
  return 0;
}

// `text` followed by a hole up to `size` bytes: large on paper, nothing on disk.
fs::path SparseFile(const TempWorkspace& ws, const std::string& rel, const std::string& text,
                    uintmax_t size) {
  fs::path p = ws.Write(rel, text);
  fs::resize_file(p, size);
  return p;
}

// A bound Unix socket at `path`, listening on nothing; closed (the file stays) when done.
class SocketFile {
 public:
  explicit SocketFile(const fs::path& path) : fd_(socket(AF_UNIX, SOCK_STREAM, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::string s = path.string();
    EXPECT_LT(s.size(), sizeof addr.sun_path);
    std::memcpy(addr.sun_path, s.c_str(), std::min(s.size() + 1, sizeof addr.sun_path));
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << strerror(errno);
  }
  ~SocketFile() { close(fd_); }
  SocketFile(const SocketFile&) = delete;
  SocketFile& operator=(const SocketFile&) = delete;

 private:
  int fd_;
};

// Runs read, write and edit on `rel` and expects each to refuse it, naming `kind`.
void ExpectFileToolsRefuse(ToolContext& ctx, const std::string& rel, const std::string& kind) {
  std::string path = R"("path":")" + rel + "\"";
  auto read = tools::MakeReadTool()->Run(J("{" + path + "}"), ctx);
  EXPECT_TRUE(read.is_error) << rel;
  EXPECT_TRUE(Has(TextOf(read), kind)) << TextOf(read);
  auto write = tools::MakeWriteTool()->Run(J("{" + path + R"(,"content":"x"})"), ctx);
  EXPECT_TRUE(write.is_error) << rel;
  EXPECT_TRUE(Has(TextOf(write), kind)) << TextOf(write);
  auto edit = tools::MakeEditTool()->Run(J("{" + path + R"(,"oldText":"a","newText":"b"})"), ctx);
  EXPECT_TRUE(edit.is_error) << rel;
  EXPECT_TRUE(Has(TextOf(edit), kind)) << TextOf(edit);
  auto grep = tools::MakeGrepTool()->Run(J("{" + path + R"(,"pattern":"a"})"), ctx);
  EXPECT_TRUE(grep.is_error) << rel;
  EXPECT_TRUE(Has(TextOf(grep), kind)) << TextOf(grep);
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

// Models send odd numbers now and then; none of them may escape as a jsoncpp exception.
TEST(ToolArgsTest, OddNumbersAreErrorsOrTextNeverExceptions) {
  struct Case {
    const char* json;
    bool ok;
    long long value;
  } ints[] = {
      {R"({"n":12})", true, 12},
      {R"({"n":12.0})", true, 12},
      {R"({"n":"12"})", true, 12},
      {R"({"n":18446744073709551615})", false, 0},
      {R"({"n":1e30})", false, 0},
      {R"({"n":2.5})", false, 0},
      {R"({"n":"99999999999999999999"})", false, 0},
  };
  for (const Case& c : ints) {
    Json::Value args = J(c.json);
    tools::Args a(args);
    std::optional<long long> n;
    ASSERT_NO_THROW(n = a.Int("n", 0)) << c.json;
    EXPECT_EQ(a.ok(), c.ok) << c.json;
    if (c.ok) {
      EXPECT_EQ(n, c.value) << c.json;
    }
  }
  Json::Value args = J(R"({"s":1.5,"i":42,"b":true,"t":"false","o":{}})");
  tools::Args a(args);
  EXPECT_EQ(a.String("s", true), "1.5");
  EXPECT_EQ(a.String("i", true), "42");
  EXPECT_EQ(a.String("b", true), "true");
  EXPECT_FALSE(a.Bool("t", true));
  EXPECT_TRUE(a.ok());
  EXPECT_EQ(a.Number("i", 0), 42.0);
  EXPECT_FALSE(a.String("o", true).has_value());
  EXPECT_EQ(a.error(), "o: expected string");
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
  EXPECT_EQ(out.content[1].mime_type(), "image/png");
  EXPECT_EQ(out.content[1].data(), "iVBORw0KGgoAAAANSUhEUg==");
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
  ctx.services = client.Services();
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
  ctx.services = client.Services();
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
  ctx.services = client.Services();
  auto out = tool->Run(J(R"({"path":"f.txt","oldText":"buffer","newText":"edited"})"), ctx);
  ASSERT_FALSE(out.is_error) << TextOf(out);
  EXPECT_EQ(client.files[abs], "edited version\n");
  EXPECT_EQ(ws.Read("f.txt"), "disk version\n");
  std::vector<std::string> expected = {"read " + abs, "write " + abs};
  EXPECT_EQ(client.Calls(), expected);
}

// Nothing opens the other end of the FIFO: a tool that opened it would block for good, so this
// test passing at all is the check (ctest's timeout catches a regression).
TEST(SpecialFileTest, FifoIsRefusedWithoutBlocking) {
  TempWorkspace ws;
  fs::path fifo = ws.root() / "pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << strerror(errno);
  ToolContext ctx = ws.Context();
  ExpectFileToolsRefuse(ctx, "pipe", "FIFO");
  EXPECT_TRUE(fs::is_fifo(fifo));  // write did not replace it either
  // Past the tools' own checks, the file layer refuses it too (the lstat-then-fstat path).
  auto read = tools::ReadDiskFile(fifo);
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(Has(read.error().message, "FIFO")) << read.error().message;
  Status write = tools::WriteDiskFile(fifo, "x");
  ASSERT_FALSE(write.ok());
  EXPECT_TRUE(Has(write.error().message, "FIFO")) << write.error().message;
  EXPECT_FALSE(tools::DiskFile::Open(fifo, true).ok());
}

// Whole files of every size around the read chunk come back byte for byte, and so does a file
// whose size fstat reports as 0 (procfs) and a file at its cap.
TEST(DiskFileTest, ReadsEverySizeAroundTheChunkAndProcFiles) {
  TempWorkspace ws;
  for (size_t n :
       {size_t{0}, size_t{1}, size_t{619}, tools::kReadChunkBytes - 1, tools::kReadChunkBytes,
        tools::kReadChunkBytes + 1, 3 * tools::kReadChunkBytes + 17}) {
    std::string text(n, 'x');
    for (size_t i = 0; i < n; ++i) text[i] = static_cast<char>('a' + i % 23);
    fs::path p = ws.Write("f" + std::to_string(n), text);
    auto read = tools::ReadDiskFile(p);
    ASSERT_TRUE(read.ok()) << n;
    EXPECT_EQ(*read, text) << n;
    auto capped = tools::ReadDiskFile(p, n, CancelToken{});
    ASSERT_TRUE(capped.ok()) << n;
    EXPECT_EQ(*capped, text) << n;
    if (n > 0) {
      EXPECT_FALSE(tools::ReadDiskFile(p, n - 1, CancelToken{}).ok()) << n;
    }
  }
  auto status = tools::ReadDiskFile("/proc/self/status");
  ASSERT_TRUE(status.ok()) << status.error().message;
  EXPECT_TRUE(Has(*status, "VmRSS:")) << *status;
}

TEST(SpecialFileTest, SocketIsRefused) {
  TempWorkspace ws;
  SocketFile sock(ws.root() / "sock");
  ASSERT_TRUE(fs::is_socket(ws.root() / "sock"));
  ToolContext ctx = ws.Context();
  ExpectFileToolsRefuse(ctx, "sock", "socket");
  EXPECT_FALSE(tools::ReadDiskFile(ws.root() / "sock").ok());
  EXPECT_FALSE(tools::WriteDiskFile(ws.root() / "sock", "x").ok());
}

TEST(SpecialFileTest, DevicesAreRefusedEvenInsideTheRoots) {
  TempWorkspace ws;
  fs::create_symlink("/dev/zero", ws.root() / "zero");
  fs::create_symlink("/dev/null", ws.root() / "null");
  ToolContext ctx = ws.Context();
  // Through a symlink the path resolves to /dev/zero, outside the workspace.
  auto out = tools::MakeReadTool()->Run(J(R"({"path":"zero"})"), ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_TRUE(Has(TextOf(out), "outside the workspace")) << TextOf(out);
  // When the roots do allow it, the file kind still stops every tool.
  ctx.roots.emplace_back("/dev");
  ExpectFileToolsRefuse(ctx, "zero", "character device");
  ExpectFileToolsRefuse(ctx, "/dev/null", "character device");
  EXPECT_FALSE(tools::ReadDiskFile("/dev/zero").ok());
}

TEST(SpecialFileTest, DiskFileRefusesASymlinkWhereAResolvedPathWasExpected) {
  TempWorkspace ws;
  fs::path target = ws.Write("t.txt", "text\n");
  fs::create_symlink(target, ws.root() / "l.txt");
  EXPECT_FALSE(tools::DiskFile::Open(ws.root() / "l.txt").ok());
  EXPECT_TRUE(tools::DiskFile::Open(ws.root() / "l.txt", true).ok());
  EXPECT_FALSE(tools::WriteDiskFile(ws.root() / "l.txt", "x").ok());
  EXPECT_EQ(ws.Read("t.txt"), "text\n");
}

TEST(ReadToolTest, HugeSparseFileReturnsThePageWithBoundedMemory) {
  TempWorkspace ws;
  constexpr uintmax_t kTwoGib = 2ULL * 1024 * 1024 * 1024;
  SparseFile(ws, "huge.txt", Lines(3000), kTwoGib);
  auto tool = tools::MakeReadTool();
  ToolContext ctx = ws.Context();
  long before = ResidentKib();
  auto out = tool->Run(J(R"({"path":"huge.txt"})"), ctx);
  long grown_kib = ResidentKib() - before;
  ASSERT_FALSE(out.is_error) << TextOf(out);
  std::string text = TextOf(out);
  EXPECT_LT(text.size(), 64u * 1024);
  EXPECT_LT(grown_kib, 64 * 1024) << "read grew the process by " << grown_kib << " KiB";
  EXPECT_TRUE(Has(text, "  2000\tline 2000\n")) << text.substr(text.size() - 300);
  EXPECT_FALSE(Has(text, "line 2001\n"));
  EXPECT_TRUE(Has(text, "[Showing lines 1-2000; the file is 2 GiB and lines were not counted"))
      << text.substr(text.size() - 300);
  EXPECT_TRUE(Has(text, "Use offset=2001 to continue."));
  EXPECT_TRUE(out.details["truncated"].asBool());
  EXPECT_FALSE(out.details.isMember("totalLines"));
  EXPECT_EQ(out.details["bytes"].asUInt64(), kTwoGib);

  // The text before the hole pages as usual; the hole is one long line of NULs.
  std::string tail = TextOf(tool->Run(J(R"({"path":"huge.txt","offset":2999,"limit":3})"), ctx));
  EXPECT_TRUE(Has(tail, "  2999\tline 2999\n  3000\tline 3000\n  3001\t")) << tail;
  EXPECT_TRUE(Has(tail, "[line truncated: more than ")) << tail;
  EXPECT_LT(tail.size(), 8u * 1024);
  // Skipping to a line deep inside stops at a bound instead of reading 2 GiB.
  auto deep = tool->Run(J(R"({"path":"huge.txt","offset":3002})"), ctx);
  EXPECT_TRUE(deep.is_error);
  EXPECT_TRUE(Has(TextOf(deep), "beyond the first 256 MiB")) << TextOf(deep);
}

TEST(ReadToolTest, StreamingMatchesReadingTheWholeText) {
  // Long lines, CRLF and multi-byte characters straddling the 64 KiB chunk edges, and a last
  // line without a newline: the disk read (streamed) and the editor read (whole text) must show
  // the same thing.
  std::string content;
  content += std::string(tools::kReadChunkBytes - 1, 'a') + "\r\n";  // '\r' ends chunk 1
  content += "short\r\n";
  std::string euros;
  for (int i = 0; i < 30000; ++i) euros += "\xE2\x82\xAC";  // 3-byte characters
  content += "x" + euros + "\n";
  content += Lines(40);
  content += std::string(1998, 'b') + "\xE2\x82\xAC" + std::string(10, 'c') + "\n";
  content += "last, no newline";
  TempWorkspace ws;
  ws.Write("f.txt", content);
  FakeClient client;
  client.can_read = true;
  client.files[(ws.root() / "f.txt").string()] = content;
  auto tool = tools::MakeReadTool();
  for (const char* args : {R"({"path":"f.txt"})", R"({"path":"f.txt","offset":2,"limit":2})",
                           R"({"path":"f.txt","offset":44})", R"({"path":"f.txt","offset":45})",
                           R"({"path":"f.txt","offset":46})", R"({"path":"f.txt","limit":1})"}) {
    ToolContext disk_ctx = ws.Context();
    ToolContext editor_ctx = ws.Context();
    editor_ctx.services = client.Services();
    auto disk = tool->Run(J(args), disk_ctx);
    auto editor = tool->Run(J(args), editor_ctx);
    EXPECT_EQ(TextOf(disk), TextOf(editor)) << args;
    EXPECT_EQ(disk.is_error, editor.is_error) << args;
    EXPECT_EQ(disk.details.toStyledString(), editor.details.toStyledString()) << args;
  }
  ToolContext ctx = ws.Context();
  std::string all = TextOf(tool->Run(J(R"({"path":"f.txt"})"), ctx));
  EXPECT_TRUE(Has(all, "     2\tshort\n")) << all.substr(0, 3000);
  EXPECT_TRUE(Has(all, "    45\tlast, no newline")) << all;
  // Cuts fall before a character, never inside one.
  EXPECT_TRUE(Has(all, "     3\tx" + euros.substr(0, 1998) + "… [line truncated: 90001 bytes]"));
  EXPECT_TRUE(Has(all, "    44\t" + std::string(1998, 'b') + "… [line truncated: 2011 bytes]"));
}

TEST(ReadToolTest, CancelledReadStops) {
  TempWorkspace ws;
  SparseFile(ws, "big.txt", Lines(10), 64ULL * 1024 * 1024);
  ws.Write("small.txt", "abc\n");
  CancelSource source;
  source.Cancel();
  ToolContext ctx = ws.Context();
  ctx.cancel = source.token();
  auto out = tools::MakeReadTool()->Run(J(R"({"path":"big.txt"})"), ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_TRUE(Has(TextOf(out), "cancelled")) << TextOf(out);
  auto edit =
      tools::MakeEditTool()->Run(J(R"({"path":"small.txt","oldText":"a","newText":"b"})"), ctx);
  EXPECT_TRUE(edit.is_error);
  EXPECT_TRUE(Has(TextOf(edit), "cancelled")) << TextOf(edit);
  EXPECT_EQ(ws.Read("small.txt"), "abc\n");
  auto direct = tools::ReadDiskFile(ws.root() / "small.txt", 1024, source.token());
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.error().code, ErrorCode::kCancelled);
}

TEST(EditToolTest, RefusesFilesOverTheCap) {
  TempWorkspace ws;
  SparseFile(ws, "big.txt", "needle\n", tools::kMaxTextFileBytes + 1);
  ws.Write("fits.txt", "needle\n");
  auto tool = tools::MakeEditTool();
  ToolContext ctx = ws.Context();
  auto out = tool->Run(J(R"({"path":"big.txt","oldText":"needle","newText":"pin"})"), ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_TRUE(
      Has(TextOf(out), "big.txt is 10.0 MiB (10485761 bytes); edit loads files of at most 10 MiB"))
      << TextOf(out);
  EXPECT_TRUE(
      tool->Preview(J(R"({"path":"big.txt","oldText":"needle","newText":"pin"})"), ctx).empty());
  EXPECT_EQ(fs::file_size(ws.root() / "big.txt"), tools::kMaxTextFileBytes + 1);
  EXPECT_FALSE(
      tool->Run(J(R"({"path":"fits.txt","oldText":"needle","newText":"pin"})"), ctx).is_error);
  // An editor buffer over the cap is refused the same way.
  FakeClient client;
  client.can_read = client.can_write = true;
  client.files[(ws.root() / "buf.txt").string()] = std::string(tools::kMaxTextFileBytes, 'x') + "y";
  ctx.services = client.Services();
  auto buf = tool->Run(J(R"({"path":"buf.txt","oldText":"y","newText":"z"})"), ctx);
  EXPECT_TRUE(buf.is_error);
  EXPECT_TRUE(Has(TextOf(buf), "more than 10 MiB")) << TextOf(buf);
}

TEST(WriteToolTest, CapsContentAndReplacedFiles) {
  TempWorkspace ws;
  SparseFile(ws, "big.txt", "old\n", tools::kMaxTextFileBytes + 1);
  auto tool = tools::MakeWriteTool();
  ToolContext ctx = ws.Context();
  Json::Value huge(Json::objectValue);
  huge["path"] = "new.txt";
  huge["content"] = std::string(tools::kMaxTextFileBytes + 1, 'x');
  auto out = tool->Run(huge, ctx);
  EXPECT_TRUE(out.is_error);
  EXPECT_TRUE(Has(TextOf(out), "more than the 10 MiB write accepts")) << TextOf(out);
  EXPECT_FALSE(fs::exists(ws.root() / "new.txt"));
  auto replace = tool->Run(J(R"({"path":"big.txt","content":"small"})"), ctx);
  EXPECT_TRUE(replace.is_error);
  EXPECT_TRUE(Has(TextOf(replace), "more than the 10 MiB write replaces")) << TextOf(replace);
  EXPECT_EQ(fs::file_size(ws.root() / "big.txt"), tools::kMaxTextFileBytes + 1);
}

}  // namespace
}  // namespace lousho::agent
