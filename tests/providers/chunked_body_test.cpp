// Tests of the chunked transfer coding decoder: whole bodies split at every point, extensions,
// trailers, and what it says of malformed or cut bodies.
#include "support/http/chunked_body.h"

#include <gtest/gtest.h>

#include <string>

namespace lousho::agent {
namespace {

// Feeds `body` in two pieces split at `split`; returns the data, or "ERROR: ..." on failure.
std::string Decode(const std::string& body, size_t split, ChunkedDecoder* d) {
  std::string out;
  if (!d->Feed(std::string_view(body).substr(0, split), &out)) return "ERROR: " + d->error();
  if (!d->Feed(std::string_view(body).substr(split), &out)) return "ERROR: " + d->error();
  return out;
}

TEST(ChunkedDecoderTest, WholeBodiesAtEverySplitPoint) {
  const std::string body =
      "5\r\nhello\r\n"
      "1;name=value\r\n,\r\n"  // an extension
      "A \r\n0123456789\r\n"   // upper-case hex and whitespace before the line end
      "6\n world\n"            // bare line feeds
      "0\r\nX-Trailer: 1\r\n\r\n";
  for (size_t split = 0; split <= body.size(); ++split) {
    ChunkedDecoder d;
    EXPECT_EQ(Decode(body, split, &d), "hello,0123456789 world") << "split at " << split;
    EXPECT_TRUE(d.done()) << split;
    EXPECT_EQ(d.WhereCut(), "");
  }
  // Byte by byte, and what follows the body is not data.
  ChunkedDecoder d;
  std::string out;
  for (char c : body + "GARBAGE") ASSERT_TRUE(d.Feed(std::string_view(&c, 1), &out));
  EXPECT_EQ(out, "hello,0123456789 world");
}

TEST(ChunkedDecoderTest, MalformedFramingSaysWhat) {
  struct Case {
    std::string body;
    std::string error;
  };
  const Case cases[] = {
      {"zzzz\r\nnot hex\r\n", "the chunk size line 'zzzz' is not a hexadecimal size"},
      {"5x\r\nhello\r\n", "the chunk size line '5x' is not a hexadecimal size"},
      {"\r\n", "the chunk size line '' is not a hexadecimal size"},
      {"\x01\x02\r\n", "the chunk size line '\\x01\\x02' is not a hexadecimal size"},
      {"3\r\nhello\r\n", "chunk 1 holds more than the 3 bytes its size line announced"},
      {"2\r\nab\r\n3\r\nabc\r\r", "chunk 2 holds more than the 3 bytes its size line announced"},
      {"1000000000000000000\r\n", "the chunk size '1000000000000000000' is too large"},
      {std::string(ChunkedDecoder::kMaxLineBytes + 1, '1'),
       "a chunk size line is longer than 4096 bytes"},
      {"0\r\n" + std::string(ChunkedDecoder::kMaxTrailerBytes, 'x'),
       "the trailer after the last chunk is longer than 65536 bytes"},
  };
  for (const auto& c : cases) {
    ChunkedDecoder d;
    std::string out;
    EXPECT_FALSE(d.Feed(c.body, &out)) << c.body.substr(0, 40);
    EXPECT_TRUE(d.failed());
    EXPECT_EQ(d.error(), c.error);
    EXPECT_FALSE(d.Feed("0\r\n\r\n", &out)) << "a failed decoder stays failed";
  }
}

TEST(ChunkedDecoderTest, WhereACutBodyEnds) {
  struct Case {
    std::string body;
    std::string where;
  };
  const Case cases[] = {
      {"", "before the first chunk"},
      {"5", "before the first chunk"},
      {"5\r\nhel", "inside chunk 1, 3 of its 5 bytes read"},
      {"5\r\nhello", "at the end of chunk 1"},
      {"5\r\nhello\r\n", "after 1 chunk(s), before the last one"},
      {"5\r\nhello\r\n0\r\n", "in the trailer after the last chunk"},
  };
  for (const auto& c : cases) {
    ChunkedDecoder d;
    std::string out;
    ASSERT_TRUE(d.Feed(c.body, &out)) << c.body;
    EXPECT_FALSE(d.done());
    EXPECT_EQ(d.WhereCut(), c.where) << c.body;
  }
}

// The reader hands the data on chunk by chunk (a stream's events as the server sent them): the
// decoder says where each chunk's data ends, also when a chunk is split across reads.
TEST(ChunkedDecoderTest, SaysWhereEachChunksDataEnds) {
  ChunkedDecoder d;
  std::string out;
  std::vector<size_t> ends;
  ASSERT_TRUE(d.Feed("3\r\nabc\r\n2\r\nde\r\n4\r\nfg", &out, &ends));
  EXPECT_EQ(out, "abcdefg");
  EXPECT_EQ(ends, (std::vector<size_t>{3, 5}));  // the third chunk is not whole yet
  out.clear();
  ends.clear();
  ASSERT_TRUE(d.Feed("hi\r\n0\r\n\r\n", &out, &ends));
  EXPECT_EQ(out, "hi");
  EXPECT_EQ(ends, (std::vector<size_t>{2}));
  EXPECT_TRUE(d.done());
}

}  // namespace
}  // namespace lousho::agent
