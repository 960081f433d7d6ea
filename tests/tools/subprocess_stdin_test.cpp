// Tests of support/subprocess's stdin and separate stderr (what hooks need): real processes.
#include <gtest/gtest.h>

#include <string>

#include "support/subprocess.h"

namespace lousho {
namespace {

SubprocessOptions BashWithInput(const std::string& cmd, std::string input) {
  SubprocessOptions o;
  o.argv = {"/bin/bash", "-c", cmd};
  o.input = std::move(input);
  return o;
}

TEST(SubprocessStdinTest, TheCommandReadsItsInputAndStderrIsKeptApart) {
  SubprocessOptions o = BashWithInput("tr a-z A-Z; echo oops >&2; exit 4", "hello\n");
  o.separate_stderr = true;
  std::string streamed;
  o.on_output = [&](std::string_view chunk) { streamed.append(chunk); };
  auto r = RunSubprocess(o);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->output, "HELLO\n");
  EXPECT_EQ(r->error_output, "oops\n");
  EXPECT_EQ(streamed, "HELLO\n") << "on_output sees stdout only";
  EXPECT_EQ(r->exit_code, 4);
}

TEST(SubprocessStdinTest, InputLargerThanAPipeNeverBlocksACommandThatDoesNotRead) {
  // 4 MiB would fill a pipe many times over; the command exits without reading any of it.
  auto r = RunSubprocess(BashWithInput("echo done", std::string(size_t{4} << 20, 'x')));
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  EXPECT_EQ(r->output, "done\n");
  auto all = RunSubprocess(BashWithInput("wc -c", std::string(size_t{4} << 20, 'x')));
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->output.substr(0, all->output.find_first_of(" \n")), "4194304");
}

TEST(SubprocessStdinTest, WithoutSeparateStderrOutputStaysMergedAndStdinEmpty) {
  SubprocessOptions o;
  o.argv = {"/bin/bash", "-c", "cat; echo out; echo err >&2"};
  auto r = RunSubprocess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->output, "out\nerr\n");
  EXPECT_TRUE(r->error_output.empty());
}

TEST(SubprocessStdinTest, StderrIsCappedToItsTail) {
  SubprocessOptions o =
      BashWithInput("head -c 5000 /dev/zero | tr '\\0' e >&2; printf 'z' >&2", "");
  o.separate_stderr = true;
  o.max_output_bytes = 100;
  auto r = RunSubprocess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->error_output.size(), 100u);
  EXPECT_EQ(r->error_output.back(), 'z');
  EXPECT_TRUE(r->truncated);
}

}  // namespace
}  // namespace lousho
