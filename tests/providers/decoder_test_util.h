// Test helpers: run a StreamDecoder over raw SSE bytes, whole or split at given offsets.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "agent/providers/stream_decoder.h"
#include "support/http/sse_parser.h"
#include "support/json_util.h"

namespace lousho::agent::testing {

struct DecodeRun {
  std::vector<StreamDelta> deltas;
  Status status;
  bool done = false;
  bool complete = false;
  Message message;
};

// Feeds `bytes` in pieces cut at `cuts` (ascending offsets) through a parser into `decoder`.
inline DecodeRun RunDecoder(StreamDecoder& decoder, const std::string& bytes,
                            const std::vector<size_t>& cuts = {}, int stop_after = -1) {
  DecodeRun run;
  SseParser parser;
  DeltaCallback emit = [&](const StreamDelta& d) {
    run.deltas.push_back(d);
    return stop_after < 0 || static_cast<int>(run.deltas.size()) < stop_after;
  };
  size_t prev = 0;
  std::vector<size_t> all = cuts;
  all.push_back(bytes.size());
  for (size_t cut : all) {
    std::vector<SseEvent> events;
    Status fed = parser.Feed(std::string_view(bytes).substr(prev, cut - prev), &events);
    prev = cut;
    for (const auto& ev : events) {
      if (!run.status.ok() || decoder.aborted()) break;
      run.status = decoder.Consume(ev, emit);
    }
    if (run.status.ok() && !fed.ok()) run.status = fed;
  }
  run.done = decoder.done();
  run.complete = decoder.complete();
  run.message = decoder.TakeMessage(decoder.aborted() || !run.complete);
  return run;
}

inline std::string DeltaString(const std::vector<StreamDelta>& deltas) {
  std::string out;
  for (const auto& d : deltas) {
    switch (d.kind) {
      case DeltaKind::kText:
        out += "T" + std::to_string(d.index) + ":" + d.text + "|";
        break;
      case DeltaKind::kThinking:
        out += "R" + std::to_string(d.index) + ":" + d.text + "|";
        break;
      case DeltaKind::kToolCallStart:
        out += "S" + std::to_string(d.index) + ":" + d.id + "/" + d.name + "|";
        break;
      case DeltaKind::kToolCallArgs:
        out += "A" + std::to_string(d.index) + ":" + d.text + "|";
        break;
      case DeltaKind::kToolCallEnd:
        out += "E" + std::to_string(d.index) + ":" + d.text + "|";
        break;
      case DeltaKind::kServerToolStart:
        out += "W" + std::to_string(d.index) + ":" + d.id + "/" + d.name + ":" + d.text + "|";
        break;
      case DeltaKind::kServerToolEnd:
        out += "Z" + std::to_string(d.index) + ":" + d.id + "|";
        break;
      case DeltaKind::kTextStart:  // the engine's, never a decoder's
      case DeltaKind::kTextEnd:
      case DeltaKind::kThinkingStart:
      case DeltaKind::kThinkingEnd:
        out += "B" + std::to_string(d.index) + "|";
        break;
    }
  }
  return out;
}

// Concatenates text deltas per kind so splits (which never change delta contents here, since
// events are atomic) can be compared exactly.
template <typename MakeDecoder>
void ExpectSameAtEverySplit(const std::string& bytes, MakeDecoder make) {
  auto whole_decoder = make();
  DecodeRun whole = RunDecoder(*whole_decoder, bytes);
  ASSERT_TRUE(whole.status.ok()) << whole.status.error().ToString();
  std::string expected = DeltaString(whole.deltas);
  std::string expected_msg_text = whole.message.TextContent();
  for (size_t i = 0; i <= bytes.size(); ++i) {
    auto d = make();
    DecodeRun run = RunDecoder(*d, bytes, {i});
    ASSERT_TRUE(run.status.ok()) << "split " << i;
    ASSERT_EQ(DeltaString(run.deltas), expected) << "split " << i;
    ASSERT_EQ(run.message.TextContent(), expected_msg_text) << "split " << i;
    ASSERT_EQ(run.message.content.size(), whole.message.content.size()) << "split " << i;
    ASSERT_EQ(run.message.stop_reason, whole.message.stop_reason) << "split " << i;
    ASSERT_EQ(run.message.usage().output, whole.message.usage().output) << "split " << i;
  }
}

}  // namespace lousho::agent::testing
