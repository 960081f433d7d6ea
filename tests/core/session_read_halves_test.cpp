// Tests of reading a large session file as two halves on two threads (agent/session_read.cpp):
// every file must read exactly as on one thread (entries, warnings, valid bytes, errors and their
// line numbers), with the cut in every place a small file allows, and one file above the real
// threshold.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "agent/session_store.h"
#include "support/json_util.h"
#include "tests/core/session_file_lines.h"

namespace lousho::agent {
namespace {
namespace fs = std::filesystem;

constexpr char kHalvesHeader[] =
    R"({"type":"session","version":1,"id":"hv","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/w"})";

// An entry line: a user message of `text`, id `e<n>`, hanging off n - 1.
std::string HalvesEntryLine(int n, const std::string& text) {
  return UserEntryLine("e" + std::to_string(n), n > 1 ? "e" + std::to_string(n - 1) : "", n, text);
}

class SessionReadHalvesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() /
            ("lousho-halves-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl");
  }
  void TearDown() override { fs::remove(path_); }

  // Writes `text` and reads it on one thread and in halves (every file over 1 byte is cut), with
  // a few chunk sizes: all must agree. Returns the one-thread outcome; `threads` gets how many
  // threads the halves' read used.
  std::string SameOnTwoThreads(const std::string& text, int* threads = nullptr) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << text;
    std::string one = ReadOutcome(ReadSessionFile(path_, kSessionReadChunkBytes, 0));
    for (size_t chunk : {size_t{7}, size_t{64}, kSessionReadChunkBytes}) {
      auto two = ReadSessionFile(path_, chunk, 1);
      EXPECT_EQ(ReadOutcome(two), one) << "chunks of " << chunk;
      if (threads != nullptr) *threads = two.ok() ? two->decode_threads : 0;
    }
    return one;
  }

  fs::path path_;
};

std::string HalvesFile(int n) {
  std::string text = std::string(kHalvesHeader) + "\n";
  for (int i = 1; i <= n; ++i)
    text += HalvesEntryLine(i, std::string(static_cast<size_t>(i % 9) * 5 + 1, 'k')) + "\n";
  return text;
}

TEST_F(SessionReadHalvesTest, AFileReadsAsOnOneThread) {
  int threads = 0;
  const std::string text = HalvesFile(40);
  const std::string one = SameOnTwoThreads(text, &threads);
  EXPECT_EQ(threads, 2);
  EXPECT_NE(one.find("\"id\":\"e40\""), std::string::npos) << one;
  EXPECT_NE(one.find("valid " + std::to_string(text.size())), std::string::npos) << one;
}

TEST_F(SessionReadHalvesTest, ATornLastLineAndZerosAtTheEnd) {
  std::string text = HalvesFile(30) + "{\"type\":\"mes";
  int threads = 0;
  std::string one = SameOnTwoThreads(text, &threads);
  EXPECT_EQ(threads, 2);
  EXPECT_NE(one.find(".jsonl:32: skipped a torn last line (12 bytes)"), std::string::npos) << one;
  text.append(50, '\0');
  one = SameOnTwoThreads(text, &threads);
  EXPECT_EQ(threads, 2);
  EXPECT_NE(one.find("skipped 50 bytes of zero bytes"), std::string::npos) << one;
  // Only zeros after the cut: the second half holds no line.
  const std::string lines =
      std::string(kHalvesHeader) + "\n" + HalvesEntryLine(1, std::string(1000, 'y')) + "\n";
  one = SameOnTwoThreads(lines + std::string(900, '\0'), &threads);
  EXPECT_EQ(threads, 2);
  EXPECT_NE(one.find("of zero bytes (NUL) at its end, after byte " + std::to_string(lines.size())),
            std::string::npos)
      << one;
}

TEST_F(SessionReadHalvesTest, ABadLineNamesItsLineInEitherHalf) {
  const int lines = 40;
  for (int bad : {3, 12, 25, 38}) {
    std::string text = std::string(kHalvesHeader) + "\n";
    for (int i = 1; i <= lines; ++i)
      text +=
          (i == bad ? std::string("{\"type\":\"message\",\"id\":7}") : HalvesEntryLine(i, "x")) +
          (i % 10 == 0 ? "\n\r\n" : "\n");  // blank lines shift the numbers
    const int number = bad + 1 + (bad - 1) / 10;
    const std::string one = SameOnTwoThreads(text);
    EXPECT_EQ(one.rfind("error ", 0), 0u) << one;
    EXPECT_NE(one.find(".jsonl:" + std::to_string(number) + ".id: expected string"),
              std::string::npos)
        << "bad line " << bad << ": " << one;
  }
}

TEST_F(SessionReadHalvesTest, AHeaderAfterTheCutOrNoneReadsAsOnOneThread) {
  int threads = 0;
  // Blank lines fill the first half: the header comes after the cut.
  std::string one = SameOnTwoThreads(
      std::string(300, '\n') + kHalvesHeader + "\n" + HalvesEntryLine(1, "a") + "\n", &threads);
  EXPECT_EQ(threads, 1);
  EXPECT_NE(one.find("\"id\":\"e1\""), std::string::npos) << one;
  one = SameOnTwoThreads(std::string(300, '\n') + HalvesEntryLine(1, "a") + "\n");
  // The first line that is not blank is taken as the header.
  EXPECT_EQ(one, "error LOUSHO_SESSION_FILE: " + path_.string() + ":301.version: required");
  one = SameOnTwoThreads("not a header\n" + HalvesFile(20).substr(sizeof kHalvesHeader));
  EXPECT_EQ(one.rfind("error LOUSHO_SESSION_FILE: " + path_.string() + ":1: ", 0), 0u) << one;
  // One line and no cut to be had: one thread.
  SameOnTwoThreads(std::string(kHalvesHeader) + "\n" + HalvesEntryLine(1, std::string(500, 'z')),
                   &threads);
  EXPECT_EQ(threads, 1);
}

// A file just above the real threshold, of entries of 300 bytes of text; `n` gets their number.
std::string LargeHalvesFile(int* n) {
  std::string text = std::string(kHalvesHeader) + "\n";
  const std::string filler(300, 'w');
  *n = 0;
  while (text.size() <= kSessionTwoThreadBytes + 4096) text += HalvesEntryLine(++*n, filler) + "\n";
  return text;
}

// A file above the real threshold is read in halves by default, as on one thread.
TEST_F(SessionReadHalvesTest, AFileAboveTheThresholdReadsInHalves) {
  int n = 0;
  const std::string text = LargeHalvesFile(&n);
  std::ofstream(path_, std::ios::binary | std::ios::trunc) << text;
  auto two = ReadSessionFile(path_);
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(two->decode_threads, 2);
  EXPECT_EQ(two->entries.size(), static_cast<size_t>(n));
  EXPECT_EQ(ReadOutcome(two), ReadOutcome(ReadSessionFile(path_, kSessionReadChunkBytes, 0)));
}

// A bad line three quarters into a file above the threshold is named by its line (the header is
// line 1), as on one thread.
TEST_F(SessionReadHalvesTest, ABadLineInTheSecondHalfOfALargeFileNamesItsLine) {
  int n = 0;
  std::string text = LargeHalvesFile(&n);
  const int bad = n * 3 / 4;
  const std::string line = HalvesEntryLine(bad, std::string(300, 'w'));
  const size_t at = text.find(line);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, line.size(), "{\"type\":\"message\",\"id\":\"e\",\"message\":5}");
  std::ofstream(path_, std::ios::binary | std::ios::trunc) << text;
  auto broken = ReadSessionFile(path_);
  ASSERT_FALSE(broken.ok());
  const std::string& message = broken.error().message;
  EXPECT_EQ(message.rfind(
                path_.string() + ":" + std::to_string(bad + 1) + ".message: expected object", 0),
            0u)
      << message;
  EXPECT_EQ(message, ReadSessionFile(path_, kSessionReadChunkBytes, 0).error().message);
}

}  // namespace
}  // namespace lousho::agent
