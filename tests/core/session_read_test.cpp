// Tests of reading a session file a chunk at a time (agent/session_read.cpp): lines split across
// chunks, lines longer than a chunk, CRLF, a last line with and without its newline, torn lines,
// zero bytes (NUL) at the end and elsewhere, the line limit over chunks, an empty file. Each text
// is read with many chunk sizes, down to one byte, and every read must give what one read of the
// whole text gives.
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

constexpr char kReadHeader[] =
    R"({"type":"session","version":1,"id":"rd","timestamp":"2026-12-01T00:00:00.000Z","cwd":"/w"})";

// An entry line: a user message of `text`, id `n` (8 hex digits), hanging off n - 1.
std::string ReadEntryLine(int n, const std::string& text) {
  auto hex = [](int v) {
    char id[16];
    std::snprintf(id, sizeof id, "%08x", v);
    return std::string(id);
  };
  return UserEntryLine(hex(n), n > 1 ? hex(n - 1) : "", n, text);
}

std::string ReadInChunks(const std::string& text, size_t chunk, uint64_t max_line = 1 << 20) {
  return ReadOutcome(ParseSessionText(text, "s.jsonl", max_line, chunk));
}

// Reads `text` with chunks of 1 to 40 bytes and a few larger ones; each must give what one read
// of the whole text gives, which is returned.
std::string SameInEveryChunking(const std::string& text, uint64_t max_line = 1 << 20) {
  std::string whole = ReadInChunks(text, text.size() + 1, max_line);
  std::vector<size_t> sizes;
  for (size_t c = 1; c <= 40; ++c) sizes.push_back(c);
  for (size_t c : {63, 64, 100, 127, 255, 1000}) sizes.push_back(c);
  for (size_t c : sizes) EXPECT_EQ(ReadInChunks(text, c, max_line), whole) << "chunks of " << c;
  return whole;
}

TEST(SessionReadTest, LinesSplitAcrossChunksReadAsInOnePiece) {
  std::string text = std::string(kReadHeader) + "\n";
  for (int i = 1; i <= 6; ++i)
    text += ReadEntryLine(i, std::string(static_cast<size_t>(i) * 7, static_cast<char>('a' + i))) +
            "\n";
  const std::string whole = SameInEveryChunking(text);
  EXPECT_EQ(whole.rfind("header rd\n", 0), 0u) << whole;
  EXPECT_NE(whole.find("\"text\":\"gggggggggggggggggggggggggggggggggggggggggg\""),
            std::string::npos)
      << whole;
  EXPECT_NE(whole.find("valid " + std::to_string(text.size())), std::string::npos) << whole;
  auto read = ParseSessionText(text, "s.jsonl", kMaxSessionLineBytes, 5);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->entries.size(), 6u);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(read->entries[i].message.TextContent(),
              std::string(static_cast<size_t>(i + 1) * 7, static_cast<char>('b' + i)));
}

TEST(SessionReadTest, ALineLongerThanAChunkIsGatheredWhole) {
  const std::string big(5000, 'x');
  const std::string text = std::string(kReadHeader) + "\n" + ReadEntryLine(1, "a") + "\n" +
                           ReadEntryLine(2, big) + "\n" + ReadEntryLine(3, "c") + "\n";
  for (size_t chunk : {16, 100, 4096}) {
    auto read = ParseSessionText(text, "s.jsonl", kMaxSessionLineBytes, chunk);
    ASSERT_TRUE(read.ok()) << read.error().message;
    ASSERT_EQ(read->entries.size(), 3u) << "chunks of " << chunk;
    EXPECT_EQ(read->entries[1].message.TextContent(), big) << "chunks of " << chunk;
    EXPECT_EQ(read->entries[2].message.TextContent(), "c") << "chunks of " << chunk;
    EXPECT_EQ(read->valid_bytes, text.size());
  }
}

// A real file whose one line is longer than the file reader's chunk (the default one), read
// through the file path, with the header and a line on either side.
TEST(SessionReadTest, AFileLineLongerThanTheReadChunkLoads) {
  const fs::path path =
      fs::temp_directory_path() / ("lousho-read-" + std::to_string(getpid()) + ".jsonl");
  const std::string big(kSessionReadChunkBytes * 2 + 123, 'y');
  const std::string text = std::string(kReadHeader) + "\n" + ReadEntryLine(1, "a") + "\n" +
                           ReadEntryLine(2, big) + "\n" + ReadEntryLine(3, "c");
  std::ofstream(path, std::ios::binary) << text;
  auto read = ReadSessionFile(path);
  fs::remove(path);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(read->entries.size(), 3u);
  EXPECT_EQ(read->entries[1].message.TextContent(), big);
  EXPECT_EQ(read->entries[2].message.TextContent(), "c");
  EXPECT_TRUE(read->warnings.empty());
  EXPECT_EQ(read->valid_bytes, text.size()) << "a last line without a newline that parses is kept";
}

TEST(SessionReadTest, CrlfLinesLoad) {
  const std::string text = std::string(kReadHeader) + "\r\n" + ReadEntryLine(1, "a") + "\r\n" +
                           "\r\n" + ReadEntryLine(2, "b") + "\r\n";
  const std::string whole = SameInEveryChunking(text);
  EXPECT_EQ(whole.find("error"), std::string::npos) << whole;
  EXPECT_NE(whole.find("\"text\":\"b\""), std::string::npos) << whole;
  EXPECT_NE(whole.find("valid " + std::to_string(text.size())), std::string::npos) << whole;
}

TEST(SessionReadTest, TheLastLineWithOrWithoutItsNewline) {
  const std::string head = std::string(kReadHeader) + "\n" + ReadEntryLine(1, "a") + "\n";
  const std::string last = ReadEntryLine(2, "b");
  // Whole but without its newline: kept, and valid up to its end.
  std::string whole = SameInEveryChunking(head + last);
  EXPECT_NE(whole.find("\"text\":\"b\""), std::string::npos) << whole;
  EXPECT_NE(whole.find("valid " + std::to_string(head.size() + last.size())), std::string::npos)
      << whole;
  // Torn: skipped with a warning naming its line and length; valid up to the line before.
  const std::string torn = last.substr(0, 37);
  whole = SameInEveryChunking(head + torn);
  EXPECT_EQ(whole.find("\"text\":\"b\""), std::string::npos) << whole;
  EXPECT_NE(whole.find("warning s.jsonl:3: skipped a torn last line (37 bytes)"), std::string::npos)
      << whole;
  EXPECT_NE(whole.find("valid " + std::to_string(head.size())), std::string::npos) << whole;
  // Torn, then a newline: not a crash's tear, an error.
  whole = SameInEveryChunking(head + torn + "\n");
  EXPECT_EQ(whole.rfind("error LOUSHO_SESSION_FILE: s.jsonl:3: ", 0), 0u) << whole;
  // Blank lines at the end: with their newline they count, a blank last one without does not.
  whole = SameInEveryChunking(head + "  \n \t");
  EXPECT_NE(whole.find("valid " + std::to_string(head.size() + 3)), std::string::npos) << whole;
  // Only a header, without its newline: a session of no entries.
  whole = SameInEveryChunking(kReadHeader);
  EXPECT_NE(whole.find("valid " + std::to_string(std::string(kReadHeader).size())),
            std::string::npos)
      << whole;
  // A header cut short: no header at all.
  EXPECT_EQ(SameInEveryChunking(std::string(kReadHeader).substr(0, 30)),
            "error LOUSHO_SESSION_FILE: s.jsonl: no session header");
}

TEST(SessionReadTest, ZeroBytesAtTheEndAreCountedAcrossChunks) {
  const std::string head = std::string(kReadHeader) + "\n" + ReadEntryLine(1, "a") + "\n";
  // After a newline.
  std::string whole = SameInEveryChunking(head + std::string(300, '\0'));
  EXPECT_NE(whole.find("warning s.jsonl: skipped 300 bytes of zero bytes (NUL) at its end, after "
                       "byte " +
                       std::to_string(head.size()) + ":"),
            std::string::npos)
      << whole;
  EXPECT_NE(whole.find("valid " + std::to_string(head.size())), std::string::npos) << whole;
  EXPECT_NE(whole.find("\"text\":\"a\""), std::string::npos) << whole;
  // After a torn line: both are told, the zeros first.
  whole = SameInEveryChunking(head + "{\"type\":\"mess" + std::string(50, '\0'));
  const size_t zeros = whole.find("skipped 50 bytes of zero bytes (NUL) at its end, after byte " +
                                  std::to_string(head.size() + 13));
  const size_t torn = whole.find("s.jsonl:3: skipped a torn last line (13 bytes)");
  ASSERT_NE(zeros, std::string::npos) << whole;
  ASSERT_NE(torn, std::string::npos) << whole;
  EXPECT_LT(zeros, torn);
  // After a whole last line without its newline: it stands.
  const std::string last = ReadEntryLine(2, "b");
  whole = SameInEveryChunking(head + last + std::string(20, '\0'));
  EXPECT_NE(whole.find("\"text\":\"b\""), std::string::npos) << whole;
  EXPECT_NE(whole.find("valid " + std::to_string(head.size() + last.size())), std::string::npos)
      << whole;
  // Nothing but zeros: no header.
  EXPECT_EQ(SameInEveryChunking(std::string(100, '\0')),
            "error LOUSHO_SESSION_FILE: s.jsonl: no session header");
}

TEST(SessionReadTest, ZeroBytesWithMoreAfterThemBelongToTheirLine) {
  const std::string head = std::string(kReadHeader) + "\n" + ReadEntryLine(1, "a") + "\n";
  // Zeros, then a newline and more lines: a malformed line 3, not a tail.
  std::string whole =
      SameInEveryChunking(head + std::string(30, '\0') + "\n" + ReadEntryLine(2, "b") + "\n");
  EXPECT_EQ(whole.rfind("error LOUSHO_SESSION_FILE: s.jsonl:3: ", 0), 0u) << whole;
  // Zeros inside the last line, then more of it: the line holds them (not JSON: torn, its whole
  // length told).
  whole = SameInEveryChunking(head + "{\"a\":" + std::string(30, '\0') + "1");
  EXPECT_NE(whole.find("s.jsonl:3: skipped a torn last line (36 bytes)"), std::string::npos)
      << whole;
  EXPECT_EQ(whole.find("zero bytes"), std::string::npos) << whole;
}

TEST(SessionReadTest, ALineOverTheLimitIsCountedToItsEndAcrossChunks) {
  const std::string head = std::string(kReadHeader) + "\n";
  const std::string entry = ReadEntryLine(1, "a") + "\n";
  const std::string over =
      "error LOUSHO_SESSION_FILE: s.jsonl:2: a line of 4.0 KiB (4097 bytes), more than the 4 KiB "
      "a session file line may hold; lousho writes none that long, so the file was changed by "
      "something else: it is left as it is";
  // In the middle, in the last line, and made of zeros followed by a newline.
  EXPECT_EQ(SameInEveryChunking(head + std::string(4097, 'x') + "\n" + entry, 4096), over);
  EXPECT_EQ(SameInEveryChunking(head + std::string(4097, 'x'), 4096), over);
  EXPECT_EQ(SameInEveryChunking(head + std::string(4097, '\0') + "\n" + entry, 4096), over);
  // Its whole length is told, however far past the limit it runs.
  const std::string far = SameInEveryChunking(head + std::string(6000, 'x') + "\n" + entry, 4096);
  EXPECT_EQ(far.rfind("error LOUSHO_SESSION_FILE: s.jsonl:2: a line of 5.9 KiB, more than", 0), 0u)
      << far;
  // At the limit: read (and refused as the malformed line it is, not as a long one).
  const std::string fits = SameInEveryChunking(head + std::string(4096, 'x') + "\n" + entry, 4096);
  EXPECT_EQ(fits.rfind("error LOUSHO_SESSION_FILE: s.jsonl:2: ", 0), 0u) << fits;
  EXPECT_EQ(fits.find("a line of"), std::string::npos) << fits;
  // Zeros at the end do not count: they are no line's.
  const std::string tail = SameInEveryChunking(head + entry + std::string(5000, '\0'), 4096);
  EXPECT_NE(tail.find("skipped 4.9 KiB of zero bytes"), std::string::npos) << tail;
}

TEST(SessionReadTest, AnEmptyOrBlankFileHasNoHeader) {
  EXPECT_EQ(SameInEveryChunking(""), "error LOUSHO_SESSION_FILE: s.jsonl: no session header");
  EXPECT_EQ(SameInEveryChunking("\n \r\n\t\n"),
            "error LOUSHO_SESSION_FILE: s.jsonl: no session header");
  // Blank lines before the header are skipped; the header's line number is its own.
  const std::string text = "\n\n" + std::string(kReadHeader) + "\n" + ReadEntryLine(1, "a") + "\n";
  const std::string whole = SameInEveryChunking(text);
  EXPECT_NE(whole.find("valid " + std::to_string(text.size())), std::string::npos) << whole;
  EXPECT_EQ(SameInEveryChunking("\n\n{\"type\":\"session\"\n" + ReadEntryLine(1, "a") + "\n")
                .rfind("error LOUSHO_SESSION_FILE: s.jsonl:3: ", 0),
            0u);
}

TEST(SessionReadTest, AFileReadInTinyChunksGivesWhatOneReadGives) {
  const fs::path path =
      fs::temp_directory_path() / ("lousho-read-tiny-" + std::to_string(getpid()) + ".jsonl");
  std::string text = std::string(kReadHeader) + "\n";
  for (int i = 1; i <= 20; ++i)
    text += ReadEntryLine(i, std::string(static_cast<size_t>(i) * 13, 'q')) + "\n";
  text += "{\"type\":\"mes";
  text.append(77, '\0');
  std::ofstream(path, std::ios::binary) << text;
  const std::string whole = ReadOutcome(ReadSessionFile(path));
  for (size_t chunk : {1, 3, 17, 64})
    EXPECT_EQ(ReadOutcome(ReadSessionFile(path, chunk)), whole) << "chunks of " << chunk;
  fs::remove(path);
  EXPECT_NE(whole.find("skipped 77 bytes of zero bytes"), std::string::npos) << whole;
  EXPECT_NE(whole.find(".jsonl:22: skipped a torn last line (12 bytes)"), std::string::npos)
      << whole;
}

}  // namespace
}  // namespace lousho::agent
