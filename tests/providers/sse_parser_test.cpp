// Tests of the incremental SSE parser, feeding byte-exact streams split at every offset.
#include "agent/providers/sse_parser.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lousho::agent {
namespace {

std::vector<SseEvent> ParseWhole(const std::string& bytes) {
  SseParser p;
  std::vector<SseEvent> out;
  p.Feed(bytes, &out);
  return out;
}

// Feeds `bytes` in two pieces split at every offset, and in three pieces at every pair of
// offsets when short, and checks every split yields the same events as one feed.
void ExpectSplitInvariant(const std::string& bytes, const std::vector<SseEvent>& expected) {
  for (size_t i = 0; i <= bytes.size(); ++i) {
    SseParser p;
    std::vector<SseEvent> out;
    p.Feed(std::string_view(bytes).substr(0, i), &out);
    p.Feed(std::string_view(bytes).substr(i), &out);
    ASSERT_EQ(out.size(), expected.size()) << "split at " << i;
    for (size_t k = 0; k < out.size(); ++k) {
      EXPECT_EQ(out[k].event, expected[k].event) << "split at " << i;
      EXPECT_EQ(out[k].data, expected[k].data) << "split at " << i;
      EXPECT_EQ(out[k].id, expected[k].id) << "split at " << i;
    }
  }
  if (bytes.size() <= 120) {
    for (size_t i = 0; i <= bytes.size(); ++i) {
      for (size_t j = i; j <= bytes.size(); ++j) {
        SseParser p;
        std::vector<SseEvent> out;
        p.Feed(std::string_view(bytes).substr(0, i), &out);
        p.Feed(std::string_view(bytes).substr(i, j - i), &out);
        p.Feed(std::string_view(bytes).substr(j), &out);
        ASSERT_EQ(out.size(), expected.size()) << "split at " << i << "," << j;
        for (size_t k = 0; k < out.size(); ++k) {
          EXPECT_EQ(out[k].data, expected[k].data) << "split at " << i << "," << j;
        }
      }
    }
  }
  // One byte at a time.
  SseParser p;
  std::vector<SseEvent> out;
  for (char c : bytes) p.Feed(std::string_view(&c, 1), &out);
  ASSERT_EQ(out.size(), expected.size());
  for (size_t k = 0; k < out.size(); ++k) EXPECT_EQ(out[k].data, expected[k].data);
}

TEST(SseParserTest, OpenAiCaptureLf) {
  const std::string bytes =
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello fr\"}}]}\n\n"
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":11}}\n\n"
      "data: [DONE]\n\n";
  auto events = ParseWhole(bytes);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].data, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello fr\"}}]}");
  EXPECT_EQ(events[0].event, "");
  EXPECT_EQ(events[2].data, "[DONE]");
  ExpectSplitInvariant(bytes, events);
}

TEST(SseParserTest, AllLineEndings) {
  for (const std::string eol : {"\n", "\r\n", "\r"}) {
    const std::string bytes = "event: message_start" + eol + "data: {\"a\":1}" + eol + eol +
                              "event: ping" + eol + "data: {\"type\": \"ping\"}" + eol + eol;
    auto events = ParseWhole(bytes);
    ASSERT_EQ(events.size(), 2u) << "eol " << eol.size();
    EXPECT_EQ(events[0].event, "message_start");
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_EQ(events[1].event, "ping");
    EXPECT_EQ(events[1].data, "{\"type\": \"ping\"}");
    ExpectSplitInvariant(bytes, events);
  }
}

TEST(SseParserTest, CrAtChunkEndThenLfIsOneLineEnd) {
  SseParser p;
  std::vector<SseEvent> out;
  p.Feed("data: a\r", &out);
  p.Feed("\ndata: b\r", &out);
  EXPECT_TRUE(out.empty());  // "\r\n" is one line end, not a blank line
  p.Feed("\n\r\n", &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "a\nb");
}

TEST(SseParserTest, CommentsKeepAlivesAndMultiLineData) {
  const std::string bytes =
      ": OPENROUTER PROCESSING\n\n"
      ":keep-alive\r\n"
      "id: 7\n"
      "event: delta\n"
      "data: line one\n"
      "data:line two\n"
      "data:  two spaces\n"
      "data\n"
      "retry: 3000\n"
      "unknown: field\n"
      "\n"
      ": trailing comment\n";
  auto events = ParseWhole(bytes);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "delta");
  EXPECT_EQ(events[0].id, "7");
  EXPECT_EQ(events[0].data, "line one\nline two\n two spaces\n");
  ExpectSplitInvariant(bytes, events);
  SseParser p;
  std::vector<SseEvent> out;
  p.Feed(bytes, &out);
  EXPECT_EQ(p.retry_ms(), 3000);
}

TEST(SseParserTest, EventWithoutDataIsNotDispatchedAndIdIsSticky) {
  const std::string bytes = "event: lonely\n\nid: 42\ndata: x\n\ndata: y\n\n";
  auto events = ParseWhole(bytes);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event, "");  // the name of the data-less event does not leak
  EXPECT_EQ(events[0].id, "42");
  EXPECT_EQ(events[1].id, "42");
  EXPECT_EQ(events[1].data, "y");
}

TEST(SseParserTest, Utf8SplitAcrossFeedsStaysIntact) {
  // "héllo → 世界 🎉" as UTF-8; every split falls inside some multi-byte sequence at least once.
  const std::string text = "h\xC3\xA9llo \xE2\x86\x92 \xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x8E\x89";
  const std::string bytes = "data: {\"t\":\"" + text + "\"}\r\n\r\n";
  auto events = ParseWhole(bytes);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "{\"t\":\"" + text + "\"}");
  ExpectSplitInvariant(bytes, events);
}

TEST(SseParserTest, BomSkippedAtStartOnly) {
  auto events = ParseWhole(
      "\xEF\xBB\xBF"
      "data: a\n\n");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "a");
}

TEST(SseParserTest, TruncatedEventIsPendingNotDispatched) {
  SseParser p;
  std::vector<SseEvent> out;
  p.Feed("data: {\"partial\":", &out);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(p.HasPendingData());
  p.Feed("1}\n", &out);
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(p.HasPendingData());
  p.Feed("\n", &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(p.HasPendingData());
}

}  // namespace
}  // namespace lousho::agent
