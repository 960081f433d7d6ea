// Context files: discovery from the working folder to the repository root and the user's
// folders, general first; `@path` imports (relative, depth-limited, cycles and escapes refused);
// the size limits with their notice; the environment block with and without git.
#include "host/context/context_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "host/context/environment.h"
#include "support/subprocess.h"

namespace lousho::host::context {
namespace {
namespace fs = std::filesystem;

class ContextFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lousho-ctxfiles-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "repo/.git");
    fs::create_directories(dir_ / "repo/app/sub");
    fs::create_directories(dir_ / "home/.claude");
    fs::create_directories(dir_ / "home/.lousho");
    Write("AGENTS.md", "ABOVE_REPO");  // above the repository root: never read
    Write("repo/AGENTS.md", "ROOT_AGENTS");
    Write("repo/app/CLAUDE.md", "APP_CLAUDE");
    Write("repo/app/AGENTS.md", "APP_AGENTS");
    Write("repo/app/sub/AGENTS.md", "SUB_AGENTS");
    Write("home/.claude/CLAUDE.md", "HOME_CLAUDE");
    Write("home/.lousho/AGENTS.md", "HOME_LOUSHO");
    o_.cwd = dir_ / "repo/app";
    o_.roots = {o_.cwd};
    o_.home = (dir_ / "home").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
  static size_t At(const std::string& text, const std::string& marker) {
    size_t at = text.find(marker);
    EXPECT_NE(at, std::string::npos) << marker << " missing from:\n" << text;
    return at;
  }

  fs::path dir_;
  ContextFileOptions o_;
};

TEST_F(ContextFilesTest, FindsUserThenRootThenWorkingFolderNeverBelowOrAboveTheRepository) {
  ContextFiles got = CollectContextFiles(o_);
  const std::string& t = got.text;
  EXPECT_LT(At(t, "HOME_CLAUDE"), At(t, "HOME_LOUSHO"));
  EXPECT_LT(At(t, "HOME_LOUSHO"), At(t, "ROOT_AGENTS"));
  EXPECT_LT(At(t, "ROOT_AGENTS"), At(t, "APP_AGENTS"));
  EXPECT_LT(At(t, "APP_AGENTS"), At(t, "APP_CLAUDE"));  // the names' order within a folder
  EXPECT_EQ(t.find("SUB_AGENTS"), std::string::npos);
  EXPECT_EQ(t.find("ABOVE_REPO"), std::string::npos);
  // Each under a heading naming its path.
  EXPECT_NE(t.find("## " + (dir_ / "repo/AGENTS.md").string() + "\n\nROOT_AGENTS"),
            std::string::npos);
  ASSERT_EQ(got.files.size(), 5u);
  EXPECT_EQ(got.files[2].why, "repository root");
  EXPECT_EQ(got.files[3].why, "working folder");
  EXPECT_EQ(got.files[3].bytes, 10u);
}

TEST_F(ContextFilesTest, SettingsTurnPartsOffAndNameTheFiles) {
  o_.user = false;
  o_.file_names = {"CLAUDE.md"};
  ContextFiles got = CollectContextFiles(o_);
  EXPECT_EQ(got.text.find("HOME_"), std::string::npos);
  EXPECT_EQ(got.text.find("AGENTS"), std::string::npos);
  EXPECT_NE(got.text.find("APP_CLAUDE"), std::string::npos);
  o_.project = false;
  EXPECT_TRUE(CollectContextFiles(o_).text.empty());
}

TEST_F(ContextFilesTest, OutsideARepositoryTheWalkGoesUpAndAdditionalFoldersCount) {
  fs::remove_all(dir_ / "repo/.git");
  o_.user = false;
  Write("extra/AGENTS.md", "EXTRA_DIR");
  o_.additional_dirs = {dir_ / "extra"};
  const std::string t = CollectContextFiles(o_).text;
  EXPECT_LT(At(t, "EXTRA_DIR"), At(t, "ABOVE_REPO"));
  EXPECT_LT(At(t, "ABOVE_REPO"), At(t, "ROOT_AGENTS"));
}

TEST_F(ContextFilesTest, TheSameFileTwiceAndTheSpecsOwnAreReadOnce) {
  fs::remove(dir_ / "repo/app/CLAUDE.md");
  fs::create_symlink("AGENTS.md", dir_ / "repo/app/CLAUDE.md");
  o_.skip_path = (dir_ / "repo/AGENTS.md").string();
  ContextFiles got = CollectContextFiles(o_);
  size_t first = got.text.find("APP_AGENTS");
  EXPECT_EQ(got.text.find("APP_AGENTS", first + 1), std::string::npos);
  EXPECT_EQ(got.text.find("ROOT_AGENTS"), std::string::npos);
  int refused = 0;
  for (const auto& f : got.files) refused += f.refused.empty() ? 0 : 1;
  EXPECT_EQ(refused, 2);
}

TEST_F(ContextFilesTest, ImportsExpandRelativeToTheirFileWithinLimits) {
  o_.user = false;
  Write("repo/app/AGENTS.md",
        "APP_AGENTS\nsee @docs/a.md, and `@docs/code.md` and mail me@x.org\n```\n@docs/code.md\n"
        "```\n@../../outside.md\n@docs/missing.md\n");
  Write("repo/app/docs/a.md", "IMPORTED_A @b.md");
  Write("repo/app/docs/b.md", "IMPORTED_B @a.md");  // a cycle back to a.md
  Write("repo/app/docs/code.md", "CODE_NOT_IMPORTED");
  Write("outside.md", "OUTSIDE");
  ContextFiles got = CollectContextFiles(o_);
  const std::string& t = got.text;
  EXPECT_LT(At(t, "IMPORTED_A"), At(t, "IMPORTED_B"));
  EXPECT_EQ(t.find("CODE_NOT_IMPORTED"), std::string::npos);
  EXPECT_EQ(t.find("OUTSIDE"), std::string::npos);
  EXPECT_NE(t.find("IMPORTED_B @a.md"), std::string::npos);  // the cycle left as written
  std::map<std::string, std::string> refused;
  for (const auto& f : got.files)
    if (!f.refused.empty()) refused[fs::path(f.path).filename().string()] = f.refused;
  EXPECT_EQ(refused["a.md"], "import cycle");
  EXPECT_EQ(refused["outside.md"], "outside the folders the session's tools may read");
  EXPECT_EQ(refused["missing.md"], "import not found");

  o_.import_depth = 1;
  got = CollectContextFiles(o_);
  EXPECT_NE(got.text.find("IMPORTED_A @b.md"), std::string::npos);
  EXPECT_EQ(got.text.find("IMPORTED_B"), std::string::npos);
}

TEST_F(ContextFilesTest, LimitsCutWithANoticeAndServeTheMostSpecificFirst) {
  o_.user = false;
  Write("repo/app/CLAUDE.md", std::string(50, 'x') + "\n" + std::string(50, 'y') + "\n");
  o_.max_file_bytes = 60;
  ContextFiles got = CollectContextFiles(o_);
  EXPECT_NE(got.text.find(std::string(50, 'x') + "\n\n[lousho: cut to 50 of 101 bytes"),
            std::string::npos);
  EXPECT_EQ(got.text.find("yyy"), std::string::npos);
  EXPECT_TRUE(got.files.back().cut);
  EXPECT_EQ(got.files.back().kept, 50u);

  o_.max_file_bytes = 1000;
  o_.max_bytes = 111;  // room for app/ only: the repository root's file is left out
  got = CollectContextFiles(o_);
  EXPECT_EQ(got.text.find("ROOT_AGENTS"), std::string::npos);
  EXPECT_NE(got.text.find("APP_AGENTS"), std::string::npos);
  EXPECT_EQ(got.files.front().refused, "the context is full (context.maxBytes 111)");
}

TEST(FindImportsTest, TokensAtWordStartsOutsideCode) {
  auto refs = FindImports("@a.md x@y.md @@z.md @name\n`@c.md` @d/e.md).\n");
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[0].path, "a.md");
  EXPECT_EQ(refs[0].offset, 0u);
  EXPECT_EQ(refs[1].path, "d/e.md");
  EXPECT_EQ(refs[1].length, 7u);
}

class EnvironmentTest : public ContextFilesTest {};

TEST_F(EnvironmentTest, NotARepositorySaysSoAndRunsNoGit) {
  fs::remove_all(dir_ / "repo/.git");
  EnvironmentOptions eo;
  eo.cwd = dir_ / "repo/app";
  eo.date = "2026-01-02";
  Environment env = DescribeEnvironment(eo);
  EXPECT_NE(env.text.find("Date: 2026-01-02\n"), std::string::npos);
  EXPECT_NE(env.text.find("Working folder: " + eo.cwd.string() + "\n"), std::string::npos);
  EXPECT_NE(env.text.find("Git repository: no\n"), std::string::npos);
  EXPECT_EQ(env.text.find("Branch"), std::string::npos);
  EXPECT_TRUE(env.repository.empty());
}

TEST_F(EnvironmentTest, ARepositoryGivesBranchStatusAndCommits) {
  fs::remove_all(dir_ / "repo/.git");
  const std::string repo = (dir_ / "repo").string();
  auto git = [&](std::vector<std::string> args) {
    SubprocessOptions so;
    so.argv = {"git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"};
    so.argv.insert(so.argv.end(), args.begin(), args.end());
    so.timeout_ms = 20000;
    auto r = RunSubprocess(so);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->exit_code.value_or(-1), 0) << r->output;
  };
  git({"init", "-q", "-b", "featurebranch"});
  git({"add", "AGENTS.md"});
  git({"commit", "-q", "-m", "first commit here"});
  Write("repo/AGENTS.md", "changed");
  EnvironmentOptions eo;
  eo.cwd = dir_ / "repo/app";
  Environment env = DescribeEnvironment(eo);
  EXPECT_EQ(env.repository, repo);
  EXPECT_NE(env.text.find("Branch: featurebranch\n"), std::string::npos) << env.text;
  EXPECT_NE(env.text.find(" M AGENTS.md\n"), std::string::npos) << env.text;
  EXPECT_NE(env.text.find("?? app/\n"), std::string::npos) << env.text;
  EXPECT_NE(env.text.find(" first commit here\n"), std::string::npos) << env.text;
  eo.max_status_lines = 1;
  EXPECT_NE(DescribeEnvironment(eo).text.find("… and 1 more\n"), std::string::npos);
  eo.git = false;
  EXPECT_EQ(DescribeEnvironment(eo).text.find("Branch"), std::string::npos);
}

}  // namespace
}  // namespace lousho::host::context
