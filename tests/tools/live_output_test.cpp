// Tests of LiveOutput: a running command's output handed on throttled, capped like the result,
// with every byte in exactly one delta. Time is given, never waited for.
#include "agent/tools/live_output.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lousho::agent::tools {
namespace {
using std::chrono::milliseconds;
using Clock = LiveOutput::Clock;

struct Handoff {
  std::string shown;
  std::string delta;
};

struct Recorder {
  std::vector<Handoff> got;
  LiveOutput::Sink sink() {
    return [this](const std::string& shown, const std::string& delta) {
      got.push_back({shown, delta});
    };
  }
};

constexpr OutputCap kCap{1000, 10};
const Clock::time_point t0 = Clock::now();

TEST(LiveOutputTest, FirstPieceAtOnceThenAtMostOncePerInterval) {
  Recorder r;
  LiveOutput live(kCap, milliseconds(100), r.sink());
  live.Append("one\n", t0);
  ASSERT_EQ(r.got.size(), 1u);  // the first piece is not held back
  EXPECT_EQ(r.got[0].shown, "one");
  EXPECT_EQ(r.got[0].delta, "one\n");
  live.Append("two\n", t0 + milliseconds(10));
  live.Append("three\n", t0 + milliseconds(50));
  live.Tick(t0 + milliseconds(99));
  EXPECT_EQ(r.got.size(), 1u);  // within the interval: held
  live.Tick(t0 + milliseconds(100));
  ASSERT_EQ(r.got.size(), 2u);  // no output came, the tick hands it on
  EXPECT_EQ(r.got[1].shown, "one\ntwo\nthree");
  EXPECT_EQ(r.got[1].delta, "two\nthree\n");
  live.Tick(t0 + milliseconds(500));
  EXPECT_EQ(r.got.size(), 2u);  // nothing waits: nothing to hand on
  live.Append("four\n", t0 + milliseconds(600));
  ASSERT_EQ(r.got.size(), 3u);  // the interval is over: at once
  EXPECT_EQ(r.got[2].delta, "four\n");
  live.Append("five\n", t0 + milliseconds(610));
  live.Flush();
  ASSERT_EQ(r.got.size(), 4u);  // the end hands on what waits
  EXPECT_EQ(r.got[3].delta, "five\n");
  EXPECT_EQ(r.got[3].shown, "one\ntwo\nthree\nfour\nfive");
  live.Flush();
  EXPECT_EQ(r.got.size(), 4u);
}

TEST(LiveOutputTest, ShownOutputIsCappedAsTheResultIs) {
  Recorder r;
  LiveOutput live(kCap, milliseconds(100), r.sink());
  std::string all;
  for (int i = 1; i <= 25; ++i) all += std::to_string(i) + "\n";
  live.Append(all, t0);
  ASSERT_EQ(r.got.size(), 1u);
  EXPECT_EQ(r.got[0].shown, CappedOutput(all, false, kCap, nullptr));
  EXPECT_EQ(r.got[0].shown,
            "[Output truncated: showing the last 10 lines of 25]\n"
            "16\n17\n18\n19\n20\n21\n22\n23\n24\n25");
  // Far more than the cap: the tail is kept, the cut said, and the total is no longer known.
  std::string line(99, 'x');
  for (int i = 0; i < 100; ++i) live.Append(line + "\n", t0 + milliseconds(1));
  live.Append("last\n", t0 + milliseconds(1));
  live.Flush();
  ASSERT_EQ(r.got.size(), 2u);
  EXPECT_EQ(r.got[1].shown.rfind("[Output truncated: showing the last 10 lines]\n", 0), 0u)
      << r.got[1].shown;
  EXPECT_EQ(r.got[1].shown.substr(r.got[1].shown.size() - 5), "\nlast");
  EXPECT_LE(r.got[1].shown.size(), kCap.max_bytes + 64);
}

TEST(LiveOutputTest, ADeltaTooLargeKeepsItsTailAndSaysWhatWasLeftOut) {
  Recorder r;
  LiveOutput live(kCap, milliseconds(100), r.sink());
  live.Append("start\n", t0);
  std::string block;
  for (int i = 0; i < 5000; ++i) block += static_cast<char>('a' + i % 26);
  live.Append(block, t0 + milliseconds(1));
  live.Append("end\n", t0 + milliseconds(2));
  live.Flush();
  ASSERT_EQ(r.got.size(), 2u);
  const std::string& d = r.got[1].delta;
  const std::string pending = block + "end\n";
  const std::string note_end = " bytes of output not shown …]\n";
  const size_t note = d.find(note_end);
  ASSERT_NE(note, std::string::npos) << d.substr(0, 80);
  const std::string kept = d.substr(note + note_end.size());
  EXPECT_EQ(kept.size(), kCap.max_bytes);
  EXPECT_EQ(kept, pending.substr(pending.size() - kept.size()));  // the tail, unchanged
  const std::string skipped = std::to_string(pending.size() - kept.size());
  EXPECT_EQ(d.rfind("[… " + skipped + note_end, 0), 0u) << d.substr(0, 80);
}

TEST(LiveOutputTest, ASplitUtf8SequenceWaitsForItsEnd) {
  Recorder r;
  LiveOutput live(kCap, milliseconds(100), r.sink());
  live.Append("caf\xC3", t0);
  ASSERT_EQ(r.got.size(), 1u);
  EXPECT_EQ(r.got[0].delta, "caf");
  EXPECT_EQ(r.got[0].shown, "caf");
  live.Append("\xA9!", t0 + milliseconds(200));
  ASSERT_EQ(r.got.size(), 2u);
  EXPECT_EQ(r.got[1].delta, "\xC3\xA9!");
  EXPECT_EQ(r.got[1].shown, "caf\xC3\xA9!");
  // Only the start of a sequence waiting: nothing to hand on until the end, then it goes.
  live.Append("\xE2\x82", t0 + milliseconds(400));
  EXPECT_EQ(r.got.size(), 2u);
  live.Flush();
  ASSERT_EQ(r.got.size(), 3u);
  EXPECT_EQ(r.got[2].delta, "\xE2\x82");
}

TEST(LiveOutputTest, EveryByteIsInExactlyOneDelta) {
  Recorder r;
  LiveOutput live(OutputCap{1 << 20, 1 << 20}, milliseconds(100), r.sink());
  std::string all;
  for (int i = 0; i < 300; ++i) {
    const std::string piece = "line " + std::to_string(i) + " é\n";
    all += piece;
    live.Append(piece.substr(0, 7), t0 + milliseconds(i * 7));
    live.Append(piece.substr(7), t0 + milliseconds(i * 7 + 3));
    if (i % 11 == 0) live.Tick(t0 + milliseconds(i * 7 + 5));
  }
  live.Flush();
  std::string joined;
  for (const auto& h : r.got) joined += h.delta;
  EXPECT_EQ(joined, all);
  EXPECT_LT(r.got.size(), 300u * 7 / 100 + 2);  // about one a 100 ms of the 2.1 s
  EXPECT_EQ(r.got.back().shown + "\n", all);
}

}  // namespace
}  // namespace lousho::agent::tools
