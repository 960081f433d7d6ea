// Tests for how edit, write and the session export replace files on disk: a failed write (a full
// disk, a process over its file-size limit) leaves the original byte for byte, and a good one
// keeps its mode, owner, symlinks and hard links.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "agent/tools/builtin_tools.h"
#include "agent/tools/tool_util.h"
#include "tests/tools/tool_test_util.h"

namespace lousho::agent::disk_write_test {
namespace {

using testing::J;
using testing::TempWorkspace;
using testing::TextOf;
namespace fs = std::filesystem;

// While alive, files this process writes stop at `bytes` (RLIMIT_FSIZE), and a write past it
// fails with EFBIG instead of raising SIGXFSZ: what a full disk does to a write, without a
// mount or root.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    EXPECT_EQ(getrlimit(RLIMIT_FSIZE, &saved_), 0) << strerror(errno);
    old_handler_ = signal(SIGXFSZ, SIG_IGN);
    rlimit low = saved_;
    low.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &low), 0) << strerror(errno);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  sighandler_t old_handler_ = SIG_DFL;
};

// 20,000 numbered lines, 400,000 bytes: the file of the probe that an edit cut short.
std::string Important() {
  std::string s;
  char line[32];
  for (int i = 0; i < 20000; ++i) {
    std::snprintf(line, sizeof line, "line %06d keep me\n", i);
    s += line;
  }
  return s;
}

mode_t ModeOf(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// Everything in `dir` but `keep`: a temporary file left behind would show here.
std::vector<std::string> Others(const fs::path& dir, const std::string& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != keep) out.push_back(e.path().filename().string());
  return out;
}

// The probe's case: an edit that makes the file longer on a disk without room for it. The edit
// fails, and the file is what it was, not cut short; so for write. The mode stays too.
TEST(DiskWriteTest, FullDiskLeavesTheOriginalByteForByte) {
  TempWorkspace ws;
  const std::string original = Important();
  fs::path file = ws.Write("important.txt", original);
  ASSERT_EQ(chmod(file.c_str(), 0640), 0);
  ToolContext ctx = ws.Context();
  Json::Value edit = J(
      R"({"path":"important.txt","oldText":"line 000000 keep me","newText":"line 000000 longer"})");
  Json::Value write =
      J(R"({"path":"important.txt","content":")" + std::string(100000, 'w') + R"("})");
  {
    FileSizeLimit full(rlim_t{64} * 1024);
    auto out = tools::MakeEditTool()->Run(edit, ctx);
    EXPECT_TRUE(out.is_error);
    EXPECT_NE(TextOf(out).find("File too large"), std::string::npos) << TextOf(out);
    EXPECT_NE(TextOf(out).find("unchanged"), std::string::npos) << TextOf(out);
    auto wrote = tools::MakeWriteTool()->Run(write, ctx);
    EXPECT_TRUE(wrote.is_error);
    EXPECT_NE(TextOf(wrote).find("File too large"), std::string::npos) << TextOf(wrote);
    // A new file that does not fit leaves nothing behind either.
    auto fresh = tools::MakeWriteTool()->Run(
        J(R"({"path":"fresh.txt","content":")" + std::string(100000, 'n') + R"("})"), ctx);
    EXPECT_TRUE(fresh.is_error);
  }
  EXPECT_TRUE(ws.Read("important.txt") == original) << "the original changed";
  EXPECT_EQ(ModeOf(file), 0640u);
  EXPECT_EQ(Others(ws.root(), "important.txt"), std::vector<std::string>{});

  // With room again the same edit goes through and the mode is still the original's.
  auto out = tools::MakeEditTool()->Run(edit, ctx);
  ASSERT_FALSE(out.is_error) << TextOf(out);
  EXPECT_EQ(ws.Read("important.txt").substr(0, 19), "line 000000 longer\n");
  EXPECT_EQ(ModeOf(file), 0640u);
  EXPECT_EQ(Others(ws.root(), "important.txt"), std::vector<std::string>{});
}

// The new content arrives whole in a new file: a reader that opened the file before the write
// keeps reading the old content, never a mix or an empty file.
TEST(DiskWriteTest, ReplacesTheFileInsteadOfRewritingIt) {
  TempWorkspace ws;
  fs::path file = ws.Write("f.txt", "old content\n");
  std::ifstream before(file, std::ios::binary);
  ASSERT_TRUE(tools::WriteDiskFile(file, "new\n").ok());
  std::string seen((std::istreambuf_iterator<char>(before)), std::istreambuf_iterator<char>());
  EXPECT_EQ(seen, "old content\n");
  EXPECT_EQ(ws.Read("f.txt"), "new\n");
  // A name of the longest length a folder takes still gets a temporary name beside it.
  const std::string longest(255, 'n');
  ws.Write(longest, "old");
  ASSERT_TRUE(tools::WriteDiskFile(ws.root() / longest, "new").ok());
  EXPECT_EQ(ws.Read(longest), "new");
}

// Modes (set-group-ID and sticky bits included) and, where this user may give them, owner and
// group carry over; a new file gets 0666 less the umask.
TEST(DiskWriteTest, KeepsModeAndOwner) {
  TempWorkspace ws;
  fs::path file = ws.Write("run.sh", "#!/bin/sh\n");
  const bool root = geteuid() == 0;
  if (root) {
    ASSERT_EQ(chown(file.c_str(), 4321, 8765), 0) << strerror(errno);
  }
  // After the chown, which clears the set-ID bits.
  ASSERT_EQ(chmod(file.c_str(), 03751), 0);
  ASSERT_EQ(ModeOf(file), 03751u);
  ASSERT_TRUE(tools::WriteDiskFile(file, "#!/bin/sh\necho hi\n").ok());
  EXPECT_EQ(ModeOf(file), 03751u);
  struct stat st {};
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  if (root) {
    EXPECT_EQ(st.st_uid, 4321u);
    EXPECT_EQ(st.st_gid, 8765u);
  }
  EXPECT_EQ(ws.Read("run.sh"), "#!/bin/sh\necho hi\n");

  mode_t mask = umask(027);
  Status made = tools::WriteDiskFile(ws.root() / "new.txt", "x");
  umask(mask);
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_EQ(ModeOf(ws.root() / "new.txt"), 0640u);
}

// Through a symlink the tools write the file it names (their paths are resolved) and the link
// stays a link; the export follows a link it is given the same way.
TEST(DiskWriteTest, SymlinksStayAndTheirTargetsChange) {
  TempWorkspace ws;
  ws.Write("sub/target.txt", "one\ntwo\n");
  fs::create_symlink("sub/target.txt", ws.root() / "link.txt");
  ToolContext ctx = ws.Context();
  auto out =
      tools::MakeEditTool()->Run(J(R"({"path":"link.txt","oldText":"two","newText":"TWO"})"), ctx);
  ASSERT_FALSE(out.is_error) << TextOf(out);
  EXPECT_TRUE(fs::is_symlink(ws.root() / "link.txt"));
  EXPECT_EQ(ws.Read("sub/target.txt"), "one\nTWO\n");
  EXPECT_EQ(Others(ws.root() / "sub", "target.txt"), std::vector<std::string>{});

  fs::create_symlink(ws.root() / "sub" / "page.html", ws.root() / "export.html");
  ASSERT_TRUE(tools::WriteDiskFile(ws.root() / "export.html", "<p>", true).ok());
  EXPECT_TRUE(fs::is_symlink(ws.root() / "export.html"));
  EXPECT_EQ(ws.Read("sub/page.html"), "<p>");
}

// A file with several hard links is rewritten in place: every name shows the new content. When
// it cannot fit, it fails before a byte changes.
TEST(DiskWriteTest, HardLinkedFilesChangeUnderEveryName) {
  TempWorkspace ws;
  fs::path a = ws.Write("a.txt", "shared old content\n");
  fs::create_hard_link(a, ws.root() / "b.txt");
  ASSERT_TRUE(tools::WriteDiskFile(a, "shared new\n").ok());
  EXPECT_EQ(ws.Read("b.txt"), "shared new\n");
  EXPECT_EQ(fs::hard_link_count(a), 2u);
  {
    FileSizeLimit full(1024);
    Status st = tools::WriteDiskFile(a, std::string(4096, 'x'));
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("unchanged"), std::string::npos) << st.error().message;
  }
  EXPECT_EQ(ws.Read("a.txt"), "shared new\n");
  EXPECT_EQ(ws.Read("b.txt"), "shared new\n");
}

// A file this user may write in a folder it may not: rewritten in place, which is the only way.
TEST(DiskWriteTest, WritableFileInAReadOnlyFolderIsRewrittenInPlace) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes into any folder";
  TempWorkspace ws;
  fs::path file = ws.Write("ro/f.txt", "before\n");
  ASSERT_EQ(chmod((ws.root() / "ro").c_str(), 0555), 0);
  Status st = tools::WriteDiskFile(file, "after\n");
  chmod((ws.root() / "ro").c_str(), 0755);
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(ws.Read("ro/f.txt"), "after\n");
}

}  // namespace
}  // namespace lousho::agent::disk_write_test
