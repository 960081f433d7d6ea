// Tests of the incremental SSE parser, feeding byte-exact streams split at every offset.
#include "support/http/sse_parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace lousho::agent {
namespace {

std::vector<SseEvent> ParseWhole(const std::string& bytes) {
  SseParser p;
  std::vector<SseEvent> out;
  EXPECT_TRUE(p.Feed(bytes, &out).ok());
  return out;
}

// Feeds `bytes` in two pieces split at every offset, and in three pieces at every pair of
// offsets when short, and checks every split yields the same events as one feed.
void ExpectSplitInvariant(const std::string& bytes, const std::vector<SseEvent>& expected) {
  for (size_t i = 0; i <= bytes.size(); ++i) {
    SseParser p;
    std::vector<SseEvent> out;
    EXPECT_TRUE(p.Feed(std::string_view(bytes).substr(0, i), &out).ok());
    EXPECT_TRUE(p.Feed(std::string_view(bytes).substr(i), &out).ok());
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
        EXPECT_TRUE(p.Feed(std::string_view(bytes).substr(0, i), &out).ok());
        EXPECT_TRUE(p.Feed(std::string_view(bytes).substr(i, j - i), &out).ok());
        EXPECT_TRUE(p.Feed(std::string_view(bytes).substr(j), &out).ok());
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
  for (char c : bytes) EXPECT_TRUE(p.Feed(std::string_view(&c, 1), &out).ok());
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

// The three line ends mixed in one stream: a "\r" before the next "\n" ends its own line, and a
// "\r" after a "\n" belongs to a later line.
TEST(SseParserTest, MixedLineEndsInOneFeed) {
  const std::string bytes =
      "data: a\rdata: b\n\ndata: c\n\r"
      "event: e\r\ndata: d\rdata: e\r\r";
  auto events = ParseWhole(bytes);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].data, "a\nb");
  EXPECT_EQ(events[1].data, "c");
  EXPECT_EQ(events[2].event, "e");
  EXPECT_EQ(events[2].data, "d\ne");
  ExpectSplitInvariant(bytes, events);
}

TEST(SseParserTest, CrAtChunkEndThenLfIsOneLineEnd) {
  SseParser p;
  std::vector<SseEvent> out;
  EXPECT_TRUE(p.Feed("data: a\r", &out).ok());
  EXPECT_TRUE(p.Feed("\ndata: b\r", &out).ok());
  EXPECT_TRUE(out.empty());  // "\r\n" is one line end, not a blank line
  EXPECT_TRUE(p.Feed("\n\r\n", &out).ok());
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
  EXPECT_TRUE(p.Feed(bytes, &out).ok());
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
  EXPECT_TRUE(p.Feed("data: {\"partial\":", &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(p.HasPendingData());
  EXPECT_TRUE(p.Feed("1}\n", &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(p.HasPendingData());
  EXPECT_TRUE(p.Feed("\n", &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(p.HasPendingData());
}

// Feeds `stream` in `chunk`-byte pieces until the parser fails, checking after every feed that
// it holds no more than `held_cap`. Returns how many bytes were fed (the whole stream when it
// never failed) and the failure.
struct CapRun {
  size_t fed = 0;
  Status status;
  size_t most_held = 0;
};
CapRun FeedUntilFailure(SseParser& p, const std::string& stream, size_t chunk) {
  CapRun run;
  std::vector<SseEvent> out;
  for (size_t off = 0; off < stream.size(); off += chunk) {
    run.status = p.Feed(std::string_view(stream).substr(off, chunk), &out);
    run.fed = std::min(off + chunk, stream.size());
    run.most_held = std::max(run.most_held, p.buffered_bytes());
    if (!run.status.ok()) break;
  }
  return run;
}

void ExpectBadResponse(const Status& s, const std::string& what) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kProviderBadResponse);
  EXPECT_FALSE(s.error().retryable);
  EXPECT_NE(s.error().message.find(what), std::string::npos) << s.error().message;
}

TEST(SseParserTest, DefaultCapsAreSixteenMiB) {
  SseParserOptions defaults;
  EXPECT_EQ(defaults.max_line_bytes, 16u * 1024 * 1024);
  EXPECT_EQ(defaults.max_event_bytes, 16u * 1024 * 1024);
  EXPECT_EQ(defaults.max_line_bytes, kSseMaxLineBytes);
  EXPECT_EQ(defaults.max_event_bytes, kSseMaxEventBytes);
}

TEST(SseParserTest, OverCapLineFailsWithoutBufferingPastTheCap) {
  SseParserOptions o;
  o.max_line_bytes = 1000;
  o.max_event_bytes = 100000;
  SseParser p(o);
  const size_t chunk = 64;
  CapRun run = FeedUntilFailure(p, "data: " + std::string(50000, 'x'), chunk);
  ExpectBadResponse(run.status, "line over the limit of 1000 bytes");
  EXPECT_LE(run.fed, o.max_line_bytes + chunk);
  EXPECT_LE(run.most_held, o.max_line_bytes);
  EXPECT_EQ(p.buffered_bytes(), 0u);  // released at the failure
  EXPECT_TRUE(p.failed());
  // The parser stays failed: a newline now does not turn the dropped bytes into an event.
  std::vector<SseEvent> out;
  ExpectBadResponse(p.Feed("\n\ndata: ok\n\n", &out), "line over the limit");
  EXPECT_TRUE(out.empty());
}

TEST(SseParserTest, OverCapLineInOneFeedFails) {
  SseParserOptions o;
  o.max_line_bytes = 1000;
  SseParser p(o);
  std::vector<SseEvent> out;
  ExpectBadResponse(p.Feed("data: " + std::string(2000, 'x') + "\n\n", &out), "line over");
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(p.buffered_bytes(), 0u);
  // A line of exactly the cap is fine.
  SseParser q(o);
  ASSERT_TRUE(q.Feed("data: " + std::string(994, 'x') + "\n\n", &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data.size(), 994u);
}

TEST(SseParserTest, OverCapEventFailsWithoutBufferingPastTheCap) {
  SseParserOptions o;
  o.max_line_bytes = 1000;
  o.max_event_bytes = 5000;
  SseParser p(o);
  // Many short data lines of one event that never ends.
  std::string stream;
  while (stream.size() < 100000) stream += "data: " + std::string(90, 'y') + "\n";
  const size_t chunk = 97;  // not a multiple of the line length
  CapRun run = FeedUntilFailure(p, stream, chunk);
  ExpectBadResponse(run.status, "event over the limit of 5000 bytes");
  // The pending data is at most the event cap, the unfinished line at most one line.
  EXPECT_LE(run.fed, o.max_event_bytes + o.max_line_bytes + chunk);
  EXPECT_LE(run.most_held, o.max_event_bytes + o.max_line_bytes);
  EXPECT_EQ(p.buffered_bytes(), 0u);
}

TEST(SseParserTest, EventsBeforeTheOverCapLineAreStillDelivered) {
  SseParserOptions o;
  o.max_line_bytes = 100;
  SseParser p(o);
  std::vector<SseEvent> out;
  Status s = p.Feed("data: one\n\ndata: two\n\ndata: " + std::string(200, 'z'), &out);
  ExpectBadResponse(s, "line over");
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].data, "two");
}

TEST(SseParserTest, LongStickyIdFails) {
  SseParser p;
  std::vector<SseEvent> out;
  ASSERT_TRUE(p.Feed("id: " + std::string(kSseMaxIdBytes, '1') + "\ndata: a\n\n", &out).ok());
  ASSERT_EQ(out.size(), 1u);
  ExpectBadResponse(p.Feed("id: " + std::string(kSseMaxIdBytes + 1, '1') + "\n", &out),
                    "id over the limit");
}

// The default cap with a real-size stream: a line without an end stops the parser at 16 MiB.
TEST(SseParserTest, DefaultLineCapHoldsAtSixteenMiB) {
  SseParser p;
  const size_t chunk = size_t{64} * 1024;
  const std::string piece(chunk, 'x');
  std::vector<SseEvent> out;
  Status s = p.Feed("data: ", &out);
  size_t fed = 6;
  size_t most_held = 0;
  while (s.ok() && fed < kSseMaxLineBytes + 4 * chunk) {
    s = p.Feed(piece, &out);
    fed += chunk;
    most_held = std::max(most_held, p.buffered_bytes());
  }
  ExpectBadResponse(s, "line over the limit of 16777216 bytes");
  EXPECT_LE(fed, kSseMaxLineBytes + chunk);
  EXPECT_LE(most_held, kSseMaxLineBytes);
}

}  // namespace
}  // namespace lousho::agent
